package apply

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// typedCreateFields is what the typed path gives a create's own entry: the
// object's field set with every prefix, less the server's metadata, as
// fieldsV1. An error is an object the typed conversion refuses.
func typedCreateFields(m *Manager, obj map[string]any) (map[string]any, error) {
	tv, err := m.tc.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	added, err := addedFromEmpty(tv)
	if err != nil {
		return nil, err
	}
	fields, ok := setToFields(added.Difference(stripSet))
	if !ok {
		return nil, fmt.Errorf("setToFields declined")
	}
	return fields, nil
}

// sameCreateFields: where createFields answers, the typed path accepts the
// object and gives the same fieldsV1; it reports whether it answered.
func sameCreateFields(t *testing.T, name string, m *Manager, obj map[string]any) bool {
	t.Helper()
	got, ok := m.createFields(obj)
	if !ok {
		return false
	}
	want, err := typedCreateFields(m, obj)
	if err != nil {
		t.Fatalf("%s: createFields answered for an object the typed path refuses (%v): %s", name, err, dump(obj))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: createFields of %s\ngives %s\nwant  %s", name, dump(obj), dump(got), dump(want))
	}
	return true
}

func TestCreateFields(t *testing.T) {
	ms := managerSet{}
	cases := []struct {
		name, kind, obj string
		answers         bool
	}{
		{"name only", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`, true},
		{"empty maps are members", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{}},"data":{}}`, true},
		{"server metadata left out", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"3","generation":2,"creationTimestamp":"2026-01-02T03:04:05Z","generateName":"g","labels":{"x":"1"},"annotations":{"y":"2"}},"data":{"k":"v"},"binaryData":{"b":"AA=="},"immutable":true}`, true},
		{"secret", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","stringData":{"p":"q"},"data":{"d":"AA=="}}`, true},
		{"namespace", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"s","labels":{"a":"b"}}}`, true},
		{"custom resource", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3,"name":"n","labels":{"l":"1"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":2.5,"e":{}}}},"status":{"ready":true}}`, true},
		{"float where the schema says integer (numeric)", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2.5}}`, true},
		{"no schema", "deduced", `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"a":{"b":{"c":1}},"s":"x","t":true}}`, true},

		{"a list", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","finalizers":["f"]}}`, false},
		{"a null", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":null}`, false},
		{"an undeclared field", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"extra":"x"}`, false},
		{"a number for a string", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":1}}`, false},
		{"a string for a map", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":"x"}`, false},
		{"a map for a string", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":{}}}`, false},
		{"a string for a boolean", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"ready":"yes"}}`, false},
		{"an atomic map", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"pinned":{"a":"b"}}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := decode(t, c.obj, true)
			if got := sameCreateFields(t, c.name, ms.of(t, c.kind), obj); got != c.answers {
				t.Fatalf("createFields answered %v, want %v", got, c.answers)
			}
		})
	}
}

// TestCreateFieldsGenerated: createFields equals the typed path on 2,000
// generated objects of the fuzz kinds, and answers for most of them (those
// without lists).
func TestCreateFieldsGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	rng := rand.New(rand.NewPCG(23, 5))
	answered := 0
	for i := range 2000 {
		b := make([]byte, 64)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		in := &fuzzBytes{b: b}
		k := &kinds[in.pick(len(kinds))]
		if sameCreateFields(t, fmt.Sprintf("object %d", i), k.m, k.object(in)) {
			answered++
		}
	}
	if answered < 1000 {
		t.Fatalf("createFields answered for only %d of 2,000 generated objects", answered)
	}
}
