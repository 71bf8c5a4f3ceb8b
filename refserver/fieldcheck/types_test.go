package fieldcheck

import (
	"sort"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// Observed on kube-apiserver v1.36.3 (POST of these Widgets): the causes, as
// a set (its order varies between requests), and the 422's message form.
func TestTypeErrors(t *testing.T) {
	wd := widgets(t)
	cases := []struct {
		body   string
		causes []string
	}{
		{`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":"big","name":5,"tags":"x","items":[{"a":1}],"labels":{"k":true},"nested":[1],"free":3},"status":{"ready":"yes"}}`,
			[]string{
				`spec.nested: Invalid value: "array": spec.nested in body must be of type object: "array"`,
				`spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`,
				`spec.tags: Invalid value: "string": spec.tags in body must be of type array: "string"`,
				`spec.free: Invalid value: "integer": spec.free in body must be of type object: "integer"`,
				`spec.items[0].a: Invalid value: "integer": spec.items[0].a in body must be of type string: "integer"`,
				`spec.labels.k: Invalid value: "boolean": spec.labels.k in body must be of type string: "boolean"`,
				`spec.name: Invalid value: "integer": spec.name in body must be of type string: "integer"`,
				`status.ready: Invalid value: "string": status.ready in body must be of type boolean: "string"`,
			}},
		{`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1.5,"name":null,"tags":[null, 2]},"status":"x"}`,
			[]string{
				`spec.size: Invalid value: "number": spec.size in body must be of type integer: "number"`,
				`spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"`,
				`spec.tags[1]: Invalid value: "integer": spec.tags[1] in body must be of type string: "integer"`,
				`status: Invalid value: "string": status in body must be of type object: "string"`,
			}},
		{`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":"x"}`,
			[]string{`spec: Invalid value: "string": spec in body must be of type object: "string"`}},
		{`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":2,"free":{"x":[1,"a"]},"keyed":[{"name":"a"}]}}`, nil},
	}
	for _, tc := range cases {
		var obj map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(tc.body), &obj); err != nil {
			t.Fatal(err)
		}
		errs := TypeErrors(obj, wd.Schema.structural)
		var got []string
		for _, e := range errs {
			if e.Type != "FieldValueTypeInvalid" {
				t.Errorf("%s: type %s", e.Field, e.Type)
			}
			got = append(got, e.Error())
		}
		want := append([]string(nil), tc.causes...)
		sort.Strings(want)
		if len(got) != len(want) {
			t.Fatalf("errors\n got %q\nwant %q", got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("error %d\n got %s\nwant %s", i, got[i], want[i])
			}
		}
		if len(errs) == 1 {
			err := apierrors.NewInvalid(schema.GroupKind{Group: "fc.example.com", Kind: "Widget"}, "w1", errs)
			if err.Error() != `Widget.fc.example.com "w1" is invalid: spec: Invalid value: "string": spec in body must be of type object: "string"` {
				t.Errorf("message %s", err.Error())
			}
		}
	}
}
