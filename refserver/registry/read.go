package registry

import (
	"context"
	"errors"
	"strings"
	"time"

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
	r.mu.RLock()
	wait := r.wait
	r.mu.RUnlock()
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := r.store.WaitForRevision(wctx, rev); err != nil {
		return rvplan.TooLargeResourceVersion(rev, r.store.CurrentRevision())
	}
	return nil
}

// SetRevisionWait changes how long a read waits for a future resourceVersion
// before the 504 (the admin hook lets a harness shorten kube-apiserver's 3s).
func (r *Registry) SetRevisionWait(d time.Duration) {
	r.mu.Lock()
	r.wait = d
	r.mu.Unlock()
}

// Get reads one object as the plan says.
func (r *Registry) Get(ctx context.Context, k *Kind, version, ns, name string, plan rvplan.Plan) (Object, error) {
	kv, err := r.getStored(ctx, k, ns, name, plan)
	if err != nil {
		return nil, err
	}
	return r.decode(k, version, kv, 0)
}

// getStored reads one object's stored record as the plan says (waiting for
// a NotOlderThan revision first).
func (r *Registry) getStored(ctx context.Context, k *Kind, ns, name string, plan rvplan.Plan) (storage.KeyValue, error) {
	if plan.Mode == rvplan.NotOlderThan {
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return storage.KeyValue{}, err
		}
	}
	kv, err := r.store.Get(ctx, keyOf(k, ns, name), 0)
	if err != nil {
		return storage.KeyValue{}, r.storeErr(k, name, err)
	}
	return kv, nil
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
	res, out, err := r.list(ctx, k, version, ns, plan, sel)
	if err != nil {
		return nil, err
	}
	out.Items = make([]Object, 0, len(res.Items))
	for _, kv := range res.Items {
		obj, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		out.Items = append(out.Items, obj)
	}
	return out, nil
}

// EncodedList is a page of a collection with its items as JSON.
type EncodedList struct {
	ListResult // Items is empty
	Raw        [][]byte
}

// ListEncoded reads a collection as List does, with each item as the JSON
// json.Marshal gives List's item (without kind and apiVersion when bare),
// encoded once per revision and kept (itemcache.go).
func (r *Registry) ListEncoded(ctx context.Context, k *Kind, version, ns string, plan rvplan.Plan, sel Selector, bare bool) (*EncodedList, error) {
	res, out, err := r.list(ctx, k, version, ns, plan, sel)
	if err != nil {
		return nil, err
	}
	el := &EncodedList{ListResult: *out, Raw: make([][]byte, 0, len(res.Items))}
	for _, kv := range res.Items {
		b, err := r.encodeItem(k, version, kv, bare)
		if err != nil {
			return nil, err
		}
		el.Raw = append(el.Raw, b)
	}
	return el, nil
}

// list reads the stored page the plan names and its list metadata.
func (r *Registry) list(ctx context.Context, k *Kind, version, ns string, plan rvplan.Plan, sel Selector) (storage.ListResult, *ListResult, error) {
	prefix := prefixOf(k, ns)
	opts := storage.ListOptions{Prefix: prefix, Limit: plan.Limit}
	switch plan.Mode {
	case rvplan.NotOlderThan:
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return storage.ListResult{}, nil, err
		}
	case rvplan.Exact:
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return storage.ListResult{}, nil, err
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
		// Keys whose labels the cache already holds for their revision are
		// decided without reading their values; the rest go to Filter.
		// The store calls Filter right after a KeyFilter that said true for
		// the same key: a match KeyFilter decided is not looked up again.
		var knownKey string
		var knownRev int64
		opts.KeyFilter = func(key string, rev int64) bool {
			m, ok := r.labelsKnown(k, version, sel, key, rev)
			if m {
				knownKey, knownRev = key, rev
			}
			return m || !ok
		}
		opts.Filter = func(kv storage.KeyValue) bool {
			if kv.ModRevision == knownRev && kv.Key == knownKey {
				return true
			}
			if m, ok := r.labelsOnly(k, version, sel, kv); ok {
				return m
			}
			obj, err := r.decode(k, version, kv, 0)
			return err == nil && sel.Matches(k, obj)
		}
		// Equality requirements let the list visit only the keys the
		// label index names (labelindex.go); the filters above still decide.
		opts.Candidates = r.labelCandidates(ctx, k, version, prefix, sel)
	}
	res, err := r.store.List(ctx, opts)
	if err != nil {
		if errors.Is(err, storage.ErrCompacted) && plan.Mode == rvplan.Continue {
			se := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
			se.ErrStatus.ListMeta.Continue = rvplan.EncodeContinue(rvplan.InconsistentRevision, plan.StartKey)
			return storage.ListResult{}, nil, se
		}
		if errors.Is(err, storage.ErrFutureRevision) {
			return storage.ListResult{}, nil, rvplan.TooLargeResourceVersion(opts.Revision, r.store.CurrentRevision())
		}
		return storage.ListResult{}, nil, r.storeErr(k, "", err)
	}
	out := &ListResult{ResourceVersion: res.Revision}
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
	return res, out, nil
}

// labelsOnly matches a label selector reading only the stored labels, when
// that is what decoding the whole object would see: no field selector, and
// the stored version is the one asked for (no conversion or pruning). ok is
// false when the caller must decode.
func (r *Registry) labelsOnly(k *Kind, version string, sel Selector, kv storage.KeyValue) (match, ok bool) {
	if (sel.Fields != nil && !sel.Fields.Empty()) || !k.storedAsServed(version) {
		return false, false
	}
	sl := r.labels.get(kv)
	if !sl.ok {
		return false, false
	}
	return sel.Labels == nil || sel.Labels.Matches(sl.set), true
}

// labelsKnown is labelsOnly for the value stored under key at revision rev,
// from the label cache alone: ok is false on a miss, as well as where
// labelsOnly would be.
func (r *Registry) labelsKnown(k *Kind, version string, sel Selector, key string, rev int64) (match, ok bool) {
	if (sel.Fields != nil && !sel.Fields.Empty()) || !k.storedAsServed(version) {
		return false, false
	}
	sl, hit := r.labels.lookup(key, rev)
	if !hit || !sl.ok {
		return false, false
	}
	return sel.Labels == nil || sel.Labels.Matches(sl.set), true
}
