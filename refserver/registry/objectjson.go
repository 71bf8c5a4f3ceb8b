package registry

import (
	"context"
	"sort"
	"strconv"

	"github.com/apiconform/apiconform/refserver/rvplan"
)

// A single object's compact JSON: what a get answers and a write returns.

// Forms of the kept encodings (itemKey.form).
const (
	formItemName   = "item"
	formBareName   = "bare"
	formObjectName = "object"
)

func itemForm(bare bool) spliceForm {
	if bare {
		return formBare
	}
	return formItem
}

// ObjectKeys are m's keys in kube-apiserver's order for a single object:
// kind, apiVersion and metadata first (those present), then the rest sorted
// (the order its encoder gives typed objects).
func ObjectKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for _, k := range []string{"kind", "apiVersion", "metadata"} {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	start := len(keys)
	for k := range m {
		if k != "kind" && k != "apiVersion" && k != "metadata" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys[start:])
	return keys
}

// MarshalObject is the compact JSON of one object as kube-apiserver writes
// it: ObjectKeys' order at the top level, MarshalJSON's encoding of every
// value, and the encoder's trailing newline.
func MarshalObject(m map[string]any) ([]byte, error) {
	b := make([]byte, 0, 1024)
	b = append(b, '{')
	var err error
	for i, k := range ObjectKeys(m) {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = AppendJSON(b, k); err != nil {
			return nil, err
		}
		b = append(b, ':')
		if b, err = AppendJSON(b, m[k]); err != nil {
			return nil, err
		}
	}
	return append(b, '}', '\n'), nil
}

// GetJSON reads one object as Get does and returns its MarshalObject bytes,
// kept per revision like list items. In the storage version they are the
// stored bytes rearranged with resourceVersion spliced in (splice.go), and
// the answer a write of that revision kept (WrittenJSON) is used as is.
func (r *Registry) GetJSON(ctx context.Context, k *Kind, version, ns, name string, plan rvplan.Plan) ([]byte, error) {
	kv, err := r.getStored(ctx, k, ns, name, plan)
	if err != nil {
		return nil, err
	}
	key := itemKey{kind: k, version: version, key: kv.Key, revision: kv.ModRevision, form: formObjectName}
	if b, ok := r.written.get(key); ok {
		return b, nil
	}
	return r.items.get(key, func() ([]byte, error) {
		if k.storedAsServed(version) {
			if b, ok := spliceStored(kv.Value, kv.ModRevision, k.APIVersion(version), k.Kind, formObject); ok {
				return b, nil
			}
		}
		obj, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		return MarshalObject(obj)
	})
}

// writtenBudget is the size of the ring of get answers kept from writes:
// the last thousand or so objects of a kilobyte written.
const writtenBudget = 2 << 20

// WrittenJSON is the MarshalObject bytes of obj, an object a write has just
// stored in version (its resourceVersion names the revision): the write's
// answer. When the store still holds that revision, they come from the
// stored bytes, as a get of it would; they are kept as GetJSON's answer for
// that revision, so a read after a write (what controllers and tests do
// most) copies them. Only the storage version is kept, where no conversion
// could make a later decode differ from what was written.
func (r *Registry) WrittenJSON(ctx context.Context, k *Kind, version string, obj Object) ([]byte, error) {
	m := Meta(obj)
	name, _ := m["name"].(string)
	rev, err := strconv.ParseInt(str(m["resourceVersion"]), 10, 64)
	if !k.storedAsServed(version) || name == "" || err != nil || rev <= 0 {
		return MarshalObject(obj)
	}
	ns := ""
	if k.Namespaced {
		ns, _ = m["namespace"].(string)
	}
	key := itemKey{kind: k, version: version, key: keyOf(k, ns, name), revision: rev, form: formObjectName}
	var b []byte
	if kv, gerr := r.store.Get(ctx, key.key, 0); gerr == nil && kv.ModRevision == rev {
		b, _ = spliceStored(kv.Value, rev, k.APIVersion(version), k.Kind, formObject)
	}
	if b == nil {
		if b, err = MarshalObject(obj); err != nil {
			return nil, err
		}
	}
	r.written.put(key, b)
	return b, nil
}

// answer gives o.Answer, when asked for, the get answer of c's object as
// stored at rev: what WrittenJSON would give, from the bytes commit stored
// instead of a store read, and kept as it keeps it.
func (r *Registry) answer(k *Kind, version string, c *change, rev int64, o WriteOptions) {
	defer c.releaseStored() // the answer is the last to read c.stored
	if o.Answer == nil || c.stored == nil || rev <= 0 || !k.storedAsServed(version) {
		return
	}
	var b []byte
	ok := c.enc != nil && c.enc.layout.mode != 0 // noted as encode wrote the bytes: no scan of them
	if ok {
		b = c.enc.layout.splice(c.stored, rev, formObject)
	} else {
		b, ok = spliceStored(c.stored, rev, k.APIVersion(version), k.Kind, formObject)
	}
	if !ok {
		if c.mf != nil { // the object answers: with its kept managedFields
			if withKeptFields(c.obj, c.mf) != nil {
				return
			}
			c.mf = nil
		}
		var err error
		if b, err = MarshalObject(c.obj); err != nil {
			return // WrittenJSON answers (its error) instead
		}
	}
	r.written.put(itemKey{kind: k, version: version, key: c.key, revision: rev, form: formObjectName}, b)
	*o.Answer = b
}
