// Package registry is the reference server's one generic registry: it stores
// objects of any kind in the MVCC store, and lets a Kind (the per-kind
// strategy) decide defaulting, validation, the spec/status split, selectable
// fields and table columns. Built-in kinds and CRD-defined kinds are both Kinds.
package registry

import (
	"context"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/fieldcheck"
)

// Object is the generic, JSON-shaped form of every object.
type Object = map[string]any

// Column is one column of the Table form of a kind.
type Column struct {
	Name        string
	Type        string // string, integer, date, ...
	Format      string // e.g. "name"
	Description string
	Priority    int32
	// Cell computes the cell value for obj.
	Cell func(obj Object) any
}

// ScaleSpec says where a kind keeps the fields of its /scale subresource.
type ScaleSpec struct {
	SpecReplicasPath   string // e.g. .spec.replicas
	StatusReplicasPath string // e.g. .status.replicas
	LabelSelectorPath  string // optional, e.g. .status.selector
}

// Kind is the strategy of one resource: everything the generic registry
// needs to know that differs between kinds.
type Kind struct {
	Group      string
	Versions   []string // served versions; the first is the storage version
	Resource   string   // plural
	Singular   string
	Kind       string
	ListKind   string
	Namespaced bool
	ShortNames []string
	Categories []string

	StatusSubresource bool // writes to the main resource ignore status; /status writes status (StatusWritesMetadata: and metadata)
	// StatusWritesMetadata: a /status write changes metadata (labels,
	// annotations) as well as status, as namespaces' and CRDs' status
	// strategies allow on kube-apiserver; a custom resource's changes status alone.
	StatusWritesMetadata bool
	Scale                *ScaleSpec // /scale subresource when set
	TrackGeneration      bool       // metadata.generation starts at 1 and bumps on spec changes
	// DeleteReturnsStatus: an immediate DELETE answers a Success Status instead of the object.
	DeleteReturnsStatus bool
	// CreateOnUpdate: a PUT of a missing object creates it (201), as
	// kube-apiserver's strategies that allow create on update do (events).
	CreateOnUpdate bool
	// UpdateNeedsResourceVersion: a PUT of an existing object must name the
	// resourceVersion it replaces (kube-apiserver's strategies that do not
	// allow unconditional updates: leases); patches carry the current one.
	UpdateNeedsResourceVersion bool
	// StrategicMerge: application/strategic-merge-patch+json is accepted; the
	// value is a zero value of the Go type whose patch tags drive the merge.
	StrategicMerge any
	// Typed, for built-in kinds, decodes into the Go type so wrong field types
	// are rejected (kube-apiserver's message) and unknown fields are found.
	Typed func() any

	// FieldManagers record field ownership and serve server-side apply, per
	// version, for the main resource (FieldManager gives a subresource's).
	FieldManagers map[string]*apply.Manager
	// Schemas are the structural OpenAPI v3 schemas per version (CRD kinds,
	// Frobbers); a kind with Schemas and no Go type is a custom resource.
	Schemas map[string]map[string]any
	// Convert, when set, converts an object (named by its apiVersion) to
	// another served version; objects are stored in the storage version.
	Convert func(obj Object, toVersion string) (Object, error)
	// PrepareVersioned defaults and normalises an object in its request
	// version (old converted to the same version; nil on create).
	PrepareVersioned func(obj, old Object, version string) error
	// TypedFor, when set, gives the Go type of a version (instead of Typed).
	TypedFor func(version string) func() any
	// Prepare defaults and normalises a new or updated object (old is nil on create).
	Prepare func(obj, old Object)
	// PrepareCreated sets, on a create, what kube-apiserver's strategy sets
	// after its field manager has recorded the writer's fields (its
	// PrepareForCreate), so that no managedFields entry owns it: a
	// namespace's finalizer and phase, a CRD's status.
	PrepareCreated func(obj Object)
	// PrepareUpdated is PrepareCreated's counterpart on an update (its
	// PrepareForUpdate): it runs after the writer's fields are recorded, so
	// a change it undoes still counts as the writer's, as on kube-apiserver.
	PrepareUpdated func(obj, old Object)
	// Validate checks an object about to be written (old is nil on create).
	Validate func(obj, old Object) field.ErrorList
	// Fields are the selectable fields beyond metadata.name and metadata.namespace.
	Fields map[string]func(obj Object) string
	// Columns are the Table columns after Name; a kind whose columns
	// include one of format "name" places the name itself.
	Columns []Column
	// NameValidation checks metadata.name; nil means DNS subdomain.
	NameValidation func(name string) []string
	// AfterWrite runs after a write is stored: obj is nil when the object was
	// removed, old is nil when it was created (a CRD starts or stops serving its kind).
	AfterWrite func(obj, old Object)

	// GracefulDelete: a DELETE only marks the object deleted
	// (deletionTimestamp), finalizers or not; OnDeleteMarked finishes it.
	GracefulDelete bool
	// MarkDeleted adjusts an object a DELETE is about to mark deleted
	// (a namespace becomes Terminating).
	MarkDeleted func(obj Object)
	// OnDeleteMarked runs after a DELETE's mark is stored (a namespace's
	// content starts being removed).
	OnDeleteMarked func(obj Object)
	// OnStart runs when the registry starts (system namespaces are created;
	// stored CRDs serve their kinds again).
	OnStart func(ctx context.Context) error

	// StoredAs, when set, is the kind whose stored objects this kind serves
	// in a group of its own, as kube-apiserver serves events.k8s.io/v1
	// Events from core/v1's: that kind's keys, storage version and stored
	// form, so a write through either is read through both. FromStored and
	// ToStored convert between the stored form and this kind's version,
	// each into a new object. Its Columns are that kind's, their cells
	// computed on the stored form (AppendCells).
	StoredAs   *Kind
	FromStored func(stored Object) (Object, error)
	ToStored   func(obj Object) (Object, error)
	// TTL, when set, is how long an object is kept after its last write
	// (events: kube-apiserver's --event-ttl; expiry.go).
	TTL time.Duration
	// HashedVersion, when set, is the version discovery's storageVersionHash
	// names in place of the storage version, as kube-apiserver's does for a
	// kind it stores in an older version (CRDs: apiextensions.k8s.io/v1beta1).
	HashedVersion string

	// createRefused, when set, is why creates are refused (the kind's CRD
	// is terminating); reads, updates and deletes go on.
	createRefused atomic.Pointer[string]
	typeMeta      atomic.Pointer[typeMeta] // built on first use (setTypeMeta)
	// typedSchemas are FieldSchema's answers for a kind with Go types, by
	// version, built on first use: fieldcheck.Typed news a value each time.
	typedSchemas atomic.Pointer[map[string]fieldcheck.Schema]
}

// typeMeta is a kind's apiVersion per version and its kind as interface
// values: a string assigned to an object's field is boxed, an allocation
// each time, and every write sets both several times.
type typeMeta struct {
	group, kindName string // what they were built from
	apiVersion      map[string]any
	kind            any
}

// setTypeMeta sets obj's apiVersion (in version) and kind.
func (k *Kind) setTypeMeta(obj Object, version string) {
	tm := k.typeMeta.Load()
	if tm == nil || tm.group != k.Group || tm.kindName != k.Kind {
		tm = &typeMeta{group: k.Group, kindName: k.Kind, apiVersion: make(map[string]any, len(k.Versions)), kind: k.Kind}
		for _, v := range k.Versions {
			tm.apiVersion[v] = k.APIVersion(v)
		}
		k.typeMeta.Store(tm) // a race stores equal values
	}
	av, ok := tm.apiVersion[version]
	if !ok {
		av = k.APIVersion(version)
	}
	obj["apiVersion"], obj["kind"] = av, tm.kind
}

// AppendCells appends obj's cells of the kind's Columns to dst. A kind
// stored as another shares that kind's columns (kube-apiserver prints both
// from one internal type): obj is converted to the stored form once, for
// all of its cells.
func (k *Kind) AppendCells(dst []any, obj Object) []any {
	if k.StoredAs != nil {
		if stored, err := k.ToStored(obj); err == nil {
			obj = stored
		}
	}
	for _, c := range k.Columns {
		dst = append(dst, c.Cell(obj))
	}
	return dst
}

// GroupResource is the kind's group and resource.
func (k *Kind) GroupResource() schema.GroupResource {
	return schema.GroupResource{Group: k.Group, Resource: k.Resource}
}

// GroupKind is the kind's group and kind, as errors name it.
func (k *Kind) GroupKind() schema.GroupKind {
	return schema.GroupKind{Group: k.Group, Kind: k.Kind}
}

// validatedAs is the kind a validation's 422 names: for a kind stored as
// another, that kind, in whose form kube-apiserver validates its objects
// (an events.k8s.io/v1 event's errors name core's Event).
func (k *Kind) validatedAs() schema.GroupKind {
	if k.StoredAs != nil {
		return k.StoredAs.GroupKind()
	}
	return k.GroupKind()
}

// StorageVersion is the version objects are stored in. A kind stored as
// another (StoredAs) names its own first version here, though its objects
// are stored in the other kind's: storedAsServed tells the two apart.
func (k *Kind) StorageVersion() string { return k.Versions[0] }

// storedAsServed reports whether objects served in version are stored in
// that very form, so that stored bytes and labels may stand for an answer
// without a conversion: the kind's storage version, and its own store.
func (k *Kind) storedAsServed(version string) bool {
	return k.StoredAs == nil && version == k.StorageVersion()
}

// APIVersion renders group/version for v.
func (k *Kind) APIVersion(v string) string {
	if k.Group == "" {
		return v
	}
	return k.Group + "/" + v
}

// Serves reports whether v is a served version.
func (k *Kind) Serves(v string) bool {
	for _, s := range k.Versions {
		if s == v {
			return true
		}
	}
	return false
}

// TypedOf gives the Go type constructor for version (nil: none).
func (k *Kind) TypedOf(version string) func() any {
	if k.TypedFor != nil {
		return k.TypedFor(version)
	}
	return k.Typed
}

// typedSchema is fieldcheck.Typed(newObj), the Go type of version, kept.
func (k *Kind) typedSchema(version string, newObj func() any) fieldcheck.Schema {
	for {
		cur := k.typedSchemas.Load()
		if cur != nil {
			if s, ok := (*cur)[version]; ok {
				return s
			}
		}
		next := map[string]fieldcheck.Schema{version: fieldcheck.Typed(newObj)}
		if cur != nil {
			for v, s := range *cur {
				next[v] = s
			}
		}
		if k.typedSchemas.CompareAndSwap(cur, &next) {
			return next[version]
		}
	}
}

// FieldSchema says which fields of version are known, for decoding request
// bodies with field validation: the Go type when the kind has one (built-in
// kinds, Frobbers), else the structural schema of a custom resource. Kinds
// with neither (CustomResourceDefinition) know every field.
func (k *Kind) FieldSchema(version string) fieldcheck.Schema {
	if newObj := k.TypedOf(version); newObj != nil {
		return k.typedSchema(version, newObj)
	}
	if k.Schemas != nil {
		return fieldcheck.Structural(k.Schemas[version])
	}
	return fieldcheck.Schema{}
}

// ResetFields are the top-level fields the kind's strategy resets on a
// write through subresource ("", "status" or "scale"), which the write
// neither applies nor owns, as on kube-apiserver: status through the main
// resource of a kind with a status subresource; spec, and metadata unless
// StatusWritesMetadata, through /status; nothing through /scale (it owns the
// replicas field it sets in the object).
func (k *Kind) ResetFields(subresource string) []string {
	switch {
	case subresource == "" && k.StatusSubresource:
		return []string{"status"}
	case subresource == "status" && k.StatusWritesMetadata:
		return []string{"spec"}
	case subresource == "status":
		return []string{"spec", "metadata"}
	}
	return nil
}

// FieldManager is the field manager of writes to version through
// subresource ("", "status" or "scale"); nil when the kind records none. A
// subresource's entries name it, and what its write resets (ResetFields) it
// neither applies nor owns. The main resource's Manager leaves its resets
// to the caller: its fast paths do not filter, so an apply's status is
// removed before it (apiserver), an update's by the strategy.
func (k *Kind) FieldManager(version, subresource string) *apply.Manager {
	fm := k.FieldManagers[version]
	if fm == nil || subresource == "" {
		return fm
	}
	sub, err := fm.ForSubresource(subresource, k.ResetFields(subresource))
	if err != nil {
		return nil
	}
	return sub
}
