package faults

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	s, err := ParseList(IgnoreRVMatchExact + ", " + NoWarningHeader)
	if err != nil || !s.Has(IgnoreRVMatchExact) || !s.Has(NoWarningHeader) || s.Has(DryRunPersists) {
		t.Fatalf("parse: %v %v", s, err)
	}
	if _, err := Parse("no-such-fault"); err == nil {
		t.Fatal("unknown faults must be refused")
	}
	if s, err := ParseList(""); err != nil || len(s.Names()) != 0 {
		t.Fatalf("empty list: %v %v", s, err)
	}
	var none Set
	if none.Has(IgnoreRVMatchExact) {
		t.Fatal("the nil set has no faults")
	}
	for _, n := range Names() {
		if Describe(n) == "" || Seam(n) == "" {
			t.Errorf("%s has no description or seam", n)
		}
	}
}

func TestRequireKeysOfNotEqual(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a!=b", "a!=b,a"},
		{"x=y", "x=y"},
		{"a notin (b,c),x=y", "a notin (b,c),a,x=y"},
	} {
		if got := requireKeysOfNotEqual(tc.in); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.in, got, tc.want)
		}
	}
}

// echo answers every request with what it saw, and a watch with two events.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/version":
		_, _ = io.WriteString(w, `{"gitVersion":"v1.36.3"}`)
	case r.URL.Query().Get("watch") == "1":
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n")
		_, _ = io.WriteString(w, `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"b"}}}`+"\n")
	case r.Method == http.MethodPost:
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","metadata":{"resourceVersion":"5"}}`)
	default:
		_, _ = io.WriteString(w, `{"kind":"ConfigMapList","metadata":{"resourceVersion":"5"},"items":[],"query":"`+r.URL.RawQuery+`"}`)
	}
})

func TestMiddleware(t *testing.T) {
	const list = "/api/v1/namespaces/ns/configmaps"
	for _, tc := range []struct {
		fault, method, path, want string
		code                      int
	}{
		{EmptyListItemsNull, "GET", list, `"items":null`, 200},
		{ListKindWithoutSuffix, "GET", list, `"kind":"ConfigMap"`, 200},
		{LabelSelectorIgnoredOnWatch, "GET", list + "?labelSelector=a%3Db", `"query":"labelSelector=a%3Db"`, 200}, // not a watch
		{DeleteCollectionIgnoresSel, "GET", list + "?labelSelector=a%3Db", `labelSelector`, 200},
		{CreateAnswers200, "POST", list, `"resourceVersion":"5"`, 200},
		{ResourceVersionAsNumber, "POST", list, `"resourceVersion":5`, 201},
		{WatchListEndsWithError, "GET", list + "?watch=1&sendInitialEvents=true", `"type":"ERROR"`, 200},
		{WatchListNoEndAnnotation, "GET", list + "?watch=1&sendInitialEvents=true", `"metadata":{"resourceVersion":"7"}`, 200},
		{NoWarningHeader, "GET", "/version", `apiconformSimulatedDeviations`, 200},
	} {
		set, err := Parse(tc.fault)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		set.Wrap(echo).ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader("{}")))
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) {
			t.Errorf("%s %s %s: got %d %s, want %d containing %s", tc.fault, tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.want)
		}
		if tc.fault == WatchListEndsWithError && strings.Contains(rec.Body.String(), `"b"`) {
			t.Errorf("the stream goes on after the ERROR event: %s", rec.Body)
		}
	}
	if h := Set(nil).Wrap(echo); h == nil {
		t.Fatal("no handler")
	}
}

// expectAnswer checks a recorded answer's status code and that its body
// holds every string of want and none of notWant.
func expectAnswer(t *testing.T, rec *httptest.ResponseRecorder, code int, want, notWant []string) {
	t.Helper()
	body := rec.Body.String()
	if rec.Code != code {
		t.Errorf("code %d, want %d: %s", rec.Code, code, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("answer lacks %s: %q", w, body)
		}
	}
	for _, w := range notWant {
		if strings.Contains(body, w) {
			t.Errorf("answer has %s: %q", w, body)
		}
	}
}
