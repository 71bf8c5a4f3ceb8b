package registry

import (
	"reflect"
	"testing"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
)

func TestPruneAndDefaults(t *testing.T) {
	raw := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"size":   map[string]any{"type": "integer", "default": 3},
				"items":  map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "default": "x"}}}},
				"free":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			}},
		},
	}
	n := parseSchemaNode(raw)
	obj := Object{
		"apiVersion": "x/v1", "kind": "K", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"items": []any{map[string]any{"b": 1}}, "free": map[string]any{"z": 1}, "labels": map[string]any{"k": "v"}, "junk": true},
		"top":  1,
	}
	dropped := fieldcheck.Prune(obj, raw)
	n.applyDefaults(obj, true)
	want := []string{"spec.items[0].b", "spec.junk", "top"}
	if !sameSet(dropped, want) {
		t.Fatalf("dropped %v, want %v", dropped, want)
	}
	spec := obj["spec"].(map[string]any)
	if spec["size"] != float64(3) || spec["items"].([]any)[0].(map[string]any)["a"] != "x" || spec["free"].(map[string]any)["z"] != 1 {
		t.Fatalf("after prune+defaults: %v", obj)
	}
	if obj["metadata"].(map[string]any)["name"] != "a" {
		t.Fatal("metadata must survive pruning")
	}
}

func TestValidateAgainstSchema(t *testing.T) {
	raw := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "required": []any{"size"}, "properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 1}}},
	}}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec   any
		fields []string
	}{
		{map[string]any{"size": 2}, nil},
		{map[string]any{"size": "big"}, []string{"spec.size"}},
		{map[string]any{"size": 0}, []string{"spec.size"}},
		{"x", []string{"spec"}},
	}
	for _, c := range cases {
		errs := validateCustom(raw, s, Object{"spec": c.spec})
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
		}
		if !sameSet(got, c.fields) {
			t.Errorf("spec %v: fields %v, want %v (%v)", c.spec, got, c.fields, errs)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b) || reflect.DeepEqual(a, b)
}

// Type errors carry the JSON type as their value, as kube-apiserver's do.
func TestValidateCustomTypeWording(t *testing.T) {
	raw := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 1}}},
	}}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	errs := validateCustom(raw, s, Object{"spec": map[string]any{"size": "big"}})
	const want = `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("errors %v, want [%s]", errs, want)
	}
}
