package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/storage"
)

const crdGroup = "apiextensions.k8s.io"

// crdKind is the strategy of CustomResourceDefinition; writing one starts
// (or stops) serving the kind it defines. Deleting one marks it deleted
// with the cleanup finalizer, as kube-apiserver does; its custom resources
// are then deleted and the finalizer removed (cleanUpCRD).
func crdKind(r *Registry) *Kind {
	k := &Kind{
		Group: crdGroup, Versions: []string{"v1"}, Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList", ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"}, StatusSubresource: true, StatusWritesMetadata: true, TrackGeneration: true,
		HashedVersion: "v1beta1",
		// The Go type decides unknown fields under field validation and the
		// strategic merge patch rules, as for kube-apiserver; TypedFor rather
		// than Typed keeps the schema-based field manager.
		TypedFor:       func(string) func() any { return func() any { return &apiextensionsv1.CustomResourceDefinition{} } },
		StrategicMerge: apiextensionsv1.CustomResourceDefinition{},
		Prepare: func(obj, old Object) {
			spec := mapOf(obj["spec"])
			if spec == nil {
				return
			}
			names := mapOf(spec["names"])
			if names != nil {
				if str(names["singular"]) == "" {
					names["singular"] = strings.ToLower(str(names["kind"]))
				}
				if str(names["listKind"]) == "" && str(names["kind"]) != "" {
					names["listKind"] = str(names["kind"]) + "List"
				}
			}
			if _, ok := spec["conversion"]; !ok {
				spec["conversion"] = map[string]any{"strategy": "None"}
			}
		},
		// kube-apiserver's controllers write a CRD's status through /status;
		// no writer of the CRD owns it.
		PrepareCreated: func(obj Object) { r.setCRDStatus(obj) },
		PrepareUpdated: func(obj, old Object) { r.keepCRDStatus(obj, old) },
		Validate:       func(obj, old Object) field.ErrorList { return validateCRD(r, obj, old) },
		AfterWrite: func(obj, old Object) {
			r.syncCRD(obj, old)
		},
		OnStart: func(ctx context.Context) error { return r.loadCRDs(ctx) },
		Columns: []Column{CreatedAtColumn},
		// A DELETE always marks the CRD first (the cleanup finalizer).
		GracefulDelete: true,
		MarkDeleted:    func(obj Object) { r.markCRDDeleted(obj) },
	}
	k.OnDeleteMarked = func(obj Object) { r.cleanUpCRD(k, str(meta(obj)["name"])) }
	return k
}

// setCRDStatus gives a CRD the status that serving it at once implies: its
// names accepted, Established, its storage version stored.
func (r *Registry) setCRDStatus(obj Object) {
	spec := mapOf(obj["spec"])
	if spec == nil {
		return
	}
	obj["status"] = map[string]any{
		"acceptedNames": mapOf(spec["names"]),
		"conditions": []any{
			map[string]any{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": r.now()},
			map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": r.now()},
		},
		"storedVersions": []any{storageVersionOf(spec)},
	}
}

// keepCRDStatus keeps an updated CRD's status as stored, as kube-apiserver's
// PrepareForUpdate does, but for what serving the update at once implies:
// its names accepted, and its storage version added to the stored ones. A
// CRD written back as it was read so stays unchanged (no new revision). A
// write through /status, whose status differs from the stored one, keeps
// the status it brings.
func (r *Registry) keepCRDStatus(obj, old Object) {
	if _, ok := old["status"]; ok && !sameJSON(obj["status"], old["status"]) {
		return
	}
	st := deepCopy(mapOf(old["status"]))
	if st == nil {
		r.setCRDStatus(obj)
		return
	}
	spec := mapOf(obj["spec"])
	st["acceptedNames"] = mapOf(spec["names"])
	stored := sliceOf(st["storedVersions"])
	if v := storageVersionOf(spec); !slices.Contains(stored, any(v)) {
		st["storedVersions"] = append(stored, v)
	}
	obj["status"] = st
}

func storageVersionOf(spec map[string]any) string {
	for _, v := range sliceOf(spec["versions"]) {
		if boolOf(mapOf(v)["storage"]) {
			return str(mapOf(v)["name"])
		}
	}
	return ""
}

func validateCRD(r *Registry, obj, old Object) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	spec := mapOf(obj["spec"])
	group := str(spec["group"])
	names := mapOf(spec["names"])
	plural := str(names["plural"])
	if group == "" {
		errs = append(errs, field.Required(sp.Child("group"), ""))
	} else if len(strings.Split(group, ".")) < 2 {
		errs = append(errs, field.Invalid(sp.Child("group"), group, "should be a domain with at least one dot"))
	}
	if name := str(meta(obj)["name"]); name != plural+"."+group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, "must be spec.names.plural+\".\"+spec.group"))
	}
	for _, f := range []string{"plural", "singular", "kind", "listKind"} {
		v := str(names[f])
		if v == "" {
			errs = append(errs, field.Required(sp.Child("names", f), ""))
			continue
		}
		if f == "plural" || f == "singular" {
			for _, msg := range utilvalidation.IsDNS1035Label(v) {
				errs = append(errs, field.Invalid(sp.Child("names", f), v, msg))
			}
		}
	}
	switch str(spec["scope"]) {
	case "Namespaced", "Cluster":
	default:
		errs = append(errs, field.NotSupported(sp.Child("scope"), spec["scope"], []string{"Cluster", "Namespaced"}))
	}
	versions := sliceOf(spec["versions"])
	if len(versions) == 0 {
		errs = append(errs, field.Invalid(sp.Child("versions"), versions, "must have exactly one version marked as storage version"))
	}
	storage := 0
	for i, v := range versions {
		vm := mapOf(v)
		vp := sp.Child("versions").Index(i)
		if boolOf(vm["storage"]) {
			storage++
		}
		for _, msg := range utilvalidation.IsDNS1035Label(str(vm["name"])) {
			errs = append(errs, field.Invalid(vp.Child("name"), vm["name"], msg))
		}
		sch := mapOf(mapOf(vm["schema"])["openAPIV3Schema"])
		if sch == nil {
			errs = append(errs, field.Required(vp.Child("schema", "openAPIV3Schema"), "schemas are required"))
			continue
		}
		if _, err := compileSchema(sch); err != nil {
			errs = append(errs, field.Invalid(vp.Child("schema", "openAPIV3Schema"), "", err.Error()))
		}
	}
	if len(versions) > 0 && storage != 1 {
		errs = append(errs, field.Invalid(sp.Child("versions"), versions, "must have exactly one version marked as storage version"))
	}
	if old != nil {
		os := mapOf(old["spec"])
		if str(os["group"]) != group {
			errs = append(errs, field.Invalid(sp.Child("group"), group, "field is immutable"))
		}
		if str(mapOf(os["names"])["plural"]) != plural {
			errs = append(errs, field.Invalid(sp.Child("names", "plural"), plural, "field is immutable"))
		}
		if str(os["scope"]) != str(spec["scope"]) {
			errs = append(errs, field.Invalid(sp.Child("scope"), spec["scope"], "field is immutable"))
		}
	} else if k := r.Lookup(group, plural); k != nil && group != "" && plural != "" {
		errs = append(errs, field.Invalid(sp.Child("names", "plural"), plural, "is already in use"))
	}
	return errs
}

// loadCRDs serves the kinds of the CRDs found in the store (after a restart).
func (r *Registry) loadCRDs(ctx context.Context) error {
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: prefixOf(r.Lookup(crdGroup, "customresourcedefinitions"), "")})
	if err != nil {
		return err
	}
	crdK := r.Lookup(crdGroup, "customresourcedefinitions")
	for _, kv := range res.Items {
		var obj Object
		if err := json.Unmarshal(kv.Value, &obj); err == nil {
			r.syncCRD(obj, nil)
			if str(meta(obj)["deletionTimestamp"]) != "" && hasFinalizer(obj, crdCleanupFinalizer) {
				// Deleted before a restart: finish removing its objects.
				r.cleanUpCRD(crdK, str(meta(obj)["name"]))
			}
		}
	}
	return nil
}

// syncCRD starts, updates or stops serving the kind a CRD defines.
func (r *Registry) syncCRD(obj, old Object) {
	if obj == nil {
		if old == nil {
			return
		}
		spec := mapOf(old["spec"])
		group, plural := str(spec["group"]), str(mapOf(spec["names"])["plural"])
		if k := r.Lookup(group, plural); k != nil {
			r.Unregister(group, plural)
			r.dropAll(k)
		}
		return
	}
	terminating := str(meta(obj)["deletionTimestamp"]) != ""
	if terminating {
		// A terminating CRD keeps serving its kind, unchanged, until it is
		// gone, but refuses new objects (kube-apiserver: 403 Forbidden).
		spec := mapOf(obj["spec"])
		if k := r.Lookup(str(spec["group"]), str(mapOf(spec["names"])["plural"])); k != nil {
			k.createRefused.Store(&createWhileTerminating)
			return
		}
	}
	k, err := kindFromCRD(obj)
	if err != nil {
		return
	}
	if terminating {
		k.createRefused.Store(&createWhileTerminating)
	}
	r.Register(k)
}

// createWhileTerminating is kube-apiserver's reason for refusing a create of
// a custom resource whose CRD is being deleted.
var createWhileTerminating = "create not allowed while custom resource definition is terminating"

// dropAll removes every stored object of k.
func (r *Registry) dropAll(k *Kind) {
	ctx := context.Background()
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: basePrefix(k)})
	if err != nil {
		return
	}
	for _, kv := range res.Items {
		_, _, _ = r.store.Delete(ctx, kv.Key, 0)
	}
}

// crdVersion is what a CR kind needs from one CRD version.
type crdVersion struct {
	name    string
	raw     map[string]any // the openAPIV3Schema
	schema  *schemaNode
	compile *customSchema
	columns []Column
}

func kindFromCRD(obj Object) (*Kind, error) {
	spec := mapOf(obj["spec"])
	names := mapOf(spec["names"])
	k := &Kind{
		Group: str(spec["group"]), Resource: str(names["plural"]), Singular: str(names["singular"]),
		Kind: str(names["kind"]), ListKind: str(names["listKind"]), Namespaced: str(spec["scope"]) == "Namespaced",
		TrackGeneration: true, DeleteReturnsStatus: true,
	}
	for _, s := range sliceOf(names["shortNames"]) {
		k.ShortNames = append(k.ShortNames, str(s))
	}
	for _, s := range sliceOf(names["categories"]) {
		k.Categories = append(k.Categories, str(s))
	}
	var versions []crdVersion
	var storageV crdVersion
	for _, v := range sliceOf(spec["versions"]) {
		vm := mapOf(v)
		raw := mapOf(mapOf(vm["schema"])["openAPIV3Schema"])
		cv := crdVersion{name: str(vm["name"]), raw: raw, schema: parseSchemaNode(raw)}
		if k.Schemas == nil {
			k.Schemas = map[string]map[string]any{}
		}
		k.Schemas[cv.name] = raw
		if fm, err := apply.ForSchema(schema.GroupVersionKind{Group: k.Group, Version: cv.name, Kind: k.Kind}, raw); err == nil {
			if k.FieldManagers == nil {
				k.FieldManagers = map[string]*apply.Manager{}
			}
			k.FieldManagers[cv.name] = fm
		}
		compiled, err := compileSchema(raw)
		if err != nil {
			return nil, err
		}
		cv.compile = compiled
		for _, c := range sliceOf(vm["additionalPrinterColumns"]) {
			cm := mapOf(c)
			path := str(cm["jsonPath"])
			cv.columns = append(cv.columns, Column{Name: str(cm["name"]), Type: str(cm["type"]), Format: str(cm["format"]),
				Description: str(cm["description"]), Priority: int32(toInt(cm["priority"])),
				Cell: func(o Object) any { return jsonPathValue(o, path) }})
		}
		if boolOf(vm["storage"]) {
			storageV = cv
			sub := mapOf(vm["subresources"])
			if _, ok := sub["status"]; ok {
				k.StatusSubresource = true
			}
			if sc := mapOf(sub["scale"]); sc != nil {
				k.Scale = &ScaleSpec{SpecReplicasPath: str(sc["specReplicasPath"]), StatusReplicasPath: str(sc["statusReplicasPath"]), LabelSelectorPath: str(sc["labelSelectorPath"])}
			}
		}
		if served, ok := vm["served"].(bool); !ok || served {
			versions = append(versions, cv)
		}
	}
	if storageV.name == "" {
		return nil, fmt.Errorf("no storage version")
	}
	// The storage version leads; the rest keep their order.
	k.Versions = []string{storageV.name}
	for _, v := range versions {
		if v.name != storageV.name {
			k.Versions = append(k.Versions, v.name)
		}
	}
	k.Columns = storageV.columns
	if len(k.Columns) == 0 {
		// kube-apiserver's default for custom resources: an Age column of type date.
		k.Columns = []Column{{Name: "Age", Type: "date", Description: AgeColumn.Description,
			Cell: func(o Object) any { return str(meta(o)["creationTimestamp"]) }}}
	}
	sch := storageV
	k.Prepare = func(o, old Object) {
		sch.schema.applyDefaults(o, true)
	}
	k.Validate = func(o, old Object) field.ErrorList { return sch.compile.validate(o) }
	return k, nil
}

// jsonPathValue evaluates a simple JSONPath like .spec.replicas.
func jsonPathValue(o Object, path string) any {
	var cur any = o
	for _, part := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// Deleting a CustomResourceDefinition, as kube-apiserver v1.36 does it
// (observed): the DELETE adds the customresourcecleanup.apiextensions.k8s.io
// finalizer, sets deletionTimestamp and a Terminating condition
// (InstanceDeletionPending) and answers 200 with that object; the condition
// then turns to InstanceDeletionInProgress, every custom resource of the
// kind is deleted (one with finalizers of its own waits for them), and once
// none is left the finalizer is removed, which removes the CRD and stops
// serving its kind. Watchers see the same events in the same order.
//
// The reference server tries the cleanup at once, inside the DELETE (so a
// CRD whose objects have no finalizers is gone when the DELETE answers, and
// its name can be created again), and otherwise keeps trying in the
// background until the objects' finalizers are gone.

const crdCleanupFinalizer = "customresourcecleanup.apiextensions.k8s.io"

// The Terminating condition's reasons and messages, in kube-apiserver's words.
const (
	crdTerminating             = "Terminating"
	crdDeletionPending         = "InstanceDeletionPending"
	crdDeletionPendingMessage  = "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
	crdDeletionProgress        = "InstanceDeletionInProgress"
	crdDeletionProgressMessage = "CustomResource deletion is in progress"
	crdCleanupRetry            = 100 * time.Millisecond
)

// markCRDDeleted adjusts a CRD a DELETE is about to mark deleted.
func (r *Registry) markCRDDeleted(obj Object) {
	m := meta(obj)
	if !hasFinalizer(obj, crdCleanupFinalizer) {
		m["finalizers"] = append(sliceOf(m["finalizers"]), crdCleanupFinalizer)
	}
	delete(m, "deletionGracePeriodSeconds") // kube-apiserver sets none on a CRD
	r.setCRDCondition(obj, crdDeletionPending, crdDeletionPendingMessage)
}

// setCRDCondition sets the Terminating condition (True) with reason and message.
func (r *Registry) setCRDCondition(obj Object, reason, message string) {
	st := mapOf(obj["status"])
	if st == nil {
		st = map[string]any{}
		obj["status"] = st
	}
	cond := map[string]any{"type": crdTerminating, "status": "True", "reason": reason, "message": message, "lastTransitionTime": r.now()}
	conds := sliceOf(st["conditions"])
	for i, c := range conds {
		if str(mapOf(c)["type"]) == crdTerminating {
			if str(mapOf(c)["status"]) == "True" {
				cond["lastTransitionTime"] = mapOf(c)["lastTransitionTime"]
			}
			conds[i] = cond
			st["conditions"] = conds
			return
		}
	}
	st["conditions"] = append(conds, cond)
}

// cleanUpCRD removes the custom resources of the terminating CRD name, then
// its cleanup finalizer: once now, and in the background while objects
// with finalizers remain.
func (r *Registry) cleanUpCRD(crdK *Kind, name string) {
	if r.cleanUpCRDOnce(r.ctx, crdK, name) {
		return
	}
	r.background(func(ctx context.Context) {
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(crdCleanupRetry):
			}
			if r.cleanUpCRDOnce(ctx, crdK, name) {
				return
			}
		}
	})
}

// cleanUpCRDOnce makes one pass and reports whether the cleanup is over
// (the finalizer removed, or the CRD no longer terminating or gone).
func (r *Registry) cleanUpCRDOnce(ctx context.Context, crdK *Kind, name string) bool {
	var group, plural string
	c, _, err := r.guaranteedUpdate(ctx, crdK, "v1", "", name, Preconditions{}, false, nil, func(cur Object) (op, Object, error) {
		spec := mapOf(cur["spec"])
		group, plural = str(spec["group"]), str(mapOf(spec["names"])["plural"])
		if str(meta(cur)["deletionTimestamp"]) == "" || !hasFinalizer(cur, crdCleanupFinalizer) {
			return opNone, cur, nil
		}
		obj := deepCopy(cur)
		r.setCRDCondition(obj, crdDeletionProgress, crdDeletionProgressMessage)
		if sameJSON(obj["status"], cur["status"]) {
			return opNone, cur, nil
		}
		return opPut, obj, nil
	})
	if err != nil || str(meta(c.obj)["deletionTimestamp"]) == "" || !hasFinalizer(c.obj, crdCleanupFinalizer) {
		return true // gone (or unreadable), not terminating, or already released
	}
	if k := r.Lookup(group, plural); k != nil {
		res, err := r.DeleteCollection(ctx, k, k.StorageVersion(), "", Selector{}, DeleteOptions{})
		if err != nil {
			return false // try again
		}
		for _, o := range res.Items {
			if str(meta(o)["deletionTimestamp"]) != "" {
				return false // marked: its own finalizers hold it
			}
		}
	}
	// No object left: remove the finalizer; the last one removes the CRD
	// (and its AfterWrite stops serving the kind).
	_, _, err = r.guaranteedUpdate(ctx, crdK, "v1", "", name, Preconditions{}, false, nil, func(cur Object) (op, Object, error) {
		if !hasFinalizer(cur, crdCleanupFinalizer) {
			return opNone, cur, nil
		}
		var rest []any
		for _, f := range sliceOf(meta(cur)["finalizers"]) {
			if str(f) != crdCleanupFinalizer {
				rest = append(rest, f)
			}
		}
		if len(rest) == 0 {
			return opRemove, cur, nil
		}
		obj := deepCopy(cur)
		meta(obj)["finalizers"] = rest
		return opPut, obj, nil
	})
	return err == nil || ctx.Err() != nil
}

// hasFinalizer reports whether obj carries finalizer f.
func hasFinalizer(obj Object, f string) bool {
	for _, x := range sliceOf(meta(obj)["finalizers"]) {
		if str(x) == f {
			return true
		}
	}
	return false
}
