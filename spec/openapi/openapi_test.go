package openapi

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
)

func TestLoadBytesRejectsWhatItCannotRead(t *testing.T) {
	cases := []struct{ name, data, want string }{
		{"empty", "  ", "empty document"},
		{"broken JSON", `{"swagger":`, "not valid JSON"},
		{"JSON array", `[{"swagger":"2.0"}]`, "a JSON array, not an API description"},
		{"wrong header type", `{"swagger":2}`, "a JSON number at swagger where a string was expected"},
		{"empty Swagger 2.0", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`, "empty document: a valid swagger-2.0 document with no definitions and no paths"},
		{"empty OpenAPI 3", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{}}`, "empty document"},
		{"dangling Swagger ref", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{"A":{"type":"object","properties":{"b":{"$ref":"#/definitions/Missing"}}}}}`, `$ref "#/definitions/Missing" at /definitions/A/properties/b points at nothing`},
		{"unknown JSON", `{"hello":"world"}`, "neither"},
		{"YAML scalar", "just some text", "holds no object"},
		{"Swagger 1.2", `{"swagger":"1.2"}`, "unsupported swagger version"},
		{"CRD without versions", "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\nspec: {group: g, names: {kind: K}}\n", "lacks"},
		{"manifest without CRDs", "apiVersion: v1\nkind: Namespace\n---\napiVersion: v1\nkind: ConfigMap\n", "no CustomResourceDefinition"},
		{"broken OpenAPI 3 ref", `{"openapi":"3.0.0","info":{"title":"t","version":"1"},"paths":{},"components":{"schemas":{"A":{"$ref":"#/components/schemas/Missing"}}}}`, "invalid OpenAPI 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := LoadBytes([]byte(c.data), "input")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestCRDVersionsAndPreferred(t *testing.T) {
	d, err := LoadBytes([]byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing}
  versions:
  - {name: v1alpha1, served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
  - {name: v1beta10, served: false, storage: false, schema: {openAPIV3Schema: {type: object}}}
`), "crd")
	if err != nil {
		t.Fatal(err)
	}
	if got := d.PreferredCRDVersion("example.com/Thing"); got != "v1beta2" {
		t.Errorf("preferred %s, want v1beta2 (v1beta10 is not served)", got)
	}
	if !d.GroupVersions["example.com/v1alpha1"].Deprecated || d.GroupVersions["example.com/v1beta10"].Served {
		t.Errorf("group versions: %+v", d.GroupVersions)
	}
	if _, ok := d.Schemas["example.com/v1beta2/Thing"]; !ok {
		t.Errorf("schemas: %v", d.Names)
	}
}

func TestVersionLess(t *testing.T) {
	vs := []string{"v1alpha1", "v2beta1", "v1", "foo", "v1beta2", "v2", "v1beta10", "v11alpha2"}
	sort.Slice(vs, func(i, j int) bool { return VersionLess(vs[i], vs[j]) })
	want := "v2,v1,v2beta1,v1beta10,v1beta2,v11alpha2,v1alpha1,foo"
	if got := strings.Join(vs, ","); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestExceptions(t *testing.T) {
	f := Finding{Rule: "field-removed", Definition: "io.k8s.api.core.v1.PodSpec", Pointer: "/properties/workloadRef"}
	cases := []struct {
		exception string
		match     bool
	}{
		{"field-removed", true},
		{"*", true},
		{"field-removed:io.k8s.api.core.v1.PodSpec", true},
		{"field-removed:io.k8s.api.core.v1.*", true},
		{"field-removed:io.k8s.api.core.v1.PodSpec#/properties/workloadRef", true},
		{"field-removed:*#/properties/workload*", true},
		{"field-removed:io.k8s.api.core.v1.Pod", false},
		{"field-removed:*#/properties/other", false},
		{"type-changed", false},
	}
	for _, c := range cases {
		e, err := ParseException(c.exception)
		if err != nil {
			t.Fatal(err)
		}
		if e.Matches(f) != c.match {
			t.Errorf("%s matches = %v, want %v", c.exception, !c.match, c.match)
		}
	}
	if _, err := ParseException(":path"); err == nil {
		t.Error("exception without rule accepted")
	}
}

func TestFetchErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big/openapi/v2" {
			_, _ = w.Write([]byte(strings.Repeat(" ", 2048)))
			return
		}
		http.NotFound(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	if _, err := Fetch(context.Background(), srv.URL, FetchOptions{}); err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("404: %v", err)
	}
	if _, err := Fetch(context.Background(), srv.URL+"/big", FetchOptions{MaxBytes: 1024}); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("size cap: %v", err)
	}
}
