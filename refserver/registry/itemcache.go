package registry

import (
	"sync"

	"github.com/apiconform/apiconform/refserver/storage"
)

// itemCache keeps the JSON of list items (and get answers), encoded once per stored revision,
// version and form, so paging through a collection copies bytes instead of
// decoding and re-encoding every stored object per request (kube-apiserver's
// watch cache does the same with its cached serializations). A key's
// revision identifies its value, so entries never go stale; old ones are
// dropped first-in first-out once the cache holds more than its byte budget.
type itemCache struct {
	mu     sync.Mutex
	items  map[itemKey][]byte
	order  []itemKey // insertion order, for eviction
	bytes  int
	budget int
}

// itemKey names one encoding: the stored key at a revision, rendered in
// version by kind (a CRD update registers a new *Kind, so its schema changes
// miss), in one form.
type itemKey struct {
	kind     *Kind
	version  string
	key      string
	revision int64
	form     string // formItemName, formBareName (list items) or formObjectName (objectjson.go)
}

// itemCacheBudget bounds the encoded bytes kept: enough for a paged
// collection of tens of thousands of small objects, small beside the store.
const itemCacheBudget = 32 << 20

func newItemCache(budget int) *itemCache {
	return &itemCache{items: map[itemKey][]byte{}, budget: budget}
}

// get returns the cached bytes for key or keeps what encode makes; an
// encoding error is returned and nothing is kept.
func (c *itemCache) get(key itemKey, encode func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	b, ok := c.items[key]
	c.mu.Unlock()
	if ok {
		return b, nil
	}
	b, err := encode()
	if err != nil || len(b) > c.budget {
		return b, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prior, ok := c.items[key]; ok {
		return prior, nil
	}
	for c.bytes+len(b) > c.budget && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.items[old])
		delete(c.items, old)
	}
	c.items[key] = b
	c.order = append(c.order, key)
	c.bytes += len(b)
	return b, nil
}

// encodeItem renders a stored object as a list item in version: the bytes
// json.Marshal gives the decoded object (sorted keys), without kind and
// apiVersion when bare, as kube-apiserver lists items of built-in kinds. In
// the storage version (no conversion, no pruning) they are the stored bytes
// with resourceVersion spliced in (splice.go), so even a miss decodes nothing.
func (r *Registry) encodeItem(k *Kind, version string, kv storage.KeyValue, bare bool) ([]byte, error) {
	form := formItemName
	if bare {
		form = formBareName
	}
	return r.items.get(itemKey{kind: k, version: version, key: kv.Key, revision: kv.ModRevision, form: form}, func() ([]byte, error) {
		if k.storedAsServed(version) {
			if b, ok := spliceStored(kv.Value, kv.ModRevision, k.APIVersion(version), k.Kind, itemForm(bare)); ok {
				return b, nil
			}
		}
		return r.decodeItem(k, version, kv, bare)
	})
}

// decodeItem is encodeItem's bytes by decoding the stored value and encoding it.
func (r *Registry) decodeItem(k *Kind, version string, kv storage.KeyValue, bare bool) ([]byte, error) {
	obj, err := r.decode(k, version, kv, 0)
	if err != nil {
		return nil, err
	}
	if bare {
		delete(obj, "kind")
		delete(obj, "apiVersion")
	}
	return MarshalJSON(obj)
}
