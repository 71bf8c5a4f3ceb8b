package framework

import (
	"net/http"
	"strings"
	"testing"
)

func resp(code int, body string, warnings ...string) *Response {
	h := http.Header{}
	for _, w := range warnings {
		h.Add("Warning", `299 - "`+w+`"`)
	}
	return &Response{Code: code, Header: h, Body: []byte(body), Method: "GET",
		URL: "https://127.0.0.1:6443/api/v1/namespaces/ns/configmaps?resourceVersion=12&resourceVersionMatch=Exact"}
}

const gone = `{"kind":"Status","apiVersion":"v1","status":"Failure","code":410,"reason":"Expired"}`

func TestHelperVerdicts(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"status code", statusVerdict(resp(200, `{"kind":"ConfigMapList"}`), 410, "Gone"), "expected 410 Gone, got 200 OK"},
		{"status reason", statusVerdict(resp(410, gone), 410, "Gone"), `expected 410 Gone, got 410 with reason "Expired"`},
		{"status kind", statusVerdict(resp(410, `{}`), 410, "Gone"), `expected a v1 Status object with 410 Gone, got kind "" apiVersion ""`},
		{"status ok", statusVerdict(resp(410, gone), 410, "Expired"), ""},
		{"status got Status", statusVerdict(resp(422, `{"kind":"Status","reason":"Invalid"}`), 400, "BadRequest"), "expected 400 BadRequest, got 422 Invalid"},
		{"code", codeVerdict(resp(409, ``), 200, 201), "expected 200 OK or 201 Created, got 409 Conflict"},
		{"code ok", codeVerdict(resp(201, ``), 200, 201), ""},
		{"warning none", warningVerdict(resp(201, ``), `unknown field "spec"`), `expected a Warning header "unknown field \"spec\"", got none`},
		{"warning other", warningVerdict(resp(201, ``, "x"), "y"), `expected a Warning header "y", got ["x"]`},
		{"warning ok", warningVerdict(resp(201, ``, `unknown field "spec"`), "unknown field"), ""},
		{"field", fieldVerdict(resp(200, `{"metadata":{"remainingItemCount":3}}`), "metadata.remainingItemCount", "2"), `expected metadata.remainingItemCount = "2", got "3"`},
		{"warnings none", warningsVerdict(resp(201, ``), `unknown field "bogus"`), `expected Warning header(s) ["unknown field \"bogus\""], got none`},
		{"warnings ok", warningsVerdict(resp(201, ``, "b", "a"), "a", "b"), ""},
		{"warnings extra", warningsVerdict(resp(201, ``, "a")), `expected no Warning header, got ["a"]`},
		{"field missing", fieldVerdict(resp(200, `{}`), "metadata.continue", "x"), `expected metadata.continue = "x", got nothing`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func TestBareVerdict(t *testing.T) {
	for _, tc := range []struct{ msg, panicked, want string }{
		{"Expected\n    <int>: 200\nto equal\n    <int>: 404", "", "Expected 200 to equal 404"},
		{"create cm-1\nExpected\n    <int>: 409\nto equal\n    <int>: 201", "", "create cm-1: Expected 409 to equal 201"},
		// A response dump as description is left out: the request is appended from the exchange.
		{"GET https://h/api/v1/x -> 200 {\"kind\":\"ConfigMap\"}\nExpected\n    <int>: 200\nto equal\n    <int>: 404", "", "Expected 200 to equal 404"},
		{"anything", "runtime error: index out of range", "panic: runtime error: index out of range"},
		{"no gomega shape\nsecond line", "", "no gomega shape second line"},
		{"Expected\n    <[]string | len:0, cap:0>: nil\nto consist of\n    <[]string | len:1, cap:1>: [\n        \"unknown field \\\"bogus\\\"\",\n    ]\nthe missing elements were\n    <[]string | len:1, cap:1>: [\"x\"]",
			"", `Expected none to consist of ["unknown field \"bogus\""]`},
	} {
		if got := bareVerdict(tc.msg, tc.panicked); got != tc.want {
			t.Errorf("bareVerdict(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
	long := bareVerdict(strings.Repeat("word ", 100), "")
	if n := len([]rune(long)); n != maxVerdict {
		t.Errorf("long verdict has %d runes, want %d", n, maxVerdict)
	}
}

func TestRequestLine(t *testing.T) {
	got := requestLine("GET", "https://127.0.0.1:6443/api/v1/pods?resourceVersion=12&resourceVersionMatch=Exact", 200)
	if want := "GET /api/v1/pods?resourceVersion=12&resourceVersionMatch=Exact → 200 OK"; got != want {
		t.Errorf("requestLine = %q, want %q", got, want)
	}
}
