package registry

import (
	"errors"
	"sync"
	"sync/atomic"
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
	mu    sync.RWMutex
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
	mu        sync.Mutex // guards encodings
	encodings map[encodingKey]*encoding
	// first is the first rendering asked for, which the watchers of an
	// event mostly all want: they read it without the lock.
	first atomic.Pointer[keyedEncoding]
}

type keyedEncoding struct {
	key encodingKey
	enc *encoding
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

// get returns the entry for key, its object decoded with decode once: the
// watchers that want it while it is being decoded wait for that decode
// instead of racing it (a hundred watchers woken by one write did, each
// decoding the same bytes). A nil object (the bytes did not decode) is kept
// as well; the same bytes give the same answer. Most calls find the entry,
// so they share the read lock.
func (c *eventCache) get(key eventKey, decode func() Object) *eventEntry {
	c.mu.RLock()
	e, ok := c.items[key]
	c.mu.RUnlock()
	if !ok {
		c.mu.Lock()
		if e, ok = c.items[key]; !ok {
			e = &eventEntry{decoded: make(chan struct{})}
			if old := c.ring[c.next]; old.kind != nil {
				delete(c.items, old)
			}
			c.ring[c.next] = key
			c.next = (c.next + 1) % len(c.ring)
			c.items[key] = e
		}
		c.mu.Unlock()
	}
	if ok {
		<-e.decoded
		return e
	}
	defer close(e.decoded) // even if decode panics, so that no watcher waits forever
	e.obj = decode()
	return e
}

// encoded returns render's bytes for the event of type eventType with the
// entry's object, rendering them once per form and type.
func (e *eventEntry) encoded(eventType, form string, render func() ([]byte, error)) ([]byte, error) {
	ek := encodingKey{form: form, eventType: eventType}
	if f := e.first.Load(); f != nil && f.key == ek {
		<-f.enc.done
		return f.enc.b, f.enc.err
	}
	e.mu.Lock()
	enc, rendering := e.encodings[ek]
	if !rendering {
		if e.encodings == nil {
			e.encodings = map[encodingKey]*encoding{}
		}
		enc = &encoding{done: make(chan struct{})}
		e.encodings[ek] = enc
		e.first.CompareAndSwap(nil, &keyedEncoding{key: ek, enc: enc})
	}
	e.mu.Unlock()
	if rendering {
		<-enc.done
		return enc.b, enc.err
	}
	func() {
		defer close(enc.done) // even if render panics, no watcher waits forever
		enc.err = errRenderFailed
		enc.b, enc.err = render()
	}()
	return enc.b, enc.err
}

// EncodedEvent returns render's bytes for ev, rendered once for all the
// watchers that receive the same event in the same form (form names
// render's output: one form, one rendering). Events not taken from the
// cache (initial events, bookmarks) are rendered on each call.
func (r *Registry) EncodedEvent(ev WatchEvent, form string, render func(WatchEvent) ([]byte, error)) ([]byte, error) {
	if ev.cached != nil && ev.Object != nil && (ev.Type == Added || ev.Type == Modified || ev.Type == Deleted) {
		return ev.cached.encoded(ev.Type, form, func() ([]byte, error) { return render(ev) })
	}
	return render(ev)
}
