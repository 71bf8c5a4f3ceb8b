// Package compat compares two API descriptions (Swagger 2.0, OpenAPI 3 or CRD
// manifests) and reports the changes that the Kubernetes "Changing the API"
// document calls incompatible, once per schema location.
package compat

import (
	"sort"

	"github.com/apiconform/apiconform/spec/openapi"
)

// Rule IDs. Each is registered below with its level and the sentence it enforces.
const (
	FieldRemoved          = "field-removed"
	DefinitionRemoved     = "definition-removed"
	TypeChanged           = "type-changed"
	FormatChanged         = "format-changed"
	RefChanged            = "ref-changed"
	RequiredAdded         = "required-added"
	EnumValueAdded        = "enum-value-added"
	EnumValueRemoved      = "enum-value-removed"
	ValidationTightened   = "validation-tightened"
	ValidationRelaxed     = "validation-relaxed"
	FieldBecameImmutable  = "field-became-immutable"
	DefaultChanged        = "default-changed"
	DefaultAdded          = "default-added"
	DefaultNotAllVersions = "default-not-in-all-versions"
	ListTypeChanged       = "list-type-changed"
	ListMapKeysChanged    = "list-map-keys-changed"
	MapTypeChanged        = "map-type-changed"
	PatchStrategyChanged  = "patch-strategy-changed"
	PatchMergeKeyChanged  = "patch-merge-key-changed"
	ExtensionChanged      = "extension-changed"
	VersionRemoved        = "version-removed"
	NewVersionPreferred   = "new-version-preferred"
	NewVersionStorage     = "new-version-storage"

	OperationRemoved     = "operation-removed"
	ParameterRemoved     = "parameter-removed"
	ParameterRequired    = "parameter-required-added"
	ParameterTypeChanged = "parameter-type-changed"
	BodyTypeChanged      = "body-type-changed"

	StoredVersionDropped  = "crd-stored-version-dropped"
	StorageVersionChanged = "crd-storage-version-changed"
	ConversionChanged     = "crd-conversion-changed"
	PrinterColumnRemoved  = "crd-printer-column-removed"
	SubresourceChanged    = "crd-subresource-changed"
)

const (
	secCompat   = "Changing the API § On compatibility"
	secGotchas  = "Changing the API § Backward compatibility gotchas"
	secVersions = "Changing the API § Alpha, Beta, and Stable Versions"
	secEditing  = "Changing the API § Changing versioned APIs"
	secSMP      = "API Conventions § Strategic Merge Patch / Lists and Simple kinds"
	secCRD      = "Changing the API § Changing versioned APIs (CustomResourceDefinition versions)"
)

// registry holds every compat rule; rule functions below refer to them by ID.
var registry = map[string]openapi.Rule{}

func register(id string, level openapi.Level, source, statement string) {
	registry[id] = openapi.Rule{ID: id, Level: level, Source: source, Statement: statement}
}

func init() {
	register(FieldRemoved, openapi.Breaking, secCompat,
		"Any API call that succeeded before a change must succeed after it; removing or renaming a field breaks it (rules #1, #2, #3, #6 of the Param→Params example).")
	register(DefinitionRemoved, openapi.Breaking, secCompat,
		"Existing clients must keep working without knowing about a change; a type that existing kinds or operations used disappeared.")
	register(TypeChanged, openapi.Breaking, secCompat,
		"A change must not alter the interpretation of existing API types, fields and values; the field's JSON type changed.")
	register(FormatChanged, openapi.Breaking, secCompat,
		"A change must not alter the interpretation of existing fields and values; the field's format changed.")
	register(RefChanged, openapi.Info, secCompat,
		"The field now names a different definition; its structure is compared separately.")
	register(RequiredAdded, openapi.Breaking, secCompat,
		"A compatible change adds functionality that is not required for correct behaviour (e.g. does not add a new required field), and does not change which fields are required.")
	register(EnumValueAdded, openapi.Breaking, secGotchas,
		"Adding a new value to an enumerated set is not a compatible change: clients that assume they handle every value of the field cannot handle the new one.")
	register(EnumValueRemoved, openapi.Warning, secGotchas,
		"Removing a value from an enumerated set can be compatible only if handled properly (the removed value treated as deprecated but still allowed).")
	register(ValidationTightened, openapi.Breaking, secGotchas,
		"Validation rules on spec fields can neither be relaxed nor strengthened; strengthening is disallowed because any previously valid request must still be valid. Status fields whose writers are under our control may tighten validation.")
	register(ValidationRelaxed, openapi.Breaking, secGotchas,
		"Validation rules on spec fields can neither be relaxed nor strengthened; weakening validation can break other consumers and producers of the API resource (values that were clearly invalid must not become valid).")
	register(FieldBecameImmutable, openapi.Breaking, secCompat,
		"A compatible change does not change existing semantics, including that mutable fields do not become immutable.")
	register(DefaultChanged, openapi.Breaking, secCompat,
		"A compatible change does not change the semantic meaning of default values and behaviour; the field's default changed or was removed.")
	register(DefaultAdded, openapi.Warning, secEditing,
		"A default for an existing field changes what unset means for stored objects and old clients; adding a default must be semantically equivalent to leaving it unset in every version.")
	register(DefaultNotAllVersions, openapi.Breaking, secGotchas,
		"Any field that has a default value in one API version must have a non-nil default value in all API versions.")
	register(ListTypeChanged, openapi.Breaking, secSMP,
		"x-kubernetes-list-type decides how server-side apply and patches merge a list; changing it changes the meaning of existing requests.")
	register(ListMapKeysChanged, openapi.Breaking, secSMP,
		"x-kubernetes-list-map-keys identify list items for merging; changing them changes which items existing patches address.")
	register(MapTypeChanged, openapi.Breaking, secSMP,
		"x-kubernetes-map-type decides whether a map merges per key or is replaced whole; changing it changes the meaning of existing requests.")
	register(PatchStrategyChanged, openapi.Breaking, secSMP,
		"The patch strategy (x-kubernetes-patch-strategy) decides whether a strategic merge patch replaces or merges a field; changing it changes existing patches.")
	register(PatchMergeKeyChanged, openapi.Breaking, secSMP,
		"The patch merge key (x-kubernetes-patch-merge-key) identifies list items in a strategic merge patch; changing it changes which items existing patches address.")
	register(ExtensionChanged, openapi.Warning, secCompat,
		"A compatible change does not change the interpretation of existing fields; an x-kubernetes-* extension (int-or-string, preserve-unknown-fields, embedded-resource, ...) changed.")
	register(VersionRemoved, openapi.Breaking, secVersions,
		"Breaking compatibility of a beta or stable API version is not acceptable; alpha and beta versions may be removed only after deprecation, per the deprecation policy.")
	register(NewVersionPreferred, openapi.Breaking, secGotchas,
		"Do not add a new API version of an existing resource and make it the preferred version in the same release.")
	register(OperationRemoved, openapi.Breaking, secCompat,
		"Any API call (e.g. a structure POSTed to a REST endpoint) that succeeded before a change must succeed after it; the operation is gone from a version that is still served.")
	register(ParameterRemoved, openapi.Breaking, secCompat,
		"Any API call that succeeded before must succeed after the change; a parameter existing callers send is gone from the operation.")
	register(ParameterRequired, openapi.Breaking, secCompat,
		"A compatible change does not add a new required field or change which fields are required; an existing call without the parameter now fails.")
	register(ParameterTypeChanged, openapi.Breaking, secCompat,
		"A change must not alter the interpretation of existing values; a parameter's type or format changed.")
	register(BodyTypeChanged, openapi.Breaking, secCompat,
		"Any API call that succeeded before must succeed after it, and existing clients must understand the response; the request or response body of the operation names another type.")
	register(StoredVersionDropped, openapi.Breaking, secCRD,
		"Objects may still be stored in every version of status.storedVersions; the API server refuses a CRD that drops one of them from spec.versions until storage is migrated.")
	register(StorageVersionChanged, openapi.Warning, secCRD,
		"Changing the storage version leaves existing objects stored in the old one until they are rewritten; keep the old version served and migrate storage before removing it.")
	register(ConversionChanged, openapi.Breaking, secCRD,
		"A CRD serving versions with different schemas needs a conversion webhook; switching the strategy changes how every stored object is read in every version.")
	register(PrinterColumnRemoved, openapi.Warning, secCRD,
		"Additional printer columns are part of what users and scripts read from kubectl get; a removed column changes that output.")
	register(SubresourceChanged, openapi.Breaking, secCRD,
		"The status and scale subresources decide which endpoint writes which part of the object; removing one breaks its callers, adding status makes the main endpoint ignore status writes.")
	register(NewVersionStorage, openapi.Breaking, secGotchas,
		"Do not add a new API version of an existing resource and make it the storage version in the same release, so that a rollback of the apiserver does not leave etcd objects undecodable.")
}

// Rules lists the compat rules sorted by ID.
func Rules() []openapi.Rule {
	out := make([]openapi.Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
