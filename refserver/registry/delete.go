package registry

import (
	"context"
	"errors"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// DeleteOptions are the parts of metav1.DeleteOptions the registry acts on.
type DeleteOptions struct {
	DryRun              bool
	PreconditionUID     string
	PreconditionVersion string
	PropagationPolicy   string
	// StatusOnly: the caller answers a removal of a DeleteReturnsStatus
	// kind with a Status, so such a result needs only the object's uid
	// (DeleteResult.Object may then be nil).
	StatusOnly bool
}

// DeleteResult says what a DELETE did.
type DeleteResult struct {
	Object   Object // nil only for StatusOnly removals
	UID      string // the object's metadata.uid
	Finished bool   // the object is gone (false: it waits for finalizers)
}

// Delete removes an object, or marks it deleted (deletionTimestamp) while
// finalizers remain or when its kind always deletes gracefully.
func (r *Registry) Delete(ctx context.Context, k *Kind, version, ns, name string, o DeleteOptions) (*DeleteResult, error) {
	if res, ok, err := r.removeStored(ctx, k, ns, name, o); ok {
		return res, err
	}
	pre := Preconditions{UID: o.PreconditionUID, ResourceVersion: o.PreconditionVersion}
	c, rev, err := r.guaranteedUpdate(ctx, k, version, ns, name, pre, o.DryRun, nil, func(cur Object) (op, Object, error) {
		m := meta(cur)
		before := sliceOf(m["finalizers"])
		finalizers := withPropagation(before, o.PropagationPolicy)
		marked := str(m["deletionTimestamp"]) != ""
		switch {
		case len(finalizers) == 0 && !k.GracefulDelete:
			return opRemove, cur, nil
		case marked && slices.EqualFunc(finalizers, before, func(a, b any) bool { return str(a) == str(b) }):
			return opNone, cur, nil // already marked: the first deletionTimestamp stands
		}
		obj := deepCopy(cur)
		m = meta(obj)
		if len(finalizers) > 0 {
			m["finalizers"] = finalizers
		}
		if !marked {
			m["deletionTimestamp"] = r.now()
			m["deletionGracePeriodSeconds"] = int64(0)
			if k.MarkDeleted != nil {
				k.MarkDeleted(obj)
			} else if g := toInt(m["generation"]); g > 0 {
				// The generic marking moves a tracked generation on, as
				// kube-apiserver's does; kinds that mark themselves (a
				// CRD's DELETE is an update with its spec unchanged) keep it.
				m["generation"] = g + 1
			}
		}
		return opPut, obj, nil
	})
	if err != nil {
		return nil, err
	}
	uid := str(meta(c.obj)["uid"])
	if c.op == opRemove {
		return &DeleteResult{Object: c.obj, UID: uid, Finished: true}, nil
	}
	if rev != 0 && k.OnDeleteMarked != nil {
		k.OnDeleteMarked(c.obj)
	}
	return &DeleteResult{Object: c.obj, UID: uid}, nil
}

// removeStored is Delete without decoding the object, where what the
// stored bytes show decides it: a DELETE answered with a Status, of a kind
// that deletes at once and has no hook on removal, without preconditions,
// dry run or a policy that adds a finalizer, of an object stored in the
// canonical encoding with neither finalizers nor a deletionTimestamp. Such a
// DELETE removes the object, and its answer needs the uid alone; decoding
// the object was half of its cost. ok false leaves the DELETE to the full
// path, which also takes over when the object changes in between.
func (r *Registry) removeStored(ctx context.Context, k *Kind, ns, name string, o DeleteOptions) (res *DeleteResult, ok bool, err error) {
	if !o.StatusOnly || !k.DeleteReturnsStatus || k.GracefulDelete || k.AfterWrite != nil || o.DryRun ||
		o.PreconditionUID != "" || o.PreconditionVersion != "" || (o.PropagationPolicy != "" && o.PropagationPolicy != "Background") {
		return nil, false, nil
	}
	key := keyOf(k, ns, name)
	kv, err := r.store.Get(ctx, key, 0)
	if err != nil {
		return nil, true, r.storeErr(k, name, err)
	}
	uid, plain := removableAsStored(kv.Value)
	if !plain {
		return nil, false, nil
	}
	c := change{op: opRemove, key: key, modRev: kv.ModRevision}
	if _, err := r.commit(ctx, k, &c, false); err != nil {
		if errors.Is(err, storage.ErrConflict) || errors.Is(err, storage.ErrNotFound) {
			return nil, false, nil // written or removed since the read: the full path reads again
		}
		return nil, true, r.storeErr(k, name, err)
	}
	return &DeleteResult{UID: uid, Finished: true}, true, nil
}

// removableAsStored reads a stored value in the canonical encoding (see
// canonicalLabels) for what removeStored needs: its metadata.uid, and that
// its metadata has neither finalizers nor a deletionTimestamp. ok false for
// anything else: another encoding, or either member present (even empty).
func removableAsStored(value []byte) (uid string, ok bool) {
	s := &spliceScan{b: value}
	hasMeta, ok := s.eachMetadataMember(func(key []byte, esc bool, at int) (int, bool) {
		switch {
		case esc, string(key) == "finalizers", string(key) == "deletionTimestamp":
			return at, false
		case string(key) == "uid":
			v, vesc, end, ok := s.str(at)
			if ok {
				uid = decodedString(v, vesc)
			}
			return end, ok
		}
		return s.value(at, 2)
	})
	return uid, ok && hasMeta
}

// The finalizers the garbage collector acts on. A propagation policy on a
// DELETE puts its own finalizer on the object and takes the other one off;
// the object then waits, marked deleted, for the collector to finish (the
// API server itself never removes them).
const (
	finalizerForeground = "foregroundDeletion"
	finalizerOrphan     = "orphan"
)

// withPropagation returns finalizers as a DELETE with policy leaves them
// (unchanged when no policy is given).
func withPropagation(finalizers []any, policy string) []any {
	var add string
	var keep func(string) bool
	switch policy {
	case "Foreground":
		add, keep = finalizerForeground, func(f string) bool { return f != finalizerOrphan }
	case "Orphan":
		add, keep = finalizerOrphan, func(f string) bool { return f != finalizerForeground }
	case "Background":
		keep = func(f string) bool { return f != finalizerForeground && f != finalizerOrphan }
	default:
		return finalizers
	}
	var out []any
	for _, f := range finalizers {
		if keep(str(f)) {
			out = append(out, f)
		}
	}
	if add != "" && !slices.ContainsFunc(out, func(f any) bool { return str(f) == add }) {
		out = append(out, add)
	}
	return out
}

// DeleteCollection deletes every object of the collection matching sel and
// returns them as they were.
func (r *Registry) DeleteCollection(ctx context.Context, k *Kind, version, ns string, sel Selector, o DeleteOptions) (*ListResult, error) {
	list, err := r.List(ctx, k, version, ns, rvplan.Plan{Mode: rvplan.Latest}, sel)
	if err != nil {
		return nil, err
	}
	out := &ListResult{ResourceVersion: list.ResourceVersion}
	for _, obj := range list.Items {
		m := meta(obj)
		res, err := r.Delete(ctx, k, version, str(m["namespace"]), str(m["name"]), o)
		if err != nil {
			if apierrors.IsNotFound(err) { // asked only of an error: it allocates
				continue
			}
			return nil, err
		}
		out.Items = append(out.Items, res.Object)
	}
	return out, nil
}
