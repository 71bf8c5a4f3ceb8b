package registry

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/storage"
)

// labelsOnly must select exactly what decoding the whole object selects.
func TestLabelsOnlyMatchesDecode(t *testing.T) {
	r := &Registry{labels: newLabelCache()}
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
		// One key written at successive revisions: the cached labels of one
		// revision must never answer for another.
		for i, v := range values {
			kv := storage.KeyValue{Key: "/configmaps/ns/x", Value: []byte(v), ModRevision: int64(3 + i)}
			if ls == "i=1" { // the first selector meets each revision first
				if _, ok := r.labelsKnown(k, "v1", sel, kv.Key, kv.ModRevision); ok {
					t.Errorf("%s on %s: labelsKnown decided before the labels were read", ls, v)
				}
			}
			m, ok := r.labelsOnly(k, "v1", sel, kv)
			if !ok {
				t.Fatalf("%s on %s: labelsOnly declined", ls, v)
			}
			if known, ok := r.labelsKnown(k, "v1", sel, kv.Key, kv.ModRevision); !ok || known != m {
				t.Errorf("%s on %s: labelsKnown %v (decided %v), labelsOnly %v", ls, v, known, ok, m)
			}
			if again, _ := r.labelsOnly(k, "v1", sel, kv); again != m {
				t.Errorf("%s on %s: labelsOnly %v, then %v from its cache", ls, v, m, again)
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
	kv := storage.KeyValue{Key: "k", Value: []byte(values[0]), ModRevision: 1}
	if _, ok := r.labelsOnly(k, "v1", Selector{Labels: mustLabels(t, "i=1"), Fields: fields.OneTermEqualSelector("metadata.name", "a")}, kv); ok {
		t.Error("labelsOnly took a field selector")
	}
	if _, ok := r.labelsKnown(k, "v1", Selector{Labels: mustLabels(t, "i=1"), Fields: fields.OneTermEqualSelector("metadata.name", "a")}, "/configmaps/ns/x", 3); ok {
		t.Error("labelsKnown took a field selector")
	}
	if _, ok := r.labelsKnown(k, "v2", Selector{Labels: mustLabels(t, "i=1")}, "/configmaps/ns/x", 3); ok {
		t.Error("labelsKnown took a converted version")
	}
	if _, ok := r.labelsOnly(k, "v2", Selector{Labels: mustLabels(t, "i=1")}, kv); ok {
		t.Error("labelsOnly took a converted version")
	}
	if _, ok := r.labelsOnly(k, "v1", Selector{Labels: mustLabels(t, "i=1")}, storage.KeyValue{Key: "k", Value: []byte(`{"metadata":"x"}`), ModRevision: 2}); ok {
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

// The label cache keeps at most labelCacheSize entries, dropping the oldest.
func TestLabelCacheBounded(t *testing.T) {
	c := newLabelCache()
	for i := range labelCacheSize + 10 {
		c.get(storage.KeyValue{Key: "k", Value: []byte(`{"metadata":{"labels":{"a":"b"}}}`), ModRevision: int64(i + 1)})
	}
	if n := len(c.items); n != labelCacheSize {
		t.Fatalf("cache holds %d entries, want %d", n, labelCacheSize)
	}
	if _, ok := c.lookup("k", 1); ok {
		t.Error("the oldest entry was kept")
	}
	if sl := c.get(storage.KeyValue{Key: "k", Value: []byte(`{"metadata":{"labels":{"a":"b"}}}`), ModRevision: labelCacheSize + 10}); !sl.ok || sl.set.Get("a") != "b" {
		t.Errorf("newest entry: %+v", sl)
	}
}

// The labels a write gives the label index and cache are those parsing
// the stored bytes gives.
func TestWrittenLabelsMatchStored(t *testing.T) {
	k := configMapKind()
	for i, o := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"i":"1","j":"x"}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","labels":{"i":1}}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","labels":"x"}}`,
	} {
		var obj Object
		if err := json.Unmarshal([]byte(o), &obj); err != nil {
			t.Fatal(err)
		}
		val, err := encode(nil, k, obj, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		kl := writtenLabels(k, &change{op: opCreate, key: "k", obj: obj})
		got := storedLabels{set: kl.set, ok: kl.ok}
		want := parseLabels(val)
		if want.ok && (!got.ok || !reflect.DeepEqual(got.set, want.set)) {
			t.Errorf("%s %d: kept %+v, stored bytes give %+v", o, i, got, want)
		}
	}
}

// Selectors match compact labels exactly as they match the labels.Set.
func TestCompactLabelsMatchAsSet(t *testing.T) {
	sets := []labels.Set{nil, {}, {"a": "1"}, {"a": "1", "b": "2"}, {"app": "web", "tier": "front", "z": ""}}
	for _, expr := range []string{"", "a", "!a", "a=1", "a!=1", "a in (1,2)", "a notin (1)", "b=2,a=1", "app=web,tier!=back", "z=", "z", "missing=x", "a>0"} {
		sel, err := labels.Parse(expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		for _, set := range sets {
			compact := newCompactLabels(set, func(v string) string { return v })
			if got, want := sel.Matches(compact), sel.Matches(set); got != want {
				t.Errorf("%q on %v: compact %v, set %v", expr, set, got, want)
			}
		}
	}
}

// The label cache finds entries by revision; another key at that revision
// misses rather than answering with the first key's labels.
func TestLabelCacheOtherKeySameRevision(t *testing.T) {
	c := newLabelCache()
	if sl := c.get(storage.KeyValue{Key: "a", Value: []byte(`{"metadata":{"labels":{"x":"1"}}}`), ModRevision: 7}); sl.set.Get("x") != "1" {
		t.Fatalf("a: %+v", sl)
	}
	if _, ok := c.lookup("b", 7); ok {
		t.Fatal("b at a's revision was answered with a's labels")
	}
	if sl := c.get(storage.KeyValue{Key: "b", Value: []byte(`{"metadata":{"labels":{"x":"2"}}}`), ModRevision: 7}); sl.set.Get("x") != "2" {
		t.Fatalf("b: got %+v, want its own labels", sl)
	}
	if sl, ok := c.lookup("a", 7); !ok || sl.set.Get("x") != "1" {
		t.Fatalf("a after b: %+v, %v", sl, ok)
	}
}
