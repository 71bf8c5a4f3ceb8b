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

func TestDropNulls(t *testing.T) {
	var o map[string]any
	if err := json.Unmarshal([]byte(`{"data":{"a":"1","b":null},"metadata":{"labels":{"x":null,"y":"z"}},"top":null}`), &o); err != nil {
		t.Fatal(err)
	}
	dropNulls(o)
	want := map[string]any{"data": map[string]any{"a": "1"}, "metadata": map[string]any{"labels": map[string]any{"y": "z"}}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("got %v, want %v", o, want)
	}
}

func TestClearsDeletionTimestamp(t *testing.T) {
	for _, tc := range []struct {
		method, ct, body string
		want             bool
	}{
		{"PATCH", mergePatchType, `{"metadata":{"deletionTimestamp":null}}`, true},
		{"PATCH", mergePatchType, `{"metadata":{"labels":{"a":"b"}}}`, false},
		{"PATCH", jsonPatchType, `[{"op":"remove","path":"/metadata/deletionTimestamp"}]`, true},
		{"PATCH", jsonPatchType, `[{"op":"remove","path":"/metadata/labels"}]`, false},
		{"PUT", "application/json", `{"metadata":{"name":"x"}}`, true},
		{"PUT", "application/json", `{"metadata":{"name":"x","deletionTimestamp":"2026-01-01T00:00:00Z"}}`, false},
	} {
		r := httptest.NewRequest(tc.method, "/api/v1/namespaces/ns/configmaps/x", strings.NewReader(tc.body))
		if got := clearsDeletionTimestamp(r, tc.ct); got != tc.want {
			t.Errorf("%s %s %s: got %v, want %v", tc.method, tc.ct, tc.body, got, tc.want)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != tc.body {
			t.Errorf("%s: the body was not put back: %q", tc.body, b)
		}
	}
}

func TestNameUID(t *testing.T) {
	a, b := nameUID("configmaps", "ns", "x"), nameUID("configmaps", "ns", "y")
	if a != nameUID("configmaps", "ns", "x") || a == b || len(a) != 36 || strings.Count(a, "-") != 4 {
		t.Errorf("nameUID: %q %q", a, b)
	}
}

func TestGoStructField(t *testing.T) {
	for msg, want := range map[string]string{
		`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string`: "data",
		`json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`:                                                            "metadata.labels",
		`something else`: "",
	} {
		if got := goStructField(msg); got != want {
			t.Errorf("%q: got %q, want %q", msg, got, want)
		}
	}
}

// answer is a stand-in API handler: it answers what a query parameter
// "answer" names, and otherwise echoes method, Content-Type, query and body.
var answer = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	status := func(code int, reason, msg, details string) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"`+reason+`","code":`+itoa(code)+
			`,"message":"`+msg+`","details":`+details+`}`)
	}
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/missing") {
		status(404, "NotFound", "not found", `{}`)
		return
	}
	switch r.URL.Query().Get("answer") {
	case "405":
		status(405, "MethodNotAllowed", "POST is not supported", `{}`)
	case "400":
		status(400, "BadRequest", `ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string`, `{}`)
	case "422":
		status(422, "Invalid", "Widget is invalid", `{"kind":"Widget","causes":[{"reason":"FieldValueTypeInvalid","field":"spec.replicas"}]}`)
	default:
		b, _ := io.ReadAll(r.Body)
		out, _ := json.Marshal(map[string]any{"kind": "Echo", "method": r.Method, "ct": r.Header.Get("Content-Type"),
			"accept": r.Header.Get("Accept"), "query": r.URL.RawQuery, "body": string(b), "metadata": map[string]any{}})
		_, _ = w.Write(out)
	}
})

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestWritesMiddleware(t *testing.T) {
	const cm = "/api/v1/namespaces/ns/configmaps"
	const widgets = "/apis/g.test/v1/namespaces/ns/widgets"
	for _, tc := range []struct {
		fault, method, path, ct, body, want, not string
		code                                     int
	}{
		{MethodNotAllowedAs404, "POST", cm + "/x?answer=405", "", "{}", `"reason":"NotFound"`, "MethodNotAllowed", 404},
		{ClientErrorsAs500, "POST", cm + "?answer=400", "application/json", "{", `"reason":"InternalError"`, "", 500},
		{BuiltinTypeErrors422, "POST", cm + "?answer=400", "application/json", `{"metadata":{"name":"x"}}`, `"field":"data"`, "BadRequest", 422},
		{CustomTypeErrors400, "POST", widgets + "?answer=422", "application/json", "{}", `cannot be handled as a Widget`, "Invalid", 400},
		{JSONPatchUnsupported, "PATCH", cm + "/x", jsonPatchType, "[]", `"reason":"UnsupportedMediaType"`, "", 415},
		{UnknownPatchTypeAsMerge, "PATCH", cm + "/x", "text/plain", "{}", `merge-patch+json`, "text/plain", 200},
		{PatchNullIgnored, "PATCH", cm + "/x", mergePatchType, `{"data":{"b":null,"c":"3"}}`, `{\"data\":{\"c\":\"3\"}}`, "null", 200},
		{PutMerges, "PUT", cm + "/x", "application/json", "{}", `"method":"PATCH"`, "", 200},
		{OptionValuesUnchecked, "POST", cm + "?dryRun=x&fieldValidation=Bogus&fieldManager=m", "application/json", "{}", `"query":"fieldManager=m"`, "dryRun", 200},
		{OptionValuesUnchecked, "POST", cm + "?dryRun=All&fieldValidation=Strict", "application/json", "{}", `dryRun=All\u0026fieldValidation=Strict`, "", 200},
		// Apply: YAML turned into JSON, sent as a merge patch or a create.
		{ApplyRequiresExisting, "PATCH", cm + "/missing?fieldManager=m", applyPatchType + "+yaml", "data:\n  a: b\n", `"ct":"application/merge-patch+json"`, "", 200},
		{ApplyRequiresExisting, "PATCH", cm + "/x?fieldManager=m", applyPatchType + "+yaml", "data:\n  a: b\n", `"ct":"application/apply-patch+yaml"`, "", 200},
		{ApplyAsMergePatch, "PATCH", cm + "/missing?fieldManager=m", applyPatchType + "+yaml", "data:\n  a: b\n", `"method":"POST"`, "merge", 200},
		{ApplyAsMergePatch, "PATCH", cm + "/x?fieldManager=m&force=true", applyPatchType + "+yaml", "data:\n  a: b\n", `"body":"{\"data\":{\"a\":\"b\"}}"`, "force", 200},
		{TableAnswersJSON, "GET", cm, "", "", `"accept":"application/json"`, "as=Table", 200},
	} {
		set, err := Parse(tc.fault)
		if err != nil {
			t.Fatal(err)
		}
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		req.Header.Set("Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
		rec := httptest.NewRecorder()
		set.Wrap(answer).ServeHTTP(rec, req)
		got := rec.Body.String()
		if rec.Code != tc.code || !strings.Contains(got, tc.want) || tc.not != "" && strings.Contains(got, tc.not) {
			t.Errorf("%s %s %s: got %d %s, want %d with %s without %q", tc.fault, tc.method, tc.path, rec.Code, got, tc.code, tc.want, tc.not)
		}
	}
}

func TestDeletionTimestampClearable(t *testing.T) {
	held := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x","uid":"u-held",`+
			`"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["f"]}}`)
	})
	set, err := Parse(DeletionTimestampClearable)
	if err != nil {
		t.Fatal(err)
	}
	h := set.Wrap(held)
	get := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/namespaces/ns/configmaps/x", nil))
		return rec.Body.String()
	}
	if !strings.Contains(get(), "deletionTimestamp") {
		t.Fatal("a read before any clearing patch must show deletionTimestamp")
	}
	req := httptest.NewRequest("PATCH", "/api/v1/namespaces/ns/configmaps/x", strings.NewReader(`{"metadata":{"deletionTimestamp":null}}`))
	req.Header.Set("Content-Type", mergePatchType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if strings.Contains(rec.Body.String(), "deletionTimestamp") || strings.Contains(get(), "deletionTimestamp") {
		t.Errorf("after the clearing patch deletionTimestamp still shows: %s", rec.Body.String())
	}
}
