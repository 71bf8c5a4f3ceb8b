package registry

import (
	"slices"
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
//
// Entries are found by revision alone: every write takes a revision of its
// own, and hashing an integer costs a write less than hashing its key (the
// entry holds the key, which a lookup checks).
type labelCache struct {
	mu    sync.Mutex
	items map[int64]labelEntry
	ring  []int64 // revisions in insertion order, for eviction
	next  int
	full  bool // every ring slot names an entry
}

type labelKey struct {
	key      string
	revision int64
}

type labelEntry struct {
	key    string
	labels storedLabels
}

// storedLabels is what a stored value's metadata.labels read as; ok is false
// when the value did not parse (the caller decodes it and reports why).
type storedLabels struct {
	set labels.Labels // a compactLabels, boxed once: matching it allocates nothing
	ok  bool
}

// compactLabels are labels as key/value pairs sorted by key: for the few
// labels an object carries, a quarter of a map's memory (the cache holds
// tens of thousands of them) and a selector's lookups a short scan.
type compactLabels []string // key, value, key, value, ...

var _ labels.Labels = compactLabels(nil)

func newCompactLabels[V any](m map[string]V, value func(V) string) compactLabels {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	l := make(compactLabels, 0, 2*len(keys))
	for _, k := range keys {
		l = append(l, k, value(m[k]))
	}
	return l
}

func (l compactLabels) Lookup(key string) (string, bool) {
	for i := 0; i < len(l); i += 2 {
		if l[i] == key {
			return l[i+1], true
		}
	}
	return "", false
}

func (l compactLabels) Has(key string) bool { _, ok := l.Lookup(key); return ok }

func (l compactLabels) Get(key string) string { v, _ := l.Lookup(key); return v }

// labelCacheSize bounds the entries: a few collections of the size the
// benchmarks list, a few megabytes.
const labelCacheSize = 1 << 15

func newLabelCache() *labelCache {
	return &labelCache{items: make(map[int64]labelEntry), ring: make([]int64, labelCacheSize)}
}

// get returns kv's labels, parsing the stored value on a miss.
func (c *labelCache) get(kv storage.KeyValue) storedLabels {
	if sl, hit := c.lookup(kv.Key, kv.ModRevision); hit {
		return sl
	}
	sl := parseLabels(kv.Value)
	c.put(labelKey{key: kv.Key, revision: kv.ModRevision}, sl)
	return sl
}

// lookup returns the labels of the value stored under key at revision rev
// when the cache holds them.
func (c *labelCache) lookup(key string, rev int64) (storedLabels, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, hit := c.items[rev]
	if !hit || e.key != key {
		return storedLabels{}, false
	}
	return e.labels, true
}

// put keeps sl as the labels of key (at most once; another key's at the
// same revision is kept instead, and this key's lookups miss).
func (c *labelCache) put(key labelKey, sl storedLabels) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, hit := c.items[key.revision]; hit {
		return
	}
	if c.full {
		delete(c.items, c.ring[c.next])
	}
	c.ring[c.next] = key.revision
	c.next = (c.next + 1) % len(c.ring)
	c.full = c.full || c.next == 0
	c.items[key.revision] = labelEntry{key: key.key, labels: sl}
}

// parseLabels reads metadata.labels of a stored value as Selector.Matches
// sees them in the decoded object (a value that is not a string reads as "").
func parseLabels(value []byte) storedLabels {
	if l, ok := canonicalLabels(value); ok {
		return storedLabels{set: l, ok: true}
	}
	return decodeLabels(value)
}

// decodeLabels is parseLabels by decoding the value.
func decodeLabels(value []byte) storedLabels {
	var stored struct {
		Metadata struct {
			Labels map[string]any `json:"labels"`
		} `json:"metadata"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(value, &stored); err != nil {
		return storedLabels{}
	}
	return storedLabels{set: newCompactLabels(stored.Metadata.Labels, str), ok: true}
}

// canonicalLabels reads metadata.labels straight from a value in the
// encoding the registry stores (MarshalJSON's: keys sorted, so none twice,
// and its escapes) whose labels are all strings, as parseLabels' decode
// would, in one pass without reflection (about a tenth of its time: a
// watch's label filter reads them under the store's lock). ok false for
// any other value, which the decode then reads.
func canonicalLabels(value []byte) (compactLabels, bool) {
	s := &spliceScan{b: value}
	var out compactLabels
	_, ok := s.eachMetadataMember(func(key []byte, esc bool, at int) (int, bool) {
		if esc || string(key) != "labels" {
			return s.value(at, 2)
		}
		return s.eachMember(at, 2, func(key []byte, esc bool, at int) (int, bool) {
			v, vesc, end, ok := s.str(at)
			if ok {
				out = append(out, decodedString(key, esc), decodedString(v, vesc))
			}
			return end, ok
		})
	})
	return out, ok
}

// decodedString is a scanned string's contents as a string.
func decodedString(b []byte, esc bool) string {
	if esc {
		b = unescape(b)
	}
	return string(b)
}
