package registry

import (
	"context"
	"errors"

	"github.com/apiconform/apiconform/refserver/storage"
)

// maxConflictRetries bounds how often a read-modify-write runs again after
// losing a race with a concurrent write.
const maxConflictRetries = 16

// guaranteedUpdate is the registry's one read-modify-write loop (the idea of
// kube-apiserver's GuaranteedUpdate): read the current object, check pre,
// let try decide the change (try must not modify cur), and commit it at the
// revision read. When a concurrent write got there first (storage.ErrConflict)
// the loop reads again and re-runs the checks: an object pinned by a
// resourceVersion (pre, or one try compares) then fails its check instead
// of being written again, so only unpinned writes are retried, at most
// maxConflictRetries times before the 409 conflict.
//
// It returns the change made (or, for a dry run, that would be made) and
// the revision of the write (0 when nothing was stored). With kept, cur
// comes without its metadata.managedFields, which kept.live holds as
// stored (decodeKeeping), and the change stores kept.written, when try
// leaves the bytes there, as the object's.
func (r *Registry) guaranteedUpdate(ctx context.Context, k *Kind, version, ns, name string, pre Preconditions, dryRun bool,
	kept *keptFields, try func(cur Object) (op, Object, error)) (change, int64, error) {
	key := keyOf(k, ns, name)
	for attempt := 0; ; attempt++ {
		kv, err := r.store.Get(ctx, key, 0)
		if err != nil {
			return change{}, 0, r.storeErr(k, name, err)
		}
		var cur Object
		if kept != nil {
			cur, kept.live, err = r.decodeKeeping(k, version, kv)
			kept.written = nil
		} else {
			cur, err = r.decode(k, version, kv, 0)
		}
		if err != nil {
			return change{}, 0, err
		}
		if err := pre.check(k, name, cur); err != nil {
			return change{}, 0, err
		}
		o, obj, err := try(cur)
		if err != nil {
			return change{}, 0, err
		}
		c := change{op: o, key: key, modRev: kv.ModRevision, obj: obj, old: cur}
		if kept != nil {
			c.mf = kept.written
		}
		rev, err := r.commit(ctx, k, &c, dryRun)
		if errors.Is(err, storage.ErrConflict) && attempt < maxConflictRetries {
			continue
		}
		if err != nil {
			return change{}, 0, r.storeErr(k, name, err)
		}
		return c, rev, nil
	}
}
