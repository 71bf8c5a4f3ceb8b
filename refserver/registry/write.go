package registry

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
	"github.com/apiconform/apiconform/refserver/storage"
)

// WriteOptions carry the request options of create/update/patch.
type WriteOptions struct {
	DryRun      bool
	Subresource string // "", "status"
	// FieldManager records who wrote (an Update entry in managedFields); "" = none.
	FieldManager string
	// Applied: the object's managedFields were computed by server-side apply; keep them.
	Applied bool
	// Answer, when set, receives WrittenJSON's bytes for the object a
	// stored create or put returns, taken from the bytes it stored (no
	// store read); it is left nil otherwise (dry run, no change, removal).
	Answer *[]byte
}

// generateNameAttempts bounds the names tried for a generateName create.
const generateNameAttempts = 8

func randSuffix() string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Create stores a new object.
func (r *Registry) Create(ctx context.Context, k *Kind, version, ns string, obj Object, o WriteOptions) (Object, error) {
	m := meta(obj)
	if why := k.createRefused.Load(); why != nil {
		return nil, apierrors.NewForbidden(k.GroupResource(), str(m["name"]), errors.New(*why))
	}
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
	if !o.Applied && !sendsManagedFields(k, version, o, m) {
		delete(m, "managedFields")
	}
	if k.StatusSubresource {
		delete(obj, "status")
	}
	k.setTypeMeta(obj, version)
	if err := k.prepare(obj, nil, version); err != nil {
		return nil, err
	}
	m["uid"] = newUID()
	m["creationTimestamp"] = r.now()
	k.setTypeMeta(obj, version)
	var kept *keptFields
	if keepsFields(k, version, o) && !o.Applied { // an apply's create brings its entries
		kept = &keptFields{}
	}
	obj, _ = r.recordUpdate(k, version, nil, obj, o, kept) // fails only with kept.live
	if k.PrepareCreated != nil {
		k.PrepareCreated(obj)
	}
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
			return nil, apierrors.NewInvalid(k.validatedAs(), name, errs)
		}
		k.throughStorage(obj, version)
		// The answer is obj itself when it is already what a JSON round trip
		// gives (as an update's is); a copy only normalises its numbers.
		out := obj
		if !jsonvalue.Stable(obj, jsonvalue.Float64) {
			out = deepCopy(obj)
		}
		k.setTypeMeta(out, version)
		c := change{op: opCreate, key: keyOf(k, ns, name), obj: out}
		if kept != nil {
			c.mf = kept.written
		}
		rev, err := r.commit(ctx, k, &c, o.DryRun)
		if errors.Is(err, storage.ErrKeyExists) && generate && attempt < generateNameAttempts {
			continue
		}
		if err != nil {
			return nil, r.storeErr(k, name, err)
		}
		r.answer(k, version, &c, rev, o)
		if err := r.answerKept(&c, o); err != nil {
			return nil, err
		}
		return out, nil
	}
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

func (r *Registry) validate(k *Kind, obj, old Object) field.ErrorList {
	errs := validateMeta(k, obj, old)
	if k.Validate != nil {
		errs = append(errs, k.Validate(obj, old)...)
	}
	return errs
}

// namespaceWritable says whether objects may be created in ns: the
// namespace exists and is not terminating. This stays generic rather than a
// namespace hook because it guards every namespaced kind. The state comes
// from namespaceStates when it holds the namespace, else from the store
// (the "namespaces" kind must be registered).
func (r *Registry) namespaceWritable(ctx context.Context, ns string) error {
	terminating, known, gen := r.namespaces.lookup(ns)
	if !known {
		nsKind := r.Lookup("", "namespaces")
		kv, err := r.store.Get(ctx, keyOf(nsKind, "", ns), 0)
		if err != nil {
			return apierrors.NewNotFound(nsKind.GroupResource(), ns)
		}
		terminating = terminatingNamespace(kv.Value)
		r.namespaces.learn(ns, terminating, gen)
	}
	if terminating {
		nsKind := r.Lookup("", "namespaces")
		return apierrors.NewForbidden(nsKind.GroupResource(), ns,
			fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
	}
	return nil
}

// terminatingNamespace reports whether a stored namespace has a
// deletionTimestamp.
func terminatingNamespace(value []byte) bool {
	// Most namespaces are not terminating: their stored JSON has no
	// deletionTimestamp at all, which needs no decoding to see.
	if !bytes.Contains(value, []byte(`"deletionTimestamp"`)) {
		return false
	}
	var obj Object
	return json.Unmarshal(value, &obj) == nil && str(meta(obj)["deletionTimestamp"]) != ""
}

// Update replaces an object (PUT). The new object's resourceVersion, when
// set, is a precondition.
func (r *Registry) Update(ctx context.Context, k *Kind, version, ns, name string, obj Object, o WriteOptions) (Object, error) {
	// The current object is not read, so it needs no copy.
	return r.mutate(ctx, k, version, ns, name, o, readsNoManagedFields, nil, func(Object) (Object, error) { return deepCopy(obj), nil })
}

// UpdateFrom is Update of the object next returns: a new one on each call,
// which the write may change (it is called again when the write is retried
// after a conflict), so no copy of it is made.
func (r *Registry) UpdateFrom(ctx context.Context, k *Kind, version, ns, name string, next func() (Object, error), o WriteOptions) (Object, error) {
	return r.mutate(ctx, k, version, ns, name, o, readsNoManagedFields, nil, func(Object) (Object, error) {
		obj, err := next()
		if err == nil && k.UpdateNeedsResourceVersion && str(meta(obj)["resourceVersion"]) == "" {
			// kube-apiserver names the resource where the kind belongs.
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: k.Group, Kind: k.Resource}, name, field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), 0, "must be specified for an update")})
		}
		return obj, err
	})
}

// Put is a PUT's write: UpdateFrom, or, for a kind whose PUT creates a
// missing object (Kind.CreateOnUpdate, not on a subresource), a Create of
// next's object when there is none; created says which. A resourceVersion
// it brings is no precondition then: kube-apiserver creates regardless.
func (r *Registry) Put(ctx context.Context, k *Kind, version, ns, name string, next func() (Object, error), o WriteOptions) (out Object, created bool, err error) {
	out, err = r.UpdateFrom(ctx, k, version, ns, name, next, o)
	if err == nil || !k.CreateOnUpdate || o.Subresource != "" || !apierrors.IsNotFound(err) { // IsNotFound allocates, even for nil
		return out, false, err
	}
	obj, err := next() // the update may have taken the first object
	if err != nil {
		return nil, false, err
	}
	delete(meta(obj), "resourceVersion")
	out, err = r.Create(ctx, k, version, ns, obj, o)
	return out, err == nil, err
}

// Mutate applies fn to (a copy of) the current object and writes the
// result. A resourceVersion in fn's result is a precondition (as in a PUT
// or a patch that sets it); without one, a lost race runs fn again.
func (r *Registry) Mutate(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, fn func(cur Object) (Object, error)) (Object, error) {
	return r.mutate(ctx, k, version, ns, name, o, changes, nil, fn)
}

// MutateReading is Mutate for an fn that only reads the object it is
// given and builds its result apart: fn gets the current object itself,
// not a copy (a copy per write took a tenth of a merge patch's allocations).
func (r *Registry) MutateReading(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, fn func(cur Object) (Object, error)) (Object, error) {
	return r.mutate(ctx, k, version, ns, name, o, reads, nil, fn)
}

// MutateMerging is MutateReading for an fn whose result does not depend on
// the current object's metadata.managedFields, which a write other than an
// apply keeps as stored whatever fn gives them (a merge patch): fn may get
// the object without them.
func (r *Registry) MutateMerging(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, fn func(cur Object) (Object, error)) (Object, error) {
	return r.mutate(ctx, k, version, ns, name, o, readsNoManagedFields, nil, fn)
}

// KeptApply is a server-side apply's answer from the current object
// without its metadata.managedFields and the bytes stored for them (the
// contract of the field manager's ApplyStored): the object to write,
// without managedFields, and the bytes of the list it carries. ok false
// declines; an error fails the write.
type KeptApply func(cur Object, mf []byte) (obj Object, written []byte, ok bool, err error)

// MutateApplying is MutateReading for a server-side apply (o.Applied):
// where the write can carry managedFields as bytes, stored answers first,
// from them; where it declines (or cannot be asked), fn answers from the
// whole object.
func (r *Registry) MutateApplying(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, stored KeptApply, fn func(cur Object) (Object, error)) (Object, error) {
	return r.mutate(ctx, k, version, ns, name, o, reads, stored, fn)
}

// fnUse is what a mutation's fn does with the current object.
type fnUse int

const (
	changes              fnUse = iota // fn may change it: it gets a copy
	reads                             // fn only reads it
	readsNoManagedFields              // fn reads it but never its managedFields
)

// keptFields carries a write's managedFields as their stored bytes beside
// the objects, which then have none, from the stored object to the one
// stored: the field manager's common answer (apply.UpdateStored) reads and
// writes the bytes, where decoding them into maps and encoding them again
// was a tenth of an update. Where anything else needs them, they are put
// back (withKeptFields).
type keptFields struct {
	live    []byte // the current object's, as stored; nil: it has its own
	written []byte // the object to store's, encoded; nil: it has its own
}

// keepsFields reports whether a write may carry managedFields as bytes: a
// write the field manager records, in the storage version, answered from
// the bytes it stores, with no hook or subresource that reads the objects.
// (A create or update must also be no apply, an update's fn must leave
// them alone, and an apply needs a KeptApply.)
func keepsFields(k *Kind, version string, o WriteOptions) bool {
	return o.Answer != nil && !o.DryRun && o.Subresource == "" &&
		o.FieldManager != "" && k.storedAsServed(version) && k.AfterWrite == nil && k.FieldManagers[version] != nil
}

// mutate is Mutate, handing fn the current object as use allows, and an
// apply's stored the managedFields as bytes when the write keeps them.
func (r *Registry) mutate(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, use fnUse, stored KeptApply, fn func(cur Object) (Object, error)) (Object, error) {
	var kept *keptFields
	if keepsFields(k, version, o) && (o.Applied && stored != nil || !o.Applied && use == readsNoManagedFields) {
		kept = &keptFields{}
	}
	c, rev, err := r.guaranteedUpdate(ctx, k, version, ns, name, Preconditions{}, o.DryRun, kept, func(cur Object) (op, Object, error) {
		obj, err := keptApply(kept, stored, cur)
		if err != nil {
			return opNone, nil, err
		}
		if obj == nil {
			in := cur
			if use == changes {
				in = deepCopy(cur)
			}
			if obj, err = fn(in); err != nil {
				return opNone, nil, err
			}
		}
		if rv := str(meta(obj)["resourceVersion"]); rv != "" && rv != str(meta(cur)["resourceVersion"]) {
			return opNone, nil, conflict(k, name)
		}
		return r.updated(k, version, ns, name, cur, obj, o, kept)
	})
	if err != nil {
		return nil, err
	}
	if c.op == opRemove && rev != 0 {
		meta(c.obj)["resourceVersion"] = formatRev(rev)
	}
	r.answer(k, version, &c, rev, o)
	if err := r.answerKept(&c, o); err != nil {
		return nil, err
	}
	return c.obj, nil
}

// keptApply is stored's answer for cur, an apply's object without the
// managedFields kept.live holds: the object, with the list's bytes left in
// kept.written. nil when there is none to ask or it declines: cur then has
// its managedFields back (and kept.live is nil) for the apply from maps.
func keptApply(kept *keptFields, stored KeptApply, cur Object) (Object, error) {
	if kept == nil || kept.live == nil || stored == nil {
		return nil, nil
	}
	obj, written, ok, err := stored(cur, kept.live)
	if err != nil {
		return nil, err
	}
	if ok {
		kept.written = written
		return obj, nil
	}
	if err := withKeptFields(cur, kept.live); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	kept.live = nil
	return nil, nil
}

// answerKept puts c's kept managedFields back into the object a write
// returns when the answer is not the stored bytes: the object answers.
func (r *Registry) answerKept(c *change, o WriteOptions) error {
	if c.mf == nil || len(Answered(o.Answer)) > 0 {
		return nil
	}
	if err := withKeptFields(c.obj, c.mf); err != nil {
		return apierrors.NewInternalError(err)
	}
	return nil
}

// Answered is what a write left in WriteOptions.Answer p (nil for none).
func Answered(p *[]byte) []byte {
	if p == nil {
		return nil
	}
	return *p
}

// updated computes the object that replaces old and what to write: nothing
// when nothing changes (the answer is old, with its resourceVersion), a
// removal when the last finalizer of a deleted object goes, else a put.
//
// With kept (keptFields), old comes without its managedFields, which
// kept.live holds; the put's object goes without them too when kept.written
// holds them, and the other answers (no change, a removal) get them back.
func (r *Registry) updated(k *Kind, version, ns, name string, old, obj Object, o WriteOptions, kept *keptFields) (op, Object, error) {
	m, om := meta(obj), meta(old)
	if k.Namespaced {
		putString(m, om, "namespace", ns)
	}
	putString(m, om, "name", name)
	switch {
	case o.Subresource == "status":
		// Only status changes through /status, and metadata where the kind
		// lets it (StatusWritesMetadata).
		st, has := obj["status"]
		newMeta := obj["metadata"]
		obj = deepCopy(old)
		if has {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
		if k.StatusWritesMetadata {
			obj["metadata"] = newMeta
		} else if mf, ok := mapOf(newMeta)["managedFields"]; ok && o.Applied {
			// An apply's list carries its own entry: kept, as
			// kube-apiserver's status strategy keeps it.
			meta(obj)["managedFields"] = mf
		}
		m = meta(obj)
	case k.StatusSubresource:
		if st, ok := old["status"]; ok {
			obj["status"] = st
		} else {
			delete(obj, "status")
		}
	}
	// System fields keep their stored values. deletionTimestamp changes only
	// through DELETE: kube-apiserver ignores a client's attempt to set or
	// clear it (200, value kept) rather than refusing the write.
	for _, f := range []string{"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds"} {
		if v, ok := om[f]; ok {
			m[f] = v
		} else {
			delete(m, f)
		}
	}
	sent := sendsManagedFields(k, version, o, m) && !sameAsStored(m["managedFields"], om, kept)
	switch {
	case sent && kept != nil && kept.live != nil:
		// The field manager reads the stored list beside the one sent.
		if err := withKeptFields(old, kept.live); err != nil {
			return opNone, nil, apierrors.NewInternalError(err)
		}
		kept.live = nil
	case sent || o.Applied:
	default:
		if mf, ok := om["managedFields"]; ok {
			m["managedFields"] = mf
		} else {
			delete(m, "managedFields")
		}
	}
	k.setTypeMeta(obj, version)
	if err := k.prepare(obj, old, version); err != nil {
		return opNone, nil, err
	}
	if k.TrackGeneration && !sameJSON(specOf(obj), specOf(old)) {
		m["generation"] = toInt(om["generation"]) + 1
	}
	if errs := r.validate(k, obj, old); len(errs) > 0 {
		return opNone, nil, apierrors.NewInvalid(k.validatedAs(), name, errs)
	}
	k.throughStorage(obj, version)
	m["resourceVersion"] = om["resourceVersion"]
	same := sameWithoutManagedFields(obj, old)
	switch {
	case !o.Applied:
	case kept != nil && kept.written != nil: // an apply's, as bytes beside both objects
		same = same && bytes.Equal(kept.written, kept.live)
	default:
		// An apply that changes only ownership still writes.
		same = sameJSON(obj, old)
	}
	if same && !sent {
		return unchanged(old, kept)
	}
	k.setTypeMeta(obj, version)
	obj, err := r.recordUpdate(k, version, old, obj, o, kept)
	if err != nil {
		return opNone, nil, err
	}
	m = meta(obj)
	if k.PrepareUpdated != nil {
		k.PrepareUpdated(obj, old)
		same = sameWithoutManagedFields(obj, old)
	}
	// An object that, the field manager and the kind's strategy done,
	// differs from the stored one in its managedFields times alone (a list
	// sent, or a change the strategy undid) changes nothing: kube-apiserver
	// keeps the stored times, and a write that changes nothing stores
	// nothing.
	if same && (sent || k.PrepareUpdated != nil) {
		now, err := keptOr(m["managedFields"], kept, true)
		if err != nil {
			return opNone, nil, err
		}
		was, err := keptOr(om["managedFields"], kept, false)
		if err != nil {
			return opNone, nil, err
		}
		if sameEntriesButTimes(now, was) {
			return unchanged(old, kept)
		}
	}
	// Removing the last finalizer of a deleted object removes it.
	if str(m["deletionTimestamp"]) != "" && len(sliceOf(m["finalizers"])) == 0 {
		if kept != nil && kept.written != nil {
			if err := withKeptFields(obj, kept.written); err != nil {
				return opNone, nil, apierrors.NewInternalError(err)
			}
			kept.written = nil
		}
		return opRemove, obj, nil
	}
	k.setTypeMeta(obj, version)
	return opPut, obj, nil
}

// unchanged is updated's answer for a write that changes nothing: old, with
// the managedFields kept as bytes back in it; no write, the same
// resourceVersion.
func unchanged(old Object, kept *keptFields) (op, Object, error) {
	if kept != nil && kept.live != nil {
		if err := withKeptFields(old, kept.live); err != nil {
			return opNone, nil, apierrors.NewInternalError(err)
		}
		kept.written = nil
	}
	return opNone, old, nil
}

// keptOr is an object's managedFields list: the bytes a write keeps for it
// (kept.written for the object written, kept.live for the stored one)
// decoded, or mf, the list in its metadata, where there are none.
func keptOr(mf any, kept *keptFields, written bool) (any, error) {
	if kept == nil {
		return mf, nil
	}
	b := kept.live
	if written {
		b = kept.written
	}
	if b == nil {
		return mf, nil
	}
	v, err := decodeKeptFields(b)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	return v, nil
}

// putString sets m[key] to s: as it is when it holds s already, else from
// old's metadata when that holds s (the URL's namespace and name are the
// stored object's), since a string put into a map is a new allocation.
func putString(m, old map[string]any, key, s string) {
	if v, ok := m[key].(string); ok && v == s {
		return
	}
	if v, ok := old[key].(string); ok && v == s {
		m[key] = old[key]
		return
	}
	m[key] = s
}

// recordUpdate adds the writer's Update entry to obj's managedFields
// (server-side apply computes its own entries). With kept, the field
// manager writes the entry as bytes (kept.written) when it can: a create's,
// or, from the stored bytes kept.live (old and obj then come without
// managedFields), an update's; else kept.live is put back into both, as
// updated hands it on without kept, for its general answer.
func (r *Registry) recordUpdate(k *Kind, version string, old, obj Object, o WriteOptions, kept *keptFields) (Object, error) {
	var liveMF []byte
	if kept != nil {
		liveMF = kept.live
	}
	fm := k.FieldManager(version, o.Subresource)
	if fm == nil || o.FieldManager == "" || o.Applied {
		if liveMF != nil && kept.written == nil { // kept as stored, unless an apply wrote them
			kept.written = liveMF
		}
		return obj, nil
	}
	if kept != nil && old == nil { // a create
		if out, mf, ok := fm.CreateStored(obj, o.FieldManager); ok {
			kept.written = mf
			return out, nil
		}
	}
	if liveMF != nil {
		if out, mf, ok := fm.UpdateStored(old, liveMF, obj, o.FieldManager); ok {
			kept.written = mf
			return out, nil
		}
		if err := withKeptFields(old, liveMF); err != nil {
			return nil, apierrors.NewInternalError(err)
		}
		meta(obj)["managedFields"] = meta(old)["managedFields"]
	}
	out, err := fm.Update(old, obj, o.FieldManager)
	if err != nil || out == nil {
		// Ownership is bookkeeping: a failure must not fail the write. As
		// kube-apiserver's field manager does then, the object goes without
		// managedFields rather than with a list the manager could not read.
		delete(meta(obj), "managedFields")
		return obj, nil
	}
	return out, nil
}

// sendsManagedFields reports whether a write other than an apply brings
// metadata.managedFields (not null) for the field manager to read, as
// kube-apiserver's reads an update's or a create's: entries that stand in
// for the stored ones, an empty list or a list of one empty entry that
// clears them, entries it cannot read that leave the stored ones. A write
// the field manager does not record, and a subresource's (whose list
// kube-apiserver ignores), keep the stored list whatever they send.
func sendsManagedFields(k *Kind, version string, o WriteOptions, m map[string]any) bool {
	return !o.Applied && o.Subresource == "" && o.FieldManager != "" && k.FieldManagers[version] != nil &&
		m["managedFields"] != nil
}

// sameAsStored reports whether sent, the managedFields an update brings, is
// the stored list (om's, or kept.live's bytes where the write keeps them):
// a client sending back what it read. The field manager answers the same
// from either list, and the stored one keeps the write on the path that
// reads the bytes.
func sameAsStored(sent any, om map[string]any, kept *keptFields) bool {
	if kept != nil && kept.live != nil {
		b, err := MarshalJSON(sent)
		return err == nil && bytes.Equal(b, kept.live)
	}
	stored, ok := om["managedFields"]
	return ok && sameJSON(sent, stored)
}

// sameEntriesButTimes reports whether two managedFields lists hold the
// same entries in the same order once each entry's time is left out (the
// comparison kube-apiserver makes before it keeps the stored times).
func sameEntriesButTimes(a, b any) bool {
	as, bs := sliceOf(a), sliceOf(b)
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		ae, aok := as[i].(map[string]any)
		be, bok := bs[i].(map[string]any)
		if !aok || !bok || !sameJSON(withoutTime(ae), withoutTime(be)) {
			return false
		}
	}
	return true
}

// withoutTime is a managedFields entry without its time (a shallow copy).
func withoutTime(e map[string]any) map[string]any {
	out := make(map[string]any, len(e))
	for k, v := range e {
		if k != "time" {
			out[k] = v
		}
	}
	return out
}
