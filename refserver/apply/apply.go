// Package apply is server-side apply for the reference server: field
// ownership (metadata.managedFields), Apply with conflicts and force, and the
// Update bookkeeping every other write needs.
//
// It drives k8s.io/apimachinery/pkg/util/managedfields (the FieldManager
// kube-apiserver itself uses, on sigs.k8s.io/structured-merge-diff/v6), so
// managedFields entries (manager, operation Apply|Update, apiVersion, time,
// fieldsType FieldsV1, fieldsV1) and the 409 wording are kube-apiserver's:
//
//	Apply failed with 1 conflict: conflict with "kubectl": .data.key
//	Apply failed with 3 conflicts: conflicts with "editor" using v1:
//	- .data.k2 ...
//
// (an Update manager is named with its apiVersion, an Apply manager without).
//
// A Manager serves one kind at one version. Build it with ForBuiltin
// (ConfigMap, Secret, Namespace: schemas taken from Kubernetes v1.36.3's
// OpenAPI v3, embedded) or ForSchema (a CRD version's structural
// openAPIV3Schema; nil gives the deduced schema, where every field is atomic).
// Objects are JSON-shaped map[string]any; inputs are not modified. Build one
// Manager per kind and version and share it: it is safe for concurrent use.
//
//	m, _ := apply.ForBuiltin("ConfigMap")
//	obj, err := m.Apply(live, applied, "kubectl", false) // live nil: create
//	obj, err = m.Update(live, updated, "curl")            // PUT, non-apply PATCH, POST
//
// ValidatePatchOptions gives kube-apiserver's 422 for a missing fieldManager
// on apply and for force on any other patch. Nothing here speaks HTTP.
package apply

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// coreSchemas are the OpenAPI v3 component schemas of ConfigMap, Secret,
// Namespace, Event, ServiceAccount and everything they reference, from Kubernetes v1.36.3's
// api/openapi-spec/v3/api__v1_openapi.json (descriptions removed).
//
//go:embed core_v1_schemas.json
var coreSchemas []byte

// crdSchemas are the OpenAPI v3 component schemas of CustomResourceDefinition
// and everything it references but ObjectMeta's (coreSchemas has them), from
// Kubernetes v1.36.3's api/openapi-spec/v3/apis__apiextensions.k8s.io__v1_openapi.json
// (descriptions removed): kube-apiserver's field manager types a CRD by
// them, so its entries own spec's fields, not spec itself.
//
//go:embed apiextensions_v1_schemas.json
var crdSchemas []byte

// coordinationSchemas are Lease's and LeaseSpec's OpenAPI v3 component
// schemas (what they reference is in coreSchemas), from Kubernetes v1.36.3's
// api/openapi-spec/v3/apis__coordination.k8s.io__v1_openapi.json
// (descriptions removed).
//
//go:embed coordination_v1_schemas.json
var coordinationSchemas []byte

// rbacSchemas are the OpenAPI v3 component schemas of Role, ClusterRole,
// RoleBinding, ClusterRoleBinding and what they reference beyond
// coreSchemas, from Kubernetes v1.36.3's
// api/openapi-spec/v3/apis__rbac.authorization.k8s.io__v1_openapi.json
// (descriptions removed).
//
//go:embed rbac_v1_schemas.json
var rbacSchemas []byte

// eventsSchemas are events.k8s.io/v1 Event's and EventSeries' OpenAPI v3
// component schemas (what they reference is in coreSchemas), from
// Kubernetes v1.36.3's api/openapi-spec/v3/apis__events.k8s.io__v1_openapi.json
// (descriptions removed).
//
//go:embed events_v1_schemas.json
var eventsSchemas []byte

const objectMetaRef = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

// Manager applies and records field ownership for one kind and version.
type Manager struct {
	gvk schema.GroupVersionKind
	gv  string // gvk's apiVersion
	fm  *managedfields.FieldManager
	tc  managedfields.TypeConverter
	// updater is the Apply fast path's merge.Updater (applyfast.go).
	updater *merge.Updater
	// clock stamps the fast paths' entries (tests); nil is time.Now.
	clock func() time.Time
	// prunes, when set (tests), hears whether the Apply fast path skipped
	// pruning an applier's earlier fields.
	prunes func(skipped bool)
	// walked, when set (tests), hears which of the fast paths' walks of
	// the objects answered: "create", "sole owner" (createfields.go),
	// "first apply" or "unchanged re-apply" (applyplain.go).
	walked func(which string)

	empty struct { // emptyTyped's
		once  sync.Once
		value *typed.TypedValue
		err   error
	}
	walk struct { // walkRoot's
		once sync.Once
		root *walkType
	}
	// Default, when set, defaults an object the way the kind's strategy
	// does, so applied configurations are compared after defaulting.
	Default func(obj map[string]any)

	// custom: the library's CRD field manager (custom resources, deduced kinds).
	custom bool
	// subresource names the subresource this Manager records writes
	// through ("" for the main resource): its entries carry it, and only
	// the library answers (the fast paths write main-resource entries).
	subresource string
	// subs are the subresources' Managers (ForSubresource), made once each.
	subs struct {
		mu sync.Mutex
		m  map[string]*Manager
	}

	// zero is what a create is compared with where that is not an empty
	// object: kube-apiserver's field manager compares a new built-in object
	// with its Go type's zero value, in which a struct field without
	// omitempty (a CRD's spec and spec.names, a namespace's spec and
	// status) already exists, so its entry does not own it ("."). nil for
	// kinds whose zero value is empty but for metadata, and for custom
	// resources, compared with an empty object as on kube-apiserver.
	zero map[string]any
}

// builtins are the built-in kinds with schemas of their own, by group and
// kind (version v1): the type converter of the embedded schemas that type
// them, and a new value of their Go type.
var builtins = map[schema.GroupKind]struct {
	types  func() (managedfields.TypeConverter, error)
	goType func() any
}{
	{Kind: "ConfigMap"}:                                               {coreTypeConverter, func() any { return &corev1.ConfigMap{} }},
	{Kind: "Secret"}:                                                  {coreTypeConverter, func() any { return &corev1.Secret{} }},
	{Kind: "Namespace"}:                                               {coreTypeConverter, func() any { return &corev1.Namespace{} }},
	{Kind: "Event"}:                                                   {coreTypeConverter, func() any { return &corev1.Event{} }},
	{Kind: "ServiceAccount"}:                                          {coreTypeConverter, func() any { return &corev1.ServiceAccount{} }},
	{Group: "events.k8s.io", Kind: "Event"}:                           {coreTypeConverter, func() any { return &eventsv1.Event{} }},
	{Group: "coordination.k8s.io", Kind: "Lease"}:                     {coreTypeConverter, func() any { return &coordinationv1.Lease{} }},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:                {coreTypeConverter, func() any { return &rbacv1.Role{} }},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         {coreTypeConverter, func() any { return &rbacv1.ClusterRole{} }},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:         {coreTypeConverter, func() any { return &rbacv1.RoleBinding{} }},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:  {coreTypeConverter, func() any { return &rbacv1.ClusterRoleBinding{} }},
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: {crdTypeConverter, func() any { return &apiextensionsv1.CustomResourceDefinition{} }},
}

// ForBuiltin is the Manager of a built-in kind, named as kubectl names one
// (schema.GroupKind's String: Kind, or Kind.group): ConfigMap, Secret,
// Namespace, Event or ServiceAccount (core/v1), Event.events.k8s.io,
// Lease.coordination.k8s.io, Role, ClusterRole, RoleBinding or
// ClusterRoleBinding of rbac.authorization.k8s.io, or
// CustomResourceDefinition.apiextensions.k8s.io (each in v1).
func ForBuiltin(kind string) (*Manager, error) {
	gk := schema.ParseGroupKind(kind)
	b, ok := builtins[gk]
	if !ok {
		return nil, fmt.Errorf("apply: no built-in schema for kind %q", kind)
	}
	tc, err := b.types()
	if err != nil {
		return nil, err
	}
	m, err := newManager(gk.WithVersion("v1"), tc, false)
	if err != nil {
		return nil, err
	}
	m.zero, err = zeroObject(b.goType())
	return m, err
}

// zeroObject is v's JSON as an object without metadata (which a create
// carries anyway), nil when nothing else is left.
func zeroObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("apply: zero object: %w", err)
	}
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("apply: zero object: %w", err)
	}
	delete(o, "metadata")
	if len(o) == 0 {
		return nil, nil
	}
	return o, nil
}

// coreTypes and crdTypes are the type converters of the embedded schemas,
// each built once and shared by its kinds' Managers (they are only read):
// building one is most of a Manager's cost at start-up.
var coreTypes, crdTypes typeConverter

// coreTypeConverter serves core/v1's kinds, events.k8s.io's Event, Lease and the RBAC kinds: one
// converter for all, since the other groups' schemas are small additions.
func coreTypeConverter() (managedfields.TypeConverter, error) {
	return coreTypes.get(coreSchemas, coordinationSchemas, rbacSchemas, eventsSchemas)
}
func crdTypeConverter() (managedfields.TypeConverter, error) {
	return crdTypes.get(coreSchemas, crdSchemas)
}

type typeConverter struct {
	once sync.Once
	tc   managedfields.TypeConverter
	err  error
}

// get builds the converter from the models of the documents given, the
// first time.
func (c *typeConverter) get(docs ...[]byte) (managedfields.TypeConverter, error) {
	c.once.Do(func() {
		models := map[string]*spec.Schema{}
		for _, doc := range docs {
			if err := json.Unmarshal(doc, &models); err != nil {
				c.err = fmt.Errorf("apply: embedded schemas: %w", err)
				return
			}
		}
		if c.tc, c.err = managedfields.NewTypeConverter(models, false); c.err != nil {
			c.err = fmt.Errorf("apply: embedded schemas: %w", c.err)
		}
	})
	return c.tc, c.err
}

// ForSchema is the Manager of a custom resource version. openAPIV3Schema is
// the version's structural schema (JSON-shaped); metadata is typed as
// ObjectMeta whatever the schema says. A nil schema makes every field atomic.
func ForSchema(gvk schema.GroupVersionKind, openAPIV3Schema map[string]any) (*Manager, error) {
	if openAPIV3Schema == nil {
		return newManager(gvk, managedfields.NewDeducedTypeConverter(), true)
	}
	models, err := loadCore()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(openAPIV3Schema)
	if err != nil {
		return nil, fmt.Errorf("apply: schema of %s: %w", gvk, err)
	}
	var s spec.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("apply: schema of %s: %w", gvk, err)
	}
	if s.Properties == nil {
		s.Properties = map[string]spec.Schema{}
	}
	s.Properties["apiVersion"] = *spec.StringProperty()
	s.Properties["kind"] = *spec.StringProperty()
	s.Properties["metadata"] = spec.Schema{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef(objectMetaRef)}}
	s.AddExtension("x-kubernetes-group-version-kind", []any{
		map[string]any{"group": gvk.Group, "version": gvk.Version, "kind": gvk.Kind},
	})
	name := "io.apiconform.custom." + gvk.Group + "." + gvk.Version + "." + gvk.Kind
	models[name] = &s
	tc, err := managedfields.NewTypeConverter(models, false)
	if err != nil {
		return nil, fmt.Errorf("apply: schema of %s: %w", gvk, err)
	}
	return newManager(gvk, tc, true)
}

func loadCore() (map[string]*spec.Schema, error) {
	models := map[string]*spec.Schema{}
	if err := json.Unmarshal(coreSchemas, &models); err != nil {
		return nil, fmt.Errorf("apply: embedded core schemas: %w", err)
	}
	return models, nil
}

func newManager(gvk schema.GroupVersionKind, tc managedfields.TypeConverter, custom bool) (*Manager, error) {
	return newSubresourceManager(gvk, tc, custom, "", nil)
}

func newSubresourceManager(gvk schema.GroupVersionKind, tc managedfields.TypeConverter, custom bool, subresource string, resets []string) (*Manager, error) {
	m := &Manager{gvk: gvk, gv: gvk.GroupVersion().String(), tc: tc, custom: custom, subresource: subresource}
	m.updater = &merge.Updater{Converter: sameVersion{gv: m.gv}}
	h := hooks{m: m}
	var reset map[fieldpath.APIVersion]fieldpath.Filter
	if len(resets) > 0 {
		set := fieldpath.NewSet()
		for _, f := range resets {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		reset = map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(m.gv): fieldpath.NewExcludeSetFilter(set)}
	}
	var (
		fm  *managedfields.FieldManager
		err error
	)
	if custom {
		fm, err = managedfields.NewDefaultCRDFieldManager(tc, h, h, h, gvk, gvk.GroupVersion(), subresource, reset)
	} else {
		fm, err = managedfields.NewDefaultFieldManager(tc, h, h, h, gvk, gvk.GroupVersion(), subresource, reset)
	}
	if err != nil {
		return nil, err
	}
	m.fm = fm
	return m, nil
}

// ForSubresource is the Manager of writes through subresource name (e.g.
// "status"): its entries carry the subresource, so its managers are others
// than the main resource's of the same name (and a conflict names it), and
// the top-level fields in resets are neither applied nor owned through it,
// as the kind's strategy for that subresource resets them. Made once per
// name; later calls return it whatever resets they give.
func (m *Manager) ForSubresource(name string, resets []string) (*Manager, error) {
	m.subs.mu.Lock()
	defer m.subs.mu.Unlock()
	if s, ok := m.subs.m[name]; ok {
		return s, nil
	}
	s, err := newSubresourceManager(m.gvk, m.tc, m.custom, name, resets)
	if err != nil {
		return nil, err
	}
	s.zero, s.Default, s.clock = m.zero, m.Default, m.clock
	if m.subs.m == nil {
		m.subs.m = map[string]*Manager{}
	}
	m.subs.m[name] = s
	return s, nil
}

// Apply merges the applied configuration into live for manager and returns
// the new object with its managedFields. live nil means the apply creates the
// object. Fields another manager owns with a different value are a 409
// Conflict unless force, which takes them over. The common cases take a fast
// path (applyfast.go) that gives the library's result without its cost; the
// rest go to the library. The result may share values with live and applied.
func (m *Manager) Apply(live, applied map[string]any, manager string, force bool) (map[string]any, error) {
	if out, ok := m.fastApply(live, applied, manager, force); ok {
		return out, nil
	}
	return m.libraryApply(live, applied, manager, force)
}

// libraryApply is Apply by the FieldManager: the reference the fast path
// must match.
func (m *Manager) libraryApply(live, applied map[string]any, manager string, force bool) (map[string]any, error) {
	liveObj, err := m.object(live)
	if err != nil {
		return nil, err
	}
	appliedObj, err := m.object(applied)
	if err != nil {
		return nil, err
	}
	out, err := m.fm.Apply(liveObj, appliedObj, manager, force)
	if err != nil {
		return nil, asStatus(err)
	}
	return out.(*unstructured.Unstructured).Object, nil
}

// Update records, in updated's managedFields, that manager set the fields it
// changed from live (an Update entry), taking them from other managers. live
// nil means a create. The common cases take a fast path (update.go) that
// gives the library's result without its cost; the rest go to the library.
// The result may share values below metadata with updated.
func (m *Manager) Update(live, updated map[string]any, manager string) (map[string]any, error) {
	if out, ok := m.fastUpdate(live, updated, manager); ok {
		return out, nil
	}
	return m.libraryUpdate(live, updated, manager)
}

// libraryUpdate is Update by the FieldManager: the reference the fast path
// must match.
func (m *Manager) libraryUpdate(live, updated map[string]any, manager string) (map[string]any, error) {
	if live == nil {
		live = m.zero // nil: an empty object
	}
	liveObj, err := m.object(live)
	if err != nil {
		return nil, err
	}
	newObj, err := m.object(updated)
	if err != nil {
		return nil, err
	}
	out, err := m.fm.Update(liveObj, newObj, manager)
	if err != nil {
		return nil, asStatus(err)
	}
	return out.(*unstructured.Unstructured).Object, nil
}

// asStatus gives errors that are not already a Status the form
// kube-apiserver answers them with: 500, no reason, the error as message
// (e.g. "failed to create typed patch object (/ap2; /v1, Kind=ConfigMap):
// .bogus: field not declared in schema").
func asStatus(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 500, Message: err.Error()}}
}

// object copies a JSON-shaped map into an Unstructured of the Manager's kind,
// with integral numbers as int64 as structured-merge-diff expects: what
// encoding it as JSON and decoding that with integers preserved gives
// (jsonCopy, or that round trip itself for what jsonCopy does not take).
func (m *Manager) object(obj map[string]any) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if c, ok := jsonCopy(obj).(map[string]any); ok {
		u.Object = c
	} else if obj != nil {
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("apply: object: %v", err))
		}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, &u.Object); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("apply: object: %v", err))
		}
	}
	if u.GetAPIVersion() == "" || u.GetKind() == "" {
		u.SetGroupVersionKind(m.gvk)
	}
	return u, nil
}

// hooks are the conversion, defaulting and creation the FieldManager needs;
// a Manager has one version, so conversion only relabels the apiVersion.
type hooks struct{ m *Manager }

func (h hooks) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("apply: cannot convert %T to %T", in, out)
	}
	dst.Object = runtime.DeepCopyJSON(src.Object)
	return nil
}

func (h hooks) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("apply: cannot convert %T", in)
	}
	target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		// Another group's version (an events.k8s.io/v1 entry on a core/v1
		// event): as kube-apiserver's scheme, no conversion, and the field
		// manager then drops the entry.
		return nil, runtime.NewNotRegisteredGVKErrForTarget("apiconform", u.GroupVersionKind(), gv)
	}
	if target == u.GroupVersionKind() && h.m.Default == nil {
		// Nothing to relabel, so no copy: the FieldManager only reads what
		// it converts, except the object an apply produced, which it
		// defaults (a copy keeps Default off what that shares with live
		// and the patch).
		return u, nil
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(target)
	return out, nil
}

func (h hooks) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (h hooks) Default(in runtime.Object) {
	if u, ok := in.(*unstructured.Unstructured); ok && h.m.Default != nil {
		h.m.Default(u.Object)
	}
}

func (h hooks) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

// ValidatePatchOptions checks a PATCH's options as kube-apiserver does and
// returns its 422 (PatchOptions.meta.k8s.io "" is invalid: ...): an apply
// patch needs a fieldManager, force is only for apply patches, and dryRun
// and fieldValidation take their documented values.
func ValidatePatchOptions(opts metav1.PatchOptions, patchType types.PatchType) error {
	errs := metavalidation.ValidatePatchOptions(&opts, patchType)
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
}

// jsonCopy deep-copies v as encoding it to JSON and decoding that with
// sigsjson.UnmarshalCaseSensitivePreserveInts would, without the bytes
// (integral numbers become int64). It returns nil for a value whose round
// trip jsonvalue.Copy cannot vouch for: the caller takes the round trip then.
func jsonCopy(v any) any {
	out, ok := jsonvalue.Copy(v, jsonvalue.PreserveInts)
	if !ok {
		return nil
	}
	return out
}
