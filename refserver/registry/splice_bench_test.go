package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// benchConfigMap is a configmap of about 1 KiB once stored, with the
// metadata a created object has (uid, creationTimestamp, managedFields).
func benchConfigMap(i int) Object {
	return Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": fmt.Sprintf("cm-%05d", i), "namespace": "default",
			"labels":      map[string]any{"load": "apiconform", "shard": fmt.Sprint(i % 10)},
			"annotations": map[string]any{"note": "<b>\"quoted\" & escaped</b>"},
		},
		"data": map[string]any{"index": fmt.Sprint(i), "payload": strings.Repeat("0123456789abcdef", 40)},
	}
}

// benchStored is configmap i as the store holds it, created through the registry.
func benchStored(tb testing.TB, r *Registry, k *Kind, i int) storage.KeyValue {
	tb.Helper()
	ctx := context.Background()
	obj := benchConfigMap(i)
	name := str(meta(obj)["name"])
	if _, err := r.Create(ctx, k, "v1", "default", obj, WriteOptions{FieldManager: "bench"}); err != nil {
		tb.Fatal(err)
	}
	kv, err := r.store.Get(ctx, keyOf(k, "default", name), 0)
	if err != nil {
		tb.Fatal(err)
	}
	return kv
}

// BenchmarkItemSplice: one list item from stored bytes, by the splice and
// by decoding and encoding again (what a cache miss cost before).
func BenchmarkItemSplice(b *testing.B) {
	r, k := newTestRegistry(b)
	kv := benchStored(b, r, k, 1)
	b.Logf("stored value: %d bytes", len(kv.Value))
	for _, bc := range []struct {
		name string
		item func() ([]byte, error)
	}{
		{"splice", func() ([]byte, error) {
			b, ok := spliceStored(kv.Value, kv.ModRevision, "v1", "ConfigMap", formItem)
			if !ok {
				return nil, fmt.Errorf("splice refused %s", kv.Value)
			}
			return b, nil
		}},
		{"decode-encode", func() ([]byte, error) { return r.decodeItem(k, "v1", kv, false) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(kv.Value)))
			for range b.N {
				if _, err := bc.item(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListEncodedCold: a list of 1,000 configmaps of 1 KiB with an
// empty item cache, as the first walk after the writes: every item misses.
func BenchmarkListEncodedCold(b *testing.B) {
	r, k := newTestRegistry(b)
	for i := range 1000 {
		benchStored(b, r, k, i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for range b.N {
		b.StopTimer()
		r.items = newItemCache(itemCacheBudget)
		b.StartTimer()
		el, err := r.ListEncoded(ctx, k, "v1", "default", rvplan.Plan{Mode: rvplan.Latest}, Selector{}, false)
		if err != nil || len(el.Raw) != 1000 {
			b.Fatalf("%v, %d items", err, len(el.Raw))
		}
	}
}
