package registry

import (
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/storage"
)

// labelsOnly must select exactly what decoding the whole object selects.
func TestLabelsOnlyMatchesDecode(t *testing.T) {
	r := &Registry{}
	k := configMapKind()
	values := []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"i":"1","j":"x"}},"data":{"k":"v"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","labels":{"i":"2"}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","labels":null}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","labels":{"i":1}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","Metadata":{"labels":{"i":"1"}},"metadata":{"name":"f"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap"}`,
	}
	for _, ls := range []string{"i=1", "!i", "i in (1,2)", "i!=1", "j", "i=1,j=x"} {
		sel := Selector{Labels: mustLabels(t, ls), Fields: fields.Everything()}
		for _, v := range values {
			kv := storage.KeyValue{Key: "/configmaps/ns/x", Value: []byte(v), ModRevision: 3}
			m, ok := labelsOnly(k, "v1", sel, kv)
			if !ok {
				t.Fatalf("%s on %s: labelsOnly declined", ls, v)
			}
			obj, err := r.decode(k, "v1", kv, 0)
			if err != nil {
				t.Fatal(err)
			}
			if want := sel.Matches(k, obj); m != want {
				t.Errorf("%s on %s: labelsOnly %v, decode %v", ls, v, m, want)
			}
		}
	}
	// A field selector or another version needs the whole object.
	kv := storage.KeyValue{Key: "k", Value: []byte(values[0])}
	if _, ok := labelsOnly(k, "v1", Selector{Labels: mustLabels(t, "i=1"), Fields: fields.OneTermEqualSelector("metadata.name", "a")}, kv); ok {
		t.Error("labelsOnly took a field selector")
	}
	if _, ok := labelsOnly(k, "v2", Selector{Labels: mustLabels(t, "i=1")}, kv); ok {
		t.Error("labelsOnly took a converted version")
	}
	if _, ok := labelsOnly(k, "v1", Selector{Labels: mustLabels(t, "i=1")}, storage.KeyValue{Value: []byte(`{"metadata":"x"}`)}); ok {
		t.Error("labelsOnly took metadata that is not an object")
	}
}

func mustLabels(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
