package registry

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"
)

// labelMap is a storedLabels' pairs as a map, for comparison.
func labelMap(sl storedLabels) map[string]string {
	if !sl.ok {
		return nil
	}
	out := map[string]string{}
	l, _ := sl.set.(compactLabels)
	for i := 0; i+1 < len(l); i += 2 {
		out[l[i]] = l[i+1]
	}
	return out
}

// checkCanonicalLabels: whatever canonicalLabels answers is what decoding
// the value gives.
func checkCanonicalLabels(t *testing.T, value []byte) bool {
	t.Helper()
	l, ok := canonicalLabels(value)
	if !ok {
		return false
	}
	want := decodeLabels(value)
	if got := labelMap(storedLabels{set: l, ok: true}); !want.ok || !maps.Equal(got, labelMap(want)) {
		t.Fatalf("%s: one pass reads %v, the decode %v (ok %v)", value, got, labelMap(want), want.ok)
	}
	return true
}

func TestCanonicalLabels(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool // the one pass answers
	}{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":{"app":"web","tier":"1"},"name":"a"}}`, true},
		{`{"metadata":{"name":"a"}}`, true},
		{`{"metadata":{"labels":{}}}`, true},
		{`{"data":{"metadata":{"labels":{"x":"y"}}},"metadata":{"labels":{"app":"web"}}}`, true}, // only the top-level metadata counts
		{`{"metadata":{"annotations":{"labels":"no"},"labels":{"\n":"\"q\"","a\u003cb":"\u0026"}}}`, true},
		{`{"kind":"X"}`, true},
		{`{}`, true},
		{`{"metadata":{"labels":{"app":1}}}`, false},         // not a string: the decode says ""
		{`{"metadata":{"labels":{"app":null}}}`, false},      // likewise
		{`{"metadata":{"labels":null}}`, false},              // not an object
		{`{"metadata":null}`, false},                         // likewise
		{`{"metadata":{"labels":{"b":"1","a":"2"}}}`, false}, // keys out of order
		{`{"metadata":{"labels":{"a":"1","a":"2"}}}`, false}, // a key twice: the decode keeps the last
		{`{"metadata":{"labels":{"a":"1"}},"metadata":{"labels":{"a":"2"}}}`, false},
		{`{"metadata":{"labels":{"a":"1"}} }`, false},     // space
		{`{"metadata":{"labels":{"a":"\u0041"}}}`, false}, // an escape MarshalJSON does not write
		{`{"Metadata":{"labels":{"a":"1"}}}`, true},       // another key: no labels, as the case-sensitive decode
		{`[{"metadata":{"labels":{"a":"1"}}}]`, false},
		{`{"metadata":{"labels":{"a":"1"}}}x`, false},
		{`{"metadata":{"labels":{"a":"1"`, false},
		{``, false},
	} {
		if got := checkCanonicalLabels(t, []byte(c.value)); got != c.ok {
			t.Errorf("%s: one pass answers %v, want %v", c.value, got, c.ok)
		}
	}

	// Everything the registry stores for objects with labels goes the one
	// pass, and reads as the decode does.
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "app", "k8s.io/x", "<", "é", "\u2028", "\"", "\\", "\t", ""}
	for i := range 2000 {
		lbls := map[string]any{}
		for range rng.IntN(5) {
			lbls[alphabet[rng.IntN(len(alphabet))]+alphabet[rng.IntN(len(alphabet))]] = alphabet[rng.IntN(len(alphabet))]
		}
		obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprint("n", i), "labels": lbls, "annotations": map[string]any{"labels": "x"}},
			"data":     map[string]any{"metadata": map[string]any{"labels": map[string]any{"no": "no"}}}}
		b, err := appendStored(nil, obj, "v1", "ConfigMap", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !checkCanonicalLabels(t, b) {
			t.Fatalf("%s: stored encoding, but the one pass declines", b)
		}
	}
}

func FuzzCanonicalLabels(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"labels":{"app":"web"},"name":"a"}}`,
		`{"a":[1,{"b":null}],"metadata":{"labels":{"\u003c":"\u2028"}}}`,
		`{"metadata":{"labels":{"a":"1","a":"2"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) { checkCanonicalLabels(t, value) })
}

// BenchmarkParseLabels: a stored configmap's labels, read in one pass and
// by the decode it replaces.
func BenchmarkParseLabels(b *testing.B) {
	value, err := appendStored(nil, map[string]any{
		"data": map[string]any{"k": "value"},
		"metadata": map[string]any{"name": "cm-00001", "namespace": "ns", "uid": "0d4f5a6e-1111-2222-3333-444455556666",
			"creationTimestamp": "2026-11-28T00:00:00Z", "labels": map[string]any{"app": "load", "shard": "3"},
			"managedFields": []any{map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "m", "operation": "Update",
				"time": "2026-11-28T00:00:00Z", "fieldsV1": map[string]any{"f:data": map[string]any{".": map[string]any{}, "f:k": map[string]any{}}}}}},
	}, "v1", "ConfigMap", nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		parse func([]byte) storedLabels
	}{{"one-pass", parseLabels}, {"decode", decodeLabels}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !c.parse(value).ok {
					b.Fatal("no labels")
				}
			}
		})
	}
}
