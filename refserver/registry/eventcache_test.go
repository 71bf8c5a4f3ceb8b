package registry

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestEventCacheDecodesOncePerEvent(t *testing.T) {
	c := newEventCache()
	k := &Kind{Resource: "configmaps"}
	decodes := 0
	decode := func() Object { decodes++; return Object{"n": decodes} }
	key := eventKey{kind: k, version: "v1", revision: 7}

	first := c.get(key, decode).obj
	for i := 0; i < 100; i++ { // a hundred watchers of the same event
		if got := c.get(key, decode).obj; got["n"] != first["n"] {
			t.Fatalf("watcher %d got a different object: %v vs %v", i, got, first)
		}
	}
	if decodes != 1 {
		t.Fatalf("decoded %d times, want once", decodes)
	}
	tests := []eventKey{
		{kind: k, version: "v1", revision: 7, prev: true}, // the value before the write
		{kind: k, version: "v2", revision: 7},             // another version
		{kind: &Kind{Resource: "secrets"}, version: "v1", revision: 7},
		{kind: k, version: "v1", revision: 8},
	}
	for _, other := range tests {
		before := decodes
		c.get(other, decode)
		if decodes != before+1 {
			t.Errorf("%+v shared a cached object with %+v", other, key)
		}
	}
	failed := 0
	for range 3 {
		if c.get(eventKey{kind: k, revision: 9}, func() Object { failed++; return nil }).obj != nil {
			t.Fatal("a failed decode must give nil")
		}
	}
	if failed != 1 {
		t.Fatalf("bytes that did not decode were decoded %d times, want once", failed)
	}
}

// TestEventCacheConcurrentDecodeOnce: the watchers that want an event while
// it is being decoded wait for that decode rather than decode it too, and a
// decode that panics leaves none of them waiting.
func TestEventCacheConcurrentDecodeOnce(t *testing.T) {
	c := newEventCache()
	k := &Kind{Resource: "configmaps"}
	const watchers = 50
	var decodes atomic.Int32
	release := make(chan struct{})
	decode := func() Object {
		decodes.Add(1)
		<-release
		return Object{"n": 1}
	}
	var wg sync.WaitGroup
	got := make(chan Object, watchers)
	for range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got <- c.get(eventKey{kind: k, revision: 3}, decode).obj
		}()
	}
	for decodes.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others arrive while the first decodes
	close(release)
	wg.Wait()
	close(got)
	for o := range got {
		if o["n"] != 1 {
			t.Fatalf("a watcher got %v", o)
		}
	}
	if n := decodes.Load(); n != 1 {
		t.Fatalf("%d concurrent watchers decoded the event %d times, want once", watchers, n)
	}

	func() {
		defer func() { _ = recover() }()
		c.get(eventKey{kind: k, revision: 4}, func() Object { panic("decode") })
	}()
	done := make(chan Object)
	go func() { done <- c.get(eventKey{kind: k, revision: 4}, decode).obj }()
	select {
	case o := <-done:
		if o != nil {
			t.Fatalf("after a decode that panicked: %v, want nil", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a watcher waits for a decode that panicked")
	}
}

func TestEventCacheIsBounded(t *testing.T) {
	c := newEventCache()
	k := &Kind{Resource: "configmaps"}
	for rev := int64(1); rev <= 3*eventCacheSize; rev++ {
		c.get(eventKey{kind: k, revision: rev}, func() Object { return Object{} })
	}
	if len(c.items) != eventCacheSize {
		t.Fatalf("cache holds %d objects, want at most %d", len(c.items), eventCacheSize)
	}
	if _, ok := c.items[eventKey{kind: k, revision: 1}]; ok {
		t.Fatal("the oldest event should have been evicted")
	}
	if _, ok := c.items[eventKey{kind: k, revision: 3 * eventCacheSize}]; !ok {
		t.Fatal("the newest event should be cached")
	}
}

// An event's bytes are rendered once per form and event type for all its
// watchers; objects the cache does not hold are rendered on every call.
func TestEncodedEventRendersOncePerForm(t *testing.T) {
	r := &Registry{events: newEventCache()}
	k := &Kind{Resource: "configmaps"}
	e := r.events.get(eventKey{kind: k, version: "v1", revision: 5}, func() Object { return Object{"n": 1} })
	renders := 0
	render := func(ev WatchEvent) ([]byte, error) {
		renders++
		return []byte(ev.Type), nil
	}
	ev := WatchEvent{Type: Modified, Object: e.obj, Revision: 5, cached: e}
	for i := 0; i < 100; i++ {
		if b, err := r.EncodedEvent(ev, "json", render); err != nil || string(b) != Modified {
			t.Fatalf("watcher %d: %q, %v", i, b, err)
		}
	}
	if renders != 1 {
		t.Fatalf("rendered %d times, want once", renders)
	}
	other := r.events.get(eventKey{kind: k, version: "v1", revision: 6}, func() Object { return Object{"n": 1} })
	for _, tt := range []struct {
		name string
		ev   WatchEvent
		form string
	}{
		{"another form", ev, "protobuf"},
		{"another type (a selector's ADDED)", WatchEvent{Type: Added, Object: e.obj, Revision: 5, cached: e}, "json"},
		{"an object not from the cache (an initial event)", WatchEvent{Type: Modified, Object: Object{"n": 1}, Revision: 5}, "json"},
		{"another event", WatchEvent{Type: Modified, Object: other.obj, Revision: 6, cached: other}, "json"},
		{"a bookmark", WatchEvent{Type: Bookmark, Revision: 5}, "json"},
	} {
		before := renders
		if b, _ := r.EncodedEvent(tt.ev, tt.form, render); string(b) != tt.ev.Type {
			t.Errorf("%s: rendered %q", tt.name, b)
		}
		if renders != before+1 {
			t.Errorf("%s: not rendered for itself", tt.name)
		}
	}
}
