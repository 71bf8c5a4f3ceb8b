package apply

import (
	"testing"
)

func BenchmarkApplyConfigMap(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	applied := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"data": map[string]any{"a": "1", "b": "2", "c": "3"}}
	live, err := m.Apply(nil, applied, "kubectl", false)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Apply(live, applied, "kubectl", false); err != nil {
			b.Fatal(err)
		}
	}
}
