package registry

import (
	"errors"
	"reflect"
	"sync"
)

// errRenderFailed is what the watchers waiting for a rendering get when it panicked.
var errRenderFailed = errors.New("rendering the watch event failed")

// eventCache shares the objects decoded from one watch event between all the
// watchers of a kind and version, and the bytes each wire form of the event
// is rendered to (EncodedEvent). Each watcher used to decode and encode the
// same stored bytes itself, which dominated the cost of fanning one write out
// to many watchers. Objects handed out are shared, so watch consumers treat
// them as read-only (they only encode them or read fields).
type eventCache struct {
	mu    sync.Mutex
	items map[eventKey]*eventEntry
	ring  []eventKey // insertion order, for eviction
	next  int
}

// eventKey names one decoded value: a write's revision identifies the key
// and value, and prev says whether it is the value before the write.
type eventKey struct {
	kind     *Kind
	version  string
	revision int64
	prev     bool
}

// eventEntry is one decoded value and its renderings, one per form and event
// type (a selector makes one write ADDED for some watchers, MODIFIED for others).
type eventEntry struct {
	decoded   chan struct{} // closed once obj is set
	obj       Object
	encodings map[encodingKey]*encoding
}

type encodingKey struct{ form, eventType string }

// encoding is one rendering; done closes once b and err are set, so the
// watchers that want it while it is being rendered wait instead of rendering it too.
type encoding struct {
	done chan struct{}
	b    []byte
	err  error
}

// eventCacheSize bounds the cache; watchers read an event within moments of
// each other, so a few thousand recent values cover every watcher of a burst.
const eventCacheSize = 4096

func newEventCache() *eventCache {
	return &eventCache{items: make(map[eventKey]*eventEntry, eventCacheSize), ring: make([]eventKey, eventCacheSize)}
}

// get returns the cached object for key, decoding it with decode once: the
// watchers that want it while it is being decoded wait for that decode
// instead of racing it (a hundred watchers woken by one write did, each
// decoding the same bytes). A nil result (the bytes did not decode) is
// kept as well; the same bytes give the same answer.
func (c *eventCache) get(key eventKey, decode func() Object) Object {
	c.mu.Lock()
	if e, ok := c.items[key]; ok {
		c.mu.Unlock()
		<-e.decoded
		return e.obj
	}
	e := &eventEntry{decoded: make(chan struct{})}
	if old := c.ring[c.next]; old.kind != nil {
		delete(c.items, old)
	}
	c.ring[c.next] = key
	c.next = (c.next + 1) % len(c.ring)
	c.items[key] = e
	c.mu.Unlock()
	var obj Object
	defer func() {
		// Set under the lock encoded reads it with; closed even if decode
		// panics, so that no watcher waits forever.
		c.mu.Lock()
		e.obj = obj
		c.mu.Unlock()
		close(e.decoded)
	}()
	obj = decode()
	return obj
}

// encoded returns render's bytes for the event (type, obj) cached under key,
// rendering them once per form and type. ok is false when obj is not the
// cached object (an initial event, a bookmark, an evicted entry): the caller
// renders it itself. The entry holds obj, so an identical map pointer means
// the very same object.
func (c *eventCache) encoded(key eventKey, eventType string, obj Object, form string, render func() ([]byte, error)) (b []byte, ok bool, err error) {
	if obj == nil {
		return nil, false, nil
	}
	ek := encodingKey{form: form, eventType: eventType}
	c.mu.Lock()
	e, found := c.items[key]
	if !found || reflect.ValueOf(e.obj).UnsafePointer() != reflect.ValueOf(obj).UnsafePointer() {
		c.mu.Unlock()
		return nil, false, nil
	}
	enc, rendering := e.encodings[ek]
	if !rendering {
		if e.encodings == nil {
			e.encodings = map[encodingKey]*encoding{}
		}
		enc = &encoding{done: make(chan struct{})}
		e.encodings[ek] = enc
	}
	c.mu.Unlock()
	if rendering {
		<-enc.done
		return enc.b, true, enc.err
	}
	func() {
		defer close(enc.done) // even if render panics, no watcher waits forever
		enc.err = errRenderFailed
		enc.b, enc.err = render()
	}()
	return enc.b, true, enc.err
}

// EncodedEvent returns render's bytes for ev, a watch event of k in version,
// rendered once for all the watchers that receive the same event in the same
// form (form names render's output: one form, one rendering). Events no other
// watcher shares are rendered on each call.
func (r *Registry) EncodedEvent(k *Kind, version string, ev WatchEvent, form string, render func(WatchEvent) ([]byte, error)) ([]byte, error) {
	if ev.Type == Added || ev.Type == Modified || ev.Type == Deleted {
		key := eventKey{kind: k, version: version, revision: ev.Revision}
		if b, ok, err := r.events.encoded(key, ev.Type, ev.Object, form, func() ([]byte, error) { return render(ev) }); ok {
			return b, err
		}
	}
	return render(ev)
}
