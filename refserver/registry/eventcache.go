package registry

import "sync"

// eventCache shares the objects decoded from one watch event between all the
// watchers of a kind and version. Each watcher used to decode the same stored
// bytes itself, which dominated the cost of fanning one write out to many
// watchers. Objects handed out are shared, so watch consumers treat them as
// read-only (they only encode them or read fields).
type eventCache struct {
	mu    sync.Mutex
	items map[eventKey]Object
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

// eventCacheSize bounds the cache; watchers read an event within moments of
// each other, so a few thousand recent values cover every watcher of a burst.
const eventCacheSize = 4096

func newEventCache() *eventCache {
	return &eventCache{items: make(map[eventKey]Object, eventCacheSize), ring: make([]eventKey, eventCacheSize)}
}

// get returns the cached object for key, or decodes it with decode and keeps
// it. A nil result is not cached (the bytes did not decode).
func (c *eventCache) get(key eventKey, decode func() Object) Object {
	c.mu.Lock()
	if obj, ok := c.items[key]; ok {
		c.mu.Unlock()
		return obj
	}
	c.mu.Unlock()
	// Decode outside the lock; two watchers may race to decode the same
	// event, and the first stored copy wins.
	obj := decode()
	if obj == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prior, ok := c.items[key]; ok {
		return prior
	}
	if old := c.ring[c.next]; old.kind != nil {
		delete(c.items, old)
	}
	c.ring[c.next] = key
	c.next = (c.next + 1) % len(c.ring)
	c.items[key] = obj
	return obj
}
