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
// and a change of one key by a second manager and by its own writer (the
// sole-owner walk), as the registry sends them:
// Update (the fast path) and the library it must match.
func BenchmarkUpdate(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	created, live, updated := updateBenchObjects(b, m)
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
		// The writer that created it changes a value: the sole-owner walk.
		b.Run("own-change/"+path.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := path.update(live, updated, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// updateBenchObjects are BenchmarkUpdate's ConfigMap (a new one each call
// of created), live as "bench" created it, and updated, live with one key
// changed and live's managedFields handed on, as the registry sends them.
func updateBenchObjects(b *testing.B, m *Manager) (created func() map[string]any, live, updated map[string]any) {
	created = func() map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "default", "uid": "u-1", "creationTimestamp": "2026-01-02T03:04:05Z",
				"labels": map[string]any{"app": "bench"}},
			"data": map[string]any{"a": "1", "b": "2", "c": "3"}}
	}
	live, err := m.Update(nil, created(), "bench")
	if err != nil {
		b.Fatal(err)
	}
	updated = created()
	updated["metadata"].(map[string]any)["resourceVersion"] = "2"
	updated["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
	updated["data"].(map[string]any)["b"] = "changed"
	return created, live, updated
}

// BenchmarkUpdateStored measures UpdateStored on BenchmarkUpdate/own-change's
// objects, live's managedFields kept as their stored bytes, to compare with
// BenchmarkUpdate/own-change/fast.
func BenchmarkUpdateStored(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	_, live, updated := updateBenchObjects(b, m)
	live, liveMF := asStored(b, live)
	updated, _ = asStored(b, updated)
	b.Run("own-change", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := m.UpdateStored(live, liveMF, updated, "bench"); !ok {
				b.Fatal("declined")
			}
		}
	})
}

// BenchmarkApply measures Apply creating a ConfigMap (live nil), the load
// generator's first apply by a manager of its own on an object its writers
// track, and a re-apply that changes nothing: Apply (the fast path) and the
// library it must match.
func BenchmarkApply(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	loaded, applied := firstApplyObjects(b, m)
	appliedOnce, err := m.Apply(loaded, applied, "apiconform-load", false)
	if err != nil {
		b.Fatal(err)
	}
	// An applier that applies labels too (kubectl's usual manifest): the
	// prune cannot be proven idle (metadata.uid sits under metadata, which
	// it applied), so the updater runs with its earlier fields.
	labelled := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "labels": map[string]any{"app": "x"}},
		"data": map[string]any{"applied": "3"}}
	labelledOnce, err := m.Apply(loaded, labelled, "apiconform-load", false)
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []struct {
		name  string
		apply func(live, applied map[string]any, manager string, force bool) (map[string]any, error)
	}{{"fast", m.Apply}, {"library", m.libraryApply}} {
		for _, c := range []struct {
			name          string
			live, applied map[string]any
		}{{"create", nil, applied}, {"first", loaded, applied}, {"again", appliedOnce, applied}, {"again-labelled", labelledOnce, labelled}} {
			b.Run(c.name+"/"+path.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := path.apply(c.live, c.applied, "apiconform-load", false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// firstApplyObjects are the load generator's object as its writer created
// it (loaded) and the configuration of its first apply by a manager of its
// own (applied).
func firstApplyObjects(b *testing.B, m *Manager) (loaded, applied map[string]any) {
	created := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "default", "uid": "u-1", "creationTimestamp": "2026-01-02T03:04:05Z",
			"labels": map[string]any{"load": "apiconform", "shard": "3"}},
		"data": map[string]any{"index": "3", "payload": "0123456789abcdef0123456789abcdef"}}
	loaded, err := m.Update(nil, created, "apiconform")
	if err != nil {
		b.Fatal(err)
	}
	applied = map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"},
		"data": map[string]any{"applied": "3"}}
	return loaded, applied
}

// BenchmarkApplyStored measures ApplyStored on BenchmarkApply/first's
// objects, live's managedFields kept as their stored bytes, to compare with
// BenchmarkApply/first/fast.
func BenchmarkApplyStored(b *testing.B) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		b.Fatal(err)
	}
	loaded, applied := firstApplyObjects(b, m)
	live, liveMF := asStored(b, loaded)
	b.Run("first", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, ok := m.ApplyStored(live, liveMF, applied, "apiconform-load"); !ok {
				b.Fatal("declined")
			}
		}
	})
}
