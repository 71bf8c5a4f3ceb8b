package registry

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/rvplan"
)

func benchSelector(b *testing.B, s string) labels.Selector {
	sel, err := labels.Parse(s)
	if err != nil {
		b.Fatal(err)
	}
	return sel
}

// BenchmarkListSelector: a list of 1,000 configmaps with a label selector
// matching a tenth of them (the list-selector bench phase), through the
// label index and through the scan it replaces.
func BenchmarkListSelector(b *testing.B) {
	r, k := newTestRegistry(b)
	for i := range 1000 {
		benchStored(b, r, k, i)
	}
	sel := Selector{Labels: benchSelector(b, "shard=3")}
	for _, path := range []struct {
		name string
		ctx  context.Context
	}{
		{"index", context.Background()},
		{"scan", context.WithValue(context.Background(), scanOnlyKey{}, true)},
	} {
		b.Run(path.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				el, err := r.ListEncoded(path.ctx, k, "v1", "default", rvplan.Plan{Mode: rvplan.Latest}, sel, false)
				if err != nil || len(el.Raw) != 100 {
					b.Fatalf("%v, %d items", err, len(el.Raw))
				}
			}
		})
	}
}

// BenchmarkCreateLabelled: a create of a labelled configmap while its kind
// is indexed (what the index adds to a write).
func BenchmarkCreateLabelled(b *testing.B) {
	for _, indexed := range []bool{true, false} {
		name := "unindexed"
		if indexed {
			name = "indexed"
		}
		b.Run(name, func(b *testing.B) {
			r, k := newTestRegistry(b)
			if indexed {
				if _, err := r.ListEncoded(context.Background(), k, "v1", "default", rvplan.Plan{Mode: rvplan.Latest}, Selector{Labels: benchSelector(b, "shard=3")}, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for i := range b.N {
				benchStored(b, r, k, i)
			}
		})
	}
}

// BenchmarkWatchInitialSelector: the initial events of a watch with a label
// selector (as a reflector's streaming list with a selector asks for) over
// 1,000 configmaps, a tenth of them selected.
func BenchmarkWatchInitialSelector(b *testing.B) {
	r, k := newTestRegistry(b)
	for i := range 1000 {
		benchStored(b, r, k, i)
	}
	sel := Selector{Labels: benchSelector(b, "shard=3")}
	plan := rvplan.Plan{Mode: rvplan.Latest, InitialEvents: true}
	b.ReportAllocs()
	for range b.N {
		w, err := r.Watch(context.Background(), k, "v1", "default", plan, sel)
		if err != nil {
			b.Fatal(err)
		}
		for range 100 {
			if ev := <-w.Events(); ev.Type != Added {
				b.Fatalf("%s event, want ADDED", ev.Type)
			}
		}
		w.Stop()
	}
}
