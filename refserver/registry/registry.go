package registry

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// Config configures a Registry.
type Config struct {
	Store storage.Store
	// Clock is the time source for timestamps (nil = time.Now).
	Clock func() time.Time
	// RevisionWait bounds how long a read waits for a future resourceVersion
	// before answering 504 (0 = 3s).
	RevisionWait time.Duration
	Faults       faults.Set
}

// Registry serves every kind from one store.
type Registry struct {
	store  storage.Store
	clock  func() time.Time
	wait   time.Duration
	faults faults.Set

	events *eventCache // watch-event objects shared between watchers

	mu    sync.RWMutex
	kinds map[string]*Kind // key: group/resource
	// nsCleanups tracks running namespace deletions so Close can wait.
	bg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// New builds a registry with the built-in kinds registered.
func New(cfg Config) *Registry {
	r := &Registry{store: cfg.Store, clock: cfg.Clock, wait: cfg.RevisionWait, faults: cfg.Faults, kinds: map[string]*Kind{},
		events: newEventCache()}
	if r.clock == nil {
		r.clock = time.Now
	}
	if r.wait <= 0 {
		r.wait = 3 * time.Second
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	for _, k := range builtinKinds(r) {
		r.Register(k)
	}
	return r
}

// SystemNamespaces exist from the start, as on a kube-apiserver cluster.
var SystemNamespaces = []string{"default", "kube-system", "kube-public", "kube-node-lease"}

// Start creates the system namespaces when missing and re-registers the
// CRDs found in the store (after a restart).
func (r *Registry) Start(ctx context.Context) error {
	nsKind := r.Lookup("", "namespaces")
	for _, ns := range SystemNamespaces {
		if _, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0); errors.Is(err, storage.ErrNotFound) {
			obj := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
			if _, err := r.Create(ctx, nsKind, "v1", "", obj, WriteOptions{FieldManager: "kube-apiserver"}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create namespace %s: %w", ns, err)
			}
		}
	}
	crd := r.Lookup(crdGroup, "customresourcedefinitions")
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: prefixOf(crd, "")})
	if err != nil {
		return err
	}
	for _, kv := range res.Items {
		var obj Object
		if err := json.Unmarshal(kv.Value, &obj); err == nil {
			r.syncCRD(obj, nil)
		}
	}
	return nil
}

// Close stops background work (namespace cleanup).
func (r *Registry) Close() {
	r.cancel()
	r.bg.Wait()
}

// Store exposes the underlying store (for admin endpoints).
func (r *Registry) Store() storage.Store { return r.store }

// Register serves kind k (replacing one with the same group/resource).
func (r *Registry) Register(k *Kind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds[k.Group+"/"+k.Resource] = k
}

// Unregister stops serving group/resource.
func (r *Registry) Unregister(group, resource string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.kinds, group+"/"+resource)
}

// Lookup finds the kind serving group/resource.
func (r *Registry) Lookup(group, resource string) *Kind {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.kinds[group+"/"+resource]
}

// Kinds lists the served kinds sorted by group then resource.
func (r *Registry) Kinds() []*Kind {
	r.mu.RLock()
	out := make([]*Kind, 0, len(r.kinds))
	for _, k := range r.kinds {
		out = append(out, k)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Group != out[j].Group {
			return out[i].Group < out[j].Group
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// ---- keys ----

func basePrefix(k *Kind) string {
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

// ---- encoding ----

func (r *Registry) decode(k *Kind, version string, kv storage.KeyValue, rev int64) (Object, error) {
	var obj Object
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("decode %s: %w", kv.Key, err))
	}
	if rev == 0 {
		rev = kv.ModRevision
	}
	meta(obj)["resourceVersion"] = strconv.FormatInt(rev, 10)
	obj, err := k.fromStorage(obj, version)
	if err != nil {
		return nil, apierrors.NewInternalError(fmt.Errorf("convert %s to %s: %w", kv.Key, version, err))
	}
	return obj, nil
}

// fromStorage converts a stored object to version. A custom resource is
// pruned by the version's schema, as kube-apiserver prunes after converting.
func (k *Kind) fromStorage(obj Object, version string) (Object, error) {
	if version != k.StorageVersion() {
		if k.Convert != nil {
			obj["apiVersion"], obj["kind"] = k.APIVersion(k.StorageVersion()), k.Kind
			conv, err := k.Convert(obj, version)
			if err != nil {
				return nil, err
			}
			obj = conv
		}
		k.pruneConverted(obj, version)
	}
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	return obj, nil
}

// prepare defaults and normalises an object being written in version (old
// is nil on create); a PrepareVersioned failure is a 400.
func (k *Kind) prepare(obj, old Object, version string) error {
	if k.Prepare != nil {
		k.Prepare(obj, old)
	}
	if k.PrepareVersioned != nil {
		if err := k.PrepareVersioned(obj, old, version); err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
	}
	return nil
}

// throughStorage drops, in place, what a custom resource written in version
// loses on its way to the storage version and back: kube-apiserver answers
// a write with the stored object, pruned after each conversion.
func (k *Kind) throughStorage(obj Object, version string) {
	if version != k.StorageVersion() && k.Convert == nil {
		k.pruneConverted(obj, k.StorageVersion())
		k.pruneConverted(obj, version)
	}
}

// pruneConverted silently drops the fields a custom resource's version does
// not declare, after a conversion (the request's own unknown fields were
// reported when its body was decoded).
func (k *Kind) pruneConverted(obj Object, version string) {
	if k.TypedOf(version) == nil && k.Schemas != nil {
		fieldcheck.Prune(obj, k.Schemas[version])
	}
}

func encode(k *Kind, obj Object) ([]byte, error) {
	c := deepCopy(obj)
	if av := str(c["apiVersion"]); av != "" && av != k.APIVersion(k.StorageVersion()) {
		if k.Convert != nil {
			conv, err := k.Convert(c, k.StorageVersion())
			if err != nil {
				return nil, err
			}
			c = conv
		}
		k.pruneConverted(c, k.StorageVersion())
	}
	delete(meta(c), "resourceVersion")
	c["apiVersion"] = k.APIVersion(k.StorageVersion())
	c["kind"] = k.Kind
	return json.Marshal(c)
}

// ---- errors ----

func (r *Registry) storeErr(k *Kind, name string, err error) error {
	var se *apierrors.StatusError
	switch {
	case errors.As(err, &se):
		return err
	case errors.Is(err, storage.ErrNotFound):
		return apierrors.NewNotFound(k.GroupResource(), name)
	case errors.Is(err, storage.ErrKeyExists):
		return apierrors.NewAlreadyExists(k.GroupResource(), name)
	case errors.Is(err, storage.ErrConflict):
		return apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
	case errors.Is(err, storage.ErrCompacted):
		return rvplan.Expired()
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("request did not complete within the allowed duration", 0)
	}
	return apierrors.NewInternalError(err)
}

const conflictMsg = "the object has been modified; please apply your changes to the latest version and try again"

// ---- reads ----

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

// ---- writes ----

// WriteOptions carry the request options of create/update/patch.
type WriteOptions struct {
	DryRun      bool
	Subresource string // "", "status"
	// FieldManager records who wrote (an Update entry in managedFields); "" = none.
	FieldManager string
	// Applied: the object's managedFields were computed by server-side apply; keep them.
	Applied bool
}

func (r *Registry) dry(o WriteOptions) bool { return o.DryRun && !r.faults.Has(faults.DryRunPersists) }

func randSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

func (r *Registry) now() string { return r.clock().UTC().Format(time.RFC3339) }

// Create stores a new object.
func (r *Registry) Create(ctx context.Context, k *Kind, version, ns string, obj Object, o WriteOptions) (Object, error) {
	m := meta(obj)
	if k.Namespaced {
		m["namespace"] = ns
		if err := r.namespaceWritable(ctx, ns); err != nil {
			return nil, err
		}
	} else {
		delete(m, "namespace")
	}
	for _, f := range []string{"uid", "creationTimestamp", "resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "selfLink"} {
		delete(m, f)
	}
	if !o.Applied {
		delete(m, "managedFields")
	}
	if k.StatusSubresource {
		delete(obj, "status")
	}
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	if err := k.prepare(obj, nil, version); err != nil {
		return nil, err
	}
	m["uid"] = newUID()
	m["creationTimestamp"] = r.now()
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	obj = r.recordUpdate(k, version, nil, obj, o)
	m = meta(obj)
	if k.TrackGeneration {
		m["generation"] = int64(1)
	}
	generate := str(m["name"]) == "" && str(m["generateName"]) != ""
	for attempt := 0; ; attempt++ {
		if generate {
			m["name"] = str(m["generateName"]) + randSuffix()
		}
		name := str(m["name"])
		if errs := r.validate(k, obj, nil); len(errs) > 0 {
			return nil, apierrors.NewInvalid(k.GroupKind(), name, errs)
		}
		k.throughStorage(obj, version)
		if r.dry(o) {
			if _, err := r.store.Get(ctx, keyOf(k, ns, name), 0); err == nil {
				if generate && attempt < 8 {
					continue
				}
				return nil, apierrors.NewAlreadyExists(k.GroupResource(), name)
			}
			out := deepCopy(obj)
			out["apiVersion"], out["kind"] = k.APIVersion(version), k.Kind
			return out, nil
		}
		val, err := encode(k, obj)
		if err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		rev, err := r.store.Create(ctx, keyOf(k, ns, name), val)
		if errors.Is(err, storage.ErrKeyExists) && generate && attempt < 8 {
			continue
		}
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		out := deepCopy(obj)
		meta(out)["resourceVersion"] = strconv.FormatInt(rev, 10)
		out["apiVersion"], out["kind"] = k.APIVersion(version), k.Kind
		if k.AfterWrite != nil {
			k.AfterWrite(out, nil)
		}
		return out, nil
	}
}

func (r *Registry) validate(k *Kind, obj, old Object) field.ErrorList {
	errs := validateMeta(k, obj, old)
	if k.Validate != nil {
		errs = append(errs, k.Validate(obj, old)...)
	}
	return errs
}

// namespaceWritable: the namespace exists and is not terminating.
func (r *Registry) namespaceWritable(ctx context.Context, ns string) error {
	nsKind := r.Lookup("", "namespaces")
	kv, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0)
	if err != nil {
		return apierrors.NewNotFound(nsKind.GroupResource(), ns)
	}
	var obj Object
	if json.Unmarshal(kv.Value, &obj) == nil && str(meta(obj)["deletionTimestamp"]) != "" {
		return apierrors.NewForbidden(schema.GroupResource{Group: "", Resource: "namespaces"}, ns,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}

// Update replaces an object (PUT). The new object's resourceVersion, when
// set, is a precondition.
func (r *Registry) Update(ctx context.Context, k *Kind, version, ns, name string, obj Object, o WriteOptions) (Object, error) {
	want := str(meta(obj)["resourceVersion"])
	for attempt := 0; ; attempt++ {
		kv, err := r.store.Get(ctx, keyOf(k, ns, name), 0)
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		if want != "" && want != strconv.FormatInt(kv.ModRevision, 10) {
			return nil, apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
		}
		old, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		out, err := r.updateFrom(ctx, k, version, ns, name, kv.ModRevision, old, deepCopy(obj), o)
		if errors.Is(err, errRetry) && want == "" && attempt < 16 {
			continue
		}
		if errors.Is(err, errRetry) {
			return nil, apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
		}
		return out, err
	}
}

var errRetry = errors.New("registry: retry")

// updateFrom writes obj over old (read at modRev) atomically.
func (r *Registry) updateFrom(ctx context.Context, k *Kind, version, ns, name string, modRev int64, old, obj Object, o WriteOptions) (Object, error) {
	m, om := meta(obj), meta(old)
	if k.Namespaced {
		m["namespace"] = ns
	}
	m["name"] = name
	switch {
	case o.Subresource == "status":
		// Only status changes through /status.
		st, has := obj["status"]
		obj = deepCopy(old)
		if has {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
		m = meta(obj)
	case k.StatusSubresource:
		if st, ok := old["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	// System fields keep their stored values.
	for _, f := range []string{"uid", "creationTimestamp", "generation", "deletionGracePeriodSeconds"} {
		if v, ok := om[f]; ok {
			m[f] = v
		} else {
			delete(m, f)
		}
	}
	if !o.Applied {
		if mf, ok := om["managedFields"]; ok {
			m["managedFields"] = mf
		} else {
			delete(m, "managedFields")
		}
	}
	if ts := str(om["deletionTimestamp"]); ts != "" {
		if nt := str(m["deletionTimestamp"]); nt != ts {
			fe := field.Invalid(field.NewPath("metadata", "deletionTimestamp"), m["deletionTimestamp"], "field is immutable; may only be changed via deletion")
			return nil, apierrors.NewInvalid(k.GroupKind(), name, field.ErrorList{fe})
		}
	} else {
		delete(m, "deletionTimestamp")
	}
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	if err := k.prepare(obj, old, version); err != nil {
		return nil, err
	}
	if k.TrackGeneration && !reflect.DeepEqual(specOf(obj), specOf(old)) {
		m["generation"] = toInt(om["generation"]) + 1
	}
	if errs := r.validate(k, obj, old); len(errs) > 0 {
		return nil, apierrors.NewInvalid(k.GroupKind(), name, errs)
	}
	k.throughStorage(obj, version)
	m["resourceVersion"] = om["resourceVersion"]
	same := reflect.DeepEqual(withoutManagedFields(obj), withoutManagedFields(old))
	if o.Applied {
		// An apply that changes only ownership still writes.
		same = reflect.DeepEqual(normalize(obj), normalize(old))
	}
	if same {
		return old, nil // no change: no write, same resourceVersion
	}
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	obj = r.recordUpdate(k, version, old, obj, o)
	m = meta(obj)
	// Removing the last finalizer of a deleted object removes it.
	if str(m["deletionTimestamp"]) != "" && len(sliceOf(m["finalizers"])) == 0 {
		if r.dry(o) {
			return obj, nil
		}
		_, rev, err := r.store.Delete(ctx, keyOf(k, ns, name), modRev)
		if errors.Is(err, storage.ErrConflict) {
			return nil, errRetry
		}
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		m["resourceVersion"] = strconv.FormatInt(rev, 10)
		if k.AfterWrite != nil {
			k.AfterWrite(nil, old)
		}
		return obj, nil
	}
	if r.dry(o) {
		return obj, nil
	}
	val, err := encode(k, obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	rev, err := r.store.Update(ctx, keyOf(k, ns, name), val, modRev)
	if errors.Is(err, storage.ErrConflict) {
		return nil, errRetry
	}
	if err != nil {
		return nil, r.storeErr(k, name, err)
	}
	m["resourceVersion"] = strconv.FormatInt(rev, 10)
	obj["apiVersion"], obj["kind"] = k.APIVersion(version), k.Kind
	if k.AfterWrite != nil {
		k.AfterWrite(obj, old)
	}
	return obj, nil
}

// Mutate applies fn to the current object and writes the result, retrying
// on concurrent writes unless fn's result carries a different resourceVersion
// (a precondition, as in a patch that sets it).
func (r *Registry) Mutate(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, fn func(cur Object) (Object, error)) (Object, error) {
	for attempt := 0; ; attempt++ {
		kv, err := r.store.Get(ctx, keyOf(k, ns, name), 0)
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		old, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		obj, err := fn(deepCopy(old))
		if err != nil {
			return nil, err
		}
		if rv := str(meta(obj)["resourceVersion"]); rv != "" && rv != str(meta(old)["resourceVersion"]) {
			return nil, apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
		}
		out, err := r.updateFrom(ctx, k, version, ns, name, kv.ModRevision, old, obj, o)
		if errors.Is(err, errRetry) && attempt < 16 {
			continue
		}
		if errors.Is(err, errRetry) {
			return nil, apierrors.NewConflict(k.GroupResource(), name, errors.New(conflictMsg))
		}
		return out, err
	}
}

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

// Delete removes an object, or marks it deleted while finalizers remain.
func (r *Registry) Delete(ctx context.Context, k *Kind, version, ns, name string, o DeleteOptions) (*DeleteResult, error) {
	for attempt := 0; ; attempt++ {
		kv, err := r.store.Get(ctx, keyOf(k, ns, name), 0)
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		obj, err := r.decode(k, version, kv, 0)
		if err != nil {
			return nil, err
		}
		m := meta(obj)
		if o.PreconditionUID != "" && o.PreconditionUID != str(m["uid"]) {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: k.Group, Resource: k.Kind}, name, fmt.Errorf(
				"the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", o.PreconditionUID, str(m["uid"])))
		}
		if o.PreconditionVersion != "" && o.PreconditionVersion != str(m["resourceVersion"]) {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: k.Group, Resource: k.Kind}, name, fmt.Errorf(
				"the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", o.PreconditionVersion, str(m["resourceVersion"])))
		}
		pending := len(sliceOf(m["finalizers"])) > 0 || (k.Group == "" && k.Resource == "namespaces")
		if pending {
			if str(m["deletionTimestamp"]) != "" {
				return &DeleteResult{Object: obj}, nil
			}
			m["deletionTimestamp"] = r.now()
			m["deletionGracePeriodSeconds"] = int64(0)
			if k.Group == "" && k.Resource == "namespaces" {
				st, _ := obj["status"].(map[string]any)
				if st == nil {
					st = map[string]any{}
					obj["status"] = st
				}
				st["phase"] = "Terminating"
				delete(m, "deletionGracePeriodSeconds")
			}
			if r.dry(WriteOptions{DryRun: o.DryRun}) {
				return &DeleteResult{Object: obj}, nil
			}
			val, err := encode(k, obj)
			if err != nil {
				return nil, apierrors.NewInternalError(err)
			}
			rev, err := r.store.Update(ctx, kv.Key, val, kv.ModRevision)
			if errors.Is(err, storage.ErrConflict) && attempt < 16 {
				continue
			}
			if err != nil {
				return nil, r.storeErr(k, name, err)
			}
			m["resourceVersion"] = strconv.FormatInt(rev, 10)
			if k.Group == "" && k.Resource == "namespaces" {
				r.startNamespaceCleanup(name)
			}
			return &DeleteResult{Object: obj}, nil
		}
		if r.dry(WriteOptions{DryRun: o.DryRun}) {
			return &DeleteResult{Object: obj, Finished: true}, nil
		}
		_, _, err = r.store.Delete(ctx, kv.Key, kv.ModRevision)
		if errors.Is(err, storage.ErrConflict) && attempt < 16 {
			continue
		}
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		if k.AfterWrite != nil {
			k.AfterWrite(nil, obj)
		}
		return &DeleteResult{Object: obj, Finished: true}, nil
	}
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

// startNamespaceCleanup removes everything in a terminating namespace, then the namespace.
func (r *Registry) startNamespaceCleanup(ns string) {
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		ctx := r.ctx
		for ctx.Err() == nil {
			left := 0
			for _, k := range r.Kinds() {
				if !k.Namespaced {
					continue
				}
				res, err := r.DeleteCollection(ctx, k, k.StorageVersion(), ns, Selector{}, DeleteOptions{})
				if err == nil {
					for _, o := range res.Items {
						if str(meta(o)["deletionTimestamp"]) != "" {
							left++
						}
					}
				}
			}
			if left == 0 {
				nsKind := r.Lookup("", "namespaces")
				kv, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0)
				if err != nil {
					return
				}
				if _, _, err := r.store.Delete(ctx, kv.Key, kv.ModRevision); err == nil || errors.Is(err, storage.ErrNotFound) {
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
}

// ---- helpers ----

func meta(obj Object) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// Meta returns obj's metadata map (created when missing).
func Meta(obj Object) map[string]any { return meta(obj) }

func str(v any) string {
	s, _ := v.(string)
	return s
}

func sliceOf(v any) []any {
	s, _ := v.([]any)
	return s
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// specOf is everything but metadata and status: what bumps generation.
func specOf(obj Object) any {
	out := Object{}
	for k, v := range obj {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	return normalize(out)
}

// withoutManagedFields compares objects apart from field ownership.
func withoutManagedFields(obj Object) any {
	c := deepCopy(obj)
	delete(meta(c), "managedFields")
	return normalize(c)
}

// normalize round-trips through JSON so number types compare equal.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func deepCopy(obj Object) Object {
	if obj == nil {
		return nil
	}
	return runtimeDeepCopy(obj)
}

func runtimeDeepCopy(obj Object) Object {
	b, _ := json.Marshal(obj)
	var out Object
	_ = json.Unmarshal(b, &out)
	return out
}

// ToUnstructured wraps obj.
func ToUnstructured(obj Object) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: obj}
}

var _ = metav1.Now

// newUID makes a random (version 4) UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// DeepCopy copies a JSON-shaped map.
func DeepCopy(obj Object) Object { return deepCopy(obj) }

// recordUpdate adds the writer's Update entry to obj's managedFields
// (server-side apply computes its own entries).
func (r *Registry) recordUpdate(k *Kind, version string, old, obj Object, o WriteOptions) Object {
	fm := k.FieldManagers[version]
	if fm == nil || o.FieldManager == "" || o.Applied {
		return obj
	}
	out, err := fm.Update(old, obj, o.FieldManager)
	if err != nil || out == nil {
		return obj // ownership is bookkeeping: a failure must not fail the write
	}
	return out
}
