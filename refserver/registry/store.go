package registry

import (
	"context"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/storage"
)

// Keys: /registry/<group or "core">/<resource>/[<namespace>/]<name>; a kind
// stored as another (Kind.StoredAs) has that kind's keys.

func basePrefix(k *Kind) string {
	if k.StoredAs != nil {
		k = k.StoredAs
	}
	g := k.Group
	if g == "" {
		g = "core"
	}
	return "/registry/" + g + "/" + k.Resource + "/"
}

// prefixOf is the key prefix of a collection (ns "" = every namespace).
func prefixOf(k *Kind, ns string) string {
	if k.Namespaced && ns != "" {
		return basePrefix(k) + ns + "/"
	}
	return basePrefix(k)
}

func keyOf(k *Kind, ns, name string) string {
	if k.Namespaced {
		return basePrefix(k) + ns + "/" + name
	}
	return basePrefix(k) + name
}

// op is what a write does to the stored object.
type op int

const (
	opNone   op = iota // nothing changes: no write
	opCreate           // store a new object
	opPut              // replace the object read at modRev
	opRemove           // remove the object read at modRev
)

// change is one write decided by the write path: the object as it ends up
// (what the request answers with) and what to do with it.
type change struct {
	op     op
	key    string
	modRev int64  // opPut, opRemove: the revision the change was computed from
	obj    Object // opCreate, opPut: the object to store, in the request version
	old    Object // the object before the change (nil on create)
	stored []byte // set by commit: the value stored for obj (nil when none was)
	// mf, when set, is obj's metadata.managedFields as encoded, which obj
	// itself then lacks (keptFields): what commit stores for them.
	mf []byte
	// enc is what stored lies in, an encodeBuffers buffer, back to the
	// pool once the answer is cut from it (releaseStored).
	enc *encodeBuffer
}

// encodeBuffer is what commit encodes an object into for the store, which
// keeps a copy of the bytes, and where it notes their layout for the answer
// (its mode 0: not noted, and the answer scans them). Pooled: a buffer per
// write was a twentieth of a create's allocations and half of its bytes;
// and kept off the stack, which a write's goroutine grows only so far.
type encodeBuffer struct {
	b      []byte
	layout spliceLayout
}

var encodeBuffers = sync.Pool{New: func() any { return &encodeBuffer{b: make([]byte, 0, 1024)} }}

// maxPooledEncode: a buffer grown past this by a large object is left to
// the collector instead of being kept for the small ones.
const maxPooledEncode = 64 << 10

// releaseStored gives c's encode buffer back: c.stored is gone with it.
func (c *change) releaseStored() {
	if c.enc != nil && cap(c.enc.b) <= maxPooledEncode {
		encodeBuffers.Put(c.enc)
	}
	c.enc, c.stored = nil, nil
}

// commit performs c, the one place where dry-run is decided: a dry run
// stops before the store, answering what the store would refuse (a create
// of an existing name). A stored create or put sets the object's
// resourceVersion and c.stored, and the kind's AfterWrite hook runs. It
// returns the revision of the write (0 when nothing was stored).
func (r *Registry) commit(ctx context.Context, k *Kind, c *change, dryRun bool) (int64, error) {
	if c.op == opNone {
		return 0, nil
	}
	if dryRun && !r.faults.Has(faults.DryRunPersists) {
		if c.op == opCreate {
			if _, err := r.store.Get(ctx, c.key, 0); err == nil {
				return 0, storage.ErrKeyExists
			}
		}
		return 0, nil
	}
	var rev int64
	var err error
	switch c.op {
	case opCreate, opPut:
		enc := encodeBuffers.Get().(*encodeBuffer)
		enc.layout = spliceLayout{}
		val, eerr := encode(enc.b[:0], k, c.obj, c.mf, &enc.layout)
		if eerr != nil {
			return 0, apierrors.NewInternalError(eerr)
		}
		enc.b = val[:0] // its capacity, grown or not, for the next write
		// The object's labels go to the label index and cache as they are.
		if c.op == opCreate {
			rev, err = r.store.create(ctx, c.key, val, writtenLabels(k, c))
		} else {
			rev, err = r.store.update(ctx, c.key, val, c.modRev, writtenLabels(k, c))
		}
		if err == nil {
			c.stored, c.enc = val, enc
		}
	case opRemove:
		_, rev, err = r.store.Delete(ctx, c.key, c.modRev)
	}
	if err != nil {
		return 0, err
	}
	r.noteExpiry(k, c, rev)
	if c.op == opRemove {
		if k.AfterWrite != nil {
			k.AfterWrite(nil, c.old)
		}
		return rev, nil
	}
	meta(c.obj)["resourceVersion"] = formatRev(rev)
	if k.AfterWrite != nil {
		k.AfterWrite(c.obj, c.old)
	}
	return rev, nil
}
