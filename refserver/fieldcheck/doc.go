// Package fieldcheck decodes write-request bodies the way kube-apiserver does
// for server-side field validation (the `fieldValidation` query parameter).
//
// It finds every unknown field (at any depth: `spec.foo`, `spec.items[0].b`,
// `metadata.ownerReferences[1].x`) and every duplicate field
// (`duplicate field "data"`; in YAML `line 9: key "data" already set in map`),
// drops them from the decoded object, and applies the level:
//
//	Ignore  drop silently
//	Warn    (default) one warning per field, for the Warning: 299 header
//	Strict  400 BadRequest "<Kind> in version "v1" cannot be handled as a
//	        <Kind>: strict decoding error: unknown field "spec", duplicate field "data""
//
// A body whose field has the wrong type is a 400 at every level, with
// kube-apiserver's message (`json: cannot unmarshal number into Go struct
// field ConfigMap.data of type string`). For patches (DecodePatched) the same
// problems are a 422 Invalid on the field `patch`, as kube-apiserver does.
//
// Which fields are known comes from a Schema: the typed k8s.io/api Go struct
// for built-in kinds (sigs.k8s.io/json's strict decoding reports the problems),
// or the structural OpenAPI v3 schema of a CRD version (walked here; subtrees
// under `x-kubernetes-preserve-unknown-fields: true` keep unknown fields).
//
// A body of a built-in kind without apiVersion or kind gets the endpoint's
// (JSON null is an empty object); another kind or version of it is a 400
// ("converting (v1.Secret) to (core.ConfigMap): unknown conversion", "no
// kind ... is registered for version ..."). A custom resource without a kind
// is unrecognized; its apiVersion and kind are the caller's to check (see
// refserver/apiserver), and a null property that is neither nullable nor
// defaulted is dropped as unset.
//
// Every error is a *k8s.io/apimachinery/pkg/api/errors.StatusError, ready to
// be written as a metav1.Status. Nothing here speaks HTTP.
//
// Typical use in a handler:
//
//	level, err := fieldcheck.ParseLevel(q.Get("fieldValidation"), "CreateOptions")
//	d := fieldcheck.Decoder{GVK: gvk, Schema: kind.FieldSchema(version)} // registry.Kind
//	obj, warnings, err := d.Decode(body, fieldcheck.JSON, level)
//	for _, w := range warnings { w.Header().Add("Warning", fmt.Sprintf("299 - %q", w)) }
//
// The API:
//
//	ParseLevel(value, "CreateOptions"|"UpdateOptions"|"PatchOptions") (Level, error)
//	Builtin(kind) / Typed(newObj) / Structural(openAPIV3Schema) Schema
//	Decoder{GVK, Schema}.Decode(body, JSON|YAML, level)                  POST, PUT
//	Decoder{GVK, Schema}.DecodePatched(patchType, patch, patched, level) PATCH (not apply)
//	DecodeApply(body, level)                   apply bodies: YAML duplicate keys only
//	Prune(obj, schema) []string                drop undeclared fields of a custom resource
//	DropNulls(obj, schema)                     drop its null non-nullable properties
//	TypeErrors(obj, schema) field.ErrorList    custom-resource type errors (a 422)
//	ValidateCreateOptions / ValidateUpdateOptions / ValidateDeleteDryRun   422 for bad options
//
// Decoded objects are map[string]any with integral numbers as int64 and other
// numbers as float64 (as kube-apiserver's unstructured objects).
//
// For a built-in kind the strict decode into the Go type, its encoding and
// decoding again give kube-apiserver's findings and the object without
// unknown fields; most bodies have nothing to find and would come back
// unchanged. A walk of the decoded object against the type's shape (fast.go,
// built once per Go type) proves that and skips the round trip: every key a
// field of the type, no null, no value omitempty would drop, integers in
// their Go type's range, times and base64 in the form they are written
// back, no field the encoding would add, and as many keys in the maps as in
// the text (else a key was there twice). Anything else takes the round trip.
package fieldcheck
