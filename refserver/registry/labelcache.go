package registry

import (
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	sigsjson "sigs.k8s.io/json"

	"github.com/apiconform/apiconform/refserver/storage"
)

// labelCache keeps the labels of stored objects, read once per stored
// revision, so a list with a label selector matches every object of the
// collection without parsing each stored value again (kube-apiserver's
// watch cache keeps each object's labels beside it for the same reason).
// A key's revision identifies its value, so entries never go stale; the
// oldest are dropped once the cache holds labelCacheSize of them.
type labelCache struct {
	mu    sync.Mutex
	items map[labelKey]storedLabels
	ring  []labelKey // insertion order, for eviction
	next  int
	full  bool // every ring slot names an entry
}

type labelKey struct {
	key      string
	revision int64
}

// storedLabels is what a stored value's metadata.labels read as; ok is false
// when the value did not parse (the caller decodes it and reports why).
type storedLabels struct {
	set labels.Set
	ok  bool
}

// labelCacheSize bounds the entries: a few collections of the size the
// benchmarks list, a few megabytes.
const labelCacheSize = 1 << 15

func newLabelCache() *labelCache {
	return &labelCache{items: make(map[labelKey]storedLabels), ring: make([]labelKey, labelCacheSize)}
}

// get returns kv's labels, parsing the stored value on a miss.
func (c *labelCache) get(kv storage.KeyValue) storedLabels {
	key := labelKey{key: kv.Key, revision: kv.ModRevision}
	c.mu.Lock()
	sl, hit := c.items[key]
	c.mu.Unlock()
	if hit {
		return sl
	}
	sl = parseLabels(kv.Value)
	c.put(key, sl)
	return sl
}

// lookup returns the labels of the value stored under key at revision rev
// when the cache holds them.
func (c *labelCache) lookup(key string, rev int64) (storedLabels, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sl, hit := c.items[labelKey{key: key, revision: rev}]
	return sl, hit
}

// put keeps sl as the labels of key (at most once).
func (c *labelCache) put(key labelKey, sl storedLabels) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, hit := c.items[key]; hit {
		return
	}
	if c.full {
		delete(c.items, c.ring[c.next])
	}
	c.ring[c.next] = key
	c.next = (c.next + 1) % len(c.ring)
	c.full = c.full || c.next == 0
	c.items[key] = sl
}

// written keeps the labels of obj, just stored under key at revision rev,
// when the stored bytes are obj's own JSON (no conversion on the way to the
// storage version): what parsing them would give, without parsing them.
func (c *labelCache) written(k *Kind, key string, rev int64, obj Object) {
	if str(obj["apiVersion"]) != k.APIVersion(k.StorageVersion()) {
		return
	}
	lm, _ := meta(obj)["labels"].(map[string]any)
	set := make(labels.Set, len(lm))
	for name, v := range lm {
		set[name] = str(v)
	}
	c.put(labelKey{key: key, revision: rev}, storedLabels{set: set, ok: true})
}

// parseLabels reads metadata.labels of a stored value as Selector.Matches
// sees them in the decoded object (a value that is not a string reads as "").
func parseLabels(value []byte) storedLabels {
	var stored struct {
		Metadata struct {
			Labels map[string]any `json:"labels"`
		} `json:"metadata"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(value, &stored); err != nil {
		return storedLabels{}
	}
	set := make(labels.Set, len(stored.Metadata.Labels))
	for k, v := range stored.Metadata.Labels {
		set[k] = str(v)
	}
	return storedLabels{set: set, ok: true}
}
