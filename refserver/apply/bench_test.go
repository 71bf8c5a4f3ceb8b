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

// BenchmarkUpdate measures Update recording a ConfigMap's create (live nil)
// and a change of one key by a second manager, as the registry sends them:
// Update (the fast path) and the library it must match.
func BenchmarkUpdate(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	created := func() map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "default", "uid": "u-1", "creationTimestamp": "2026-01-02T03:04:05Z",
				"labels": map[string]any{"app": "bench"}},
			"data": map[string]any{"a": "1", "b": "2", "c": "3"}}
	}
	live, err := m.Update(nil, created(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	updated := created()
	updated["metadata"].(map[string]any)["resourceVersion"] = "2"
	updated["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
	updated["data"].(map[string]any)["b"] = "changed"
	for _, path := range []struct {
		name   string
		update func(live, updated map[string]any, manager string) (map[string]any, error)
	}{{"fast", m.Update}, {"library", m.libraryUpdate}} {
		b.Run("create/"+path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := path.update(nil, created(), "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("change/"+path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := path.update(live, updated, "editor"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
