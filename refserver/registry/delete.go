package registry

import (
	"context"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/rvplan"
)

// DeleteOptions are the parts of metav1.DeleteOptions the registry acts on.
type DeleteOptions struct {
	DryRun              bool
	PreconditionUID     string
	PreconditionVersion string
	PropagationPolicy   string
}

// DeleteResult says what a DELETE did.
type DeleteResult struct {
	Object   Object
	Finished bool // the object is gone (false: it waits for finalizers)
}

// Delete removes an object, or marks it deleted (deletionTimestamp) while
// finalizers remain or when its kind always deletes gracefully.
func (r *Registry) Delete(ctx context.Context, k *Kind, version, ns, name string, o DeleteOptions) (*DeleteResult, error) {
	pre := Preconditions{UID: o.PreconditionUID, ResourceVersion: o.PreconditionVersion}
	c, rev, err := r.guaranteedUpdate(ctx, k, version, ns, name, pre, o.DryRun, func(cur Object) (op, Object, error) {
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
	if c.op == opRemove {
		return &DeleteResult{Object: c.obj, Finished: true}, nil
	}
	if rev != 0 && k.OnDeleteMarked != nil {
		k.OnDeleteMarked(c.obj)
	}
	return &DeleteResult{Object: c.obj}, nil
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
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, res.Object)
	}
	return out, nil
}
