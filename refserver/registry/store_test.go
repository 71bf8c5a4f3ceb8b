package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// TestWriteAnswersConcurrent: writes running at once, each encoding into a
// buffer from encodeBuffers, store and answer their own object. A buffer
// given back before its write's answer was cut from it (or the store not
// keeping a copy) shows here as another write's bytes.
func TestWriteAnswersConcurrent(t *testing.T) {
	ctx := context.Background()
	r, k := newTestRegistry(t)
	const writers, writes = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- answersOwn(ctx, r, k, g, writes)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for g := range writers {
		name := fmt.Sprintf("cm-%d", g)
		kv, err := r.store.Get(ctx, keyOf(k, "default", name), 0)
		if err != nil {
			t.Fatal(err)
		}
		var got Object
		if err := json.Unmarshal(kv.Value, &got); err != nil {
			t.Fatalf("%s stored %q: %v", name, kv.Value, err)
		}
		if want := fmt.Sprintf("%s/%d", name, writes-1); str(meta(got)["name"]) != name || str(mapOf(got["data"])["v"]) != want {
			t.Errorf("%s stored %s, want its last value %s", name, kv.Value, want)
		}
	}
}

// answersOwn creates cm-<g> and updates it writes-1 times, each write
// answered from its stored bytes, and checks each answer names the object
// and holds the value just written.
func answersOwn(ctx context.Context, r *Registry, k *Kind, g, writes int) error {
	name := fmt.Sprintf("cm-%d", g)
	obj := func(i int) Object {
		return Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "labels": map[string]any{"writer": name}},
			"data":     map[string]any{"v": fmt.Sprintf("%s/%d", name, i)}}
	}
	for i := range writes {
		o := WriteOptions{FieldManager: name, Answer: new([]byte)}
		var err error
		if i == 0 {
			_, err = r.Create(ctx, k, "v1", "default", obj(i), o)
		} else {
			_, err = r.UpdateFrom(ctx, k, "v1", "default", name, func() (Object, error) { return obj(i), nil }, o)
		}
		if err != nil {
			return fmt.Errorf("%s write %d: %w", name, i, err)
		}
		var got Object
		if err := json.Unmarshal(Answered(o.Answer), &got); err != nil {
			return fmt.Errorf("%s write %d answered %q: %w", name, i, Answered(o.Answer), err)
		}
		if want := fmt.Sprintf("%s/%d", name, i); str(meta(got)["name"]) != name || str(mapOf(got["data"])["v"]) != want {
			return fmt.Errorf("%s write %d answered %s, want its value %s", name, i, Answered(o.Answer), want)
		}
	}
	return nil
}
