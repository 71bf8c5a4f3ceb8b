package registry

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// waitFor waits until the store reaches rev or answers the 504 kube-apiserver sends.
func (r *Registry) waitFor(ctx context.Context, rev int64) error {
	if r.store.CurrentRevision() >= rev {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	if err := r.store.WaitForRevision(wctx, rev); err != nil {
		return rvplan.TooLargeResourceVersion(rev, r.store.CurrentRevision())
	}
	return nil
}

// Get reads one object as the plan says.
func (r *Registry) Get(ctx context.Context, k *Kind, version, ns, name string, plan rvplan.Plan) (Object, error) {
	if plan.Mode == rvplan.NotOlderThan {
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return nil, err
		}
	}
	kv, err := r.store.Get(ctx, keyOf(k, ns, name), 0)
	if err != nil {
		return nil, r.storeErr(k, name, err)
	}
	return r.decode(k, version, kv, 0)
}

// ListResult is a page of a collection.
type ListResult struct {
	Items              []Object
	ResourceVersion    int64
	Continue           string
	RemainingItemCount *int64
}

// List reads a collection (ns "" = all namespaces for namespaced kinds).
func (r *Registry) List(ctx context.Context, k *Kind, version, ns string, plan rvplan.Plan, sel Selector) (*ListResult, error) {
	prefix := prefixOf(k, ns)
	opts := storage.ListOptions{Prefix: prefix, Limit: plan.Limit}
	switch plan.Mode {
	case rvplan.NotOlderThan:
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return nil, err
		}
	case rvplan.Exact:
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return nil, err
		}
		if !r.faults.Has(faults.IgnoreRVMatchExact) {
			opts.Revision = plan.Revision
		}
	case rvplan.Continue:
		opts.StartKey = prefix + plan.StartKey
		if plan.Revision > 0 && !r.faults.Has(faults.ContinueIgnoresSnapshot) {
			opts.Revision = plan.Revision
		}
	}
	if !sel.Empty() {
		opts.Filter = func(kv storage.KeyValue) bool {
			obj, err := r.decode(k, version, kv, 0)
			return err == nil && sel.Matches(k, obj)
		}
	}
	res, err := r.store.List(ctx, opts)
	if errors.Is(err, storage.ErrCompacted) && opts.Revision > 0 && opts.Revision == r.store.CurrentRevision() {
		// Compaction at the current revision leaves that state readable as "latest".
		want := opts.Revision
		opts.Revision = 0
		if res, err = r.store.List(ctx, opts); err == nil && res.Revision != want {
			err = storage.ErrCompacted
		}
	}
	if err != nil {
		if errors.Is(err, storage.ErrCompacted) && plan.Mode == rvplan.Continue {
			se := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
			se.ErrStatus.ListMeta.Continue = rvplan.EncodeContinue(rvplan.InconsistentRevision, plan.StartKey)
			return nil, se
		}
		if errors.Is(err, storage.ErrFutureRevision) {
			return nil, rvplan.TooLargeResourceVersion(opts.Revision, r.store.CurrentRevision())
		}
		return nil, r.storeErr(k, "", err)
	}
	out := &ListResult{ResourceVersion: res.Revision, Items: make([]Object, 0, len(res.Items))}
	for _, kv := range res.Items {
		obj, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, obj)
	}
	if res.More && len(res.Items) > 0 {
		last := res.Items[len(res.Items)-1].Key
		out.Continue = rvplan.EncodeContinue(res.Revision, strings.TrimPrefix(last, prefix)+"\x00")
		if sel.Empty() {
			n := res.Remaining
			if r.faults.Has(faults.WrongRemainingItemCount) {
				n++
			}
			out.RemainingItemCount = &n
		}
	}
	return out, nil
}
