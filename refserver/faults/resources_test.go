package faults

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		path, prefix, group, ns, collection string
		rest                                []string
	}{
		{"/api/v1/namespaces/ns/configmaps/x", "/api/v1", "", "ns", "/api/v1/namespaces/ns/configmaps", []string{"configmaps", "x"}},
		{"/api/v1/namespaces/ns", "/api/v1", "", "", "/api/v1/namespaces", []string{"namespaces", "ns"}},
		{"/apis/g.test/v1/namespaces/ns/widgets", "/apis/g.test/v1", "g.test", "ns", "/apis/g.test/v1/namespaces/ns/widgets", []string{"widgets"}},
		{"/api/v1/namespaces/ns/namespaces/ns", "/api/v1", "", "ns", "/api/v1/namespaces/ns/namespaces", []string{"namespaces", "ns"}},
	} {
		a, ok := parsePath(tc.path)
		if !ok || a.prefix != tc.prefix || a.group != tc.group || a.ns != tc.ns || !reflect.DeepEqual(a.rest, tc.rest) || a.collection() != tc.collection {
			t.Errorf("%s: got %+v %v (collection %s)", tc.path, a, ok, a.collection())
		}
	}
	if _, ok := parsePath("/api/v1"); ok {
		t.Error("a discovery path is no resource path")
	}
}

func TestNormalizeName(t *testing.T) {
	for in, want := range map[string]string{
		"Bad_Name":               "bad-name",
		"trailing-":              "trailing",
		strings.Repeat("a", 254): strings.Repeat("a", 253),
		"__":                     "x",
	} {
		if got := normalizeName(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestBodyEdits(t *testing.T) {
	decode := func(s string) map[string]any {
		var o map[string]any
		if err := json.Unmarshal([]byte(s), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, tc := range []struct {
		name     string
		in, want string
		edit     func(map[string]any)
	}{
		{"replace directives go", `{"data":{"$patch":"replace","c":"3"},"x":{"y":{"$patch":"replace"}}}`, `{"data":{"c":"3"},"x":{"y":{}}}`, dropReplaceDirectives},
		{"other directives stay", `{"data":{"$patch":"delete"}}`, `{"data":{"$patch":"delete"}}`, dropReplaceDirectives},
		{"required fields zeroed", `{"spec":{"note":"n"}}`, `{"spec":{"note":"n","size":0,"inner":{"flag":false}}}`, func(o map[string]any) {
			fillRequired(o, decode(`{"properties":{"spec":{"required":["size","inner"],"properties":{"size":{"type":"integer"},`+
				// the object added for inner is filled too
				`"inner":{"type":"object","required":["flag"],"properties":{"flag":{"type":"boolean"}}}}}}}`))
		}},
		{"answer pruned to what was sent", `{"spec":{"size":1,"mode":"auto"}}`, `{"spec":{"size":1}}`, func(o map[string]any) {
			pruneTo(o, decode(`{"spec":{"size":1}}`))
		}},
	} {
		o := decode(tc.in)
		tc.edit(o)
		if got, _ := json.Marshal(o); !reflect.DeepEqual(decode(string(got)), decode(tc.want)) {
			t.Errorf("%s: got %v, want %s", tc.name, o, tc.want)
		}
	}
}

func TestSameSet(t *testing.T) {
	if !sameSet([]string{"a", "b"}, []string{"b", "a"}) || sameSet([]string{"a"}, []string{"a", "b"}) {
		t.Error("sameSet")
	}
}

// status answers what kube-apiserver answers to an invalid create, and
// echoes any other request's method.
var invalid = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.Method != http.MethodPost {
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"method":"`+r.Method+`"}`)
		return
	}
	w.WriteHeader(http.StatusUnprocessableEntity)
	_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Invalid","code":422,`+
		`"details":{"causes":[{"field":"metadata.labels"},{"field":"metadata.annotations"}]}}`)
})

func TestResourcesMiddleware(t *testing.T) {
	const list = "/api/v1/namespaces/ns/configmaps"
	for _, tc := range []struct {
		fault, method, path, want, not string
		code                           int
	}{
		{ValidationAnswers400, "POST", list, `"reason":"BadRequest"`, `422`, 400},
		{ValidationFirstErrorOnly, "POST", list, `metadata.labels`, `metadata.annotations`, 422},
		{ErrorsAnswer200, "POST", list, `"code":422`, "", 200},
		{OptionsAnswers404, "OPTIONS", list, `"reason":"NotFound"`, "", 404},
		{GetOmitsTypeMeta, "GET", list + "/x", `"name":"x"`, `"kind"`, 200},
		{SizeLimitOnRequestBody, "PUT", list + "/x", `RequestEntityTooLarge`, "", 413},
	} {
		set, err := Parse(tc.fault)
		if err != nil {
			t.Fatal(err)
		}
		body := "{}"
		if tc.fault == SizeLimitOnRequestBody {
			body = `{"data":{"k":"` + strings.Repeat("x", 1<<20) + `"}}`
		}
		rec := httptest.NewRecorder()
		set.Wrap(invalid).ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, strings.NewReader(body)))
		got := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s %s %s: got %d %s, want %d with %s without %q", tc.fault, tc.method, tc.path, rec.Code, got, tc.code, tc.want, tc.not)
		}
	}
}
