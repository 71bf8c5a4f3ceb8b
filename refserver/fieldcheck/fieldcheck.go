package fieldcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Level is a fieldValidation level.
type Level string

const (
	Ignore Level = "Ignore"
	Warn   Level = "Warn" // the default
	Strict Level = "Strict"
)

// ParseLevel reads the fieldValidation query value. options names the
// request's options kind, which kube-apiserver puts in the 422 for an unknown
// value: "CreateOptions" (POST), "UpdateOptions" (PUT) or "PatchOptions" (PATCH).
func ParseLevel(value, options string) (Level, error) {
	switch value {
	case "", string(Warn):
		return Warn, nil
	case string(Ignore), string(Strict):
		return Level(value), nil
	}
	return "", apierrors.NewInvalid(schema.GroupKind{Group: "meta.k8s.io", Kind: options}, "", field.ErrorList{
		field.NotSupported(field.NewPath("fieldValidation"), value, []string{"", string(Ignore), string(Strict), string(Warn)}),
	})
}

// Schema says which fields of a kind are known. The zero Schema knows every
// field (nothing is unknown).
type Schema struct {
	typed      func() any
	goType     reflect.Type // what typed returns a new value of
	structural map[string]any
	custom     bool // a custom resource: kube-apiserver decodes it unstructured
}

// Typed is the schema of a built-in kind: newObj returns a pointer to a new
// value of its Go type (e.g. &corev1.ConfigMap{}). The fast check reads the
// type alone, so a Schema kept and used again news no value for it.
func Typed(newObj func() any) Schema {
	return Schema{typed: newObj, goType: reflect.TypeOf(newObj())}
}

// Structural is the schema of a CRD version: its openAPIV3Schema as JSON-shaped
// data. A nil schema knows every field.
func Structural(openAPIV3Schema map[string]any) Schema {
	return Schema{structural: openAPIV3Schema, custom: true}
}

// Builtin returns the schema of the built-in core/v1 kinds the reference
// server serves: ConfigMap, Secret and Namespace.
func Builtin(kind string) (Schema, bool) {
	switch kind {
	case "ConfigMap":
		return Typed(func() any { return &corev1.ConfigMap{} }), true
	case "Secret":
		return Typed(func() any { return &corev1.Secret{} }), true
	case "Namespace":
		return Typed(func() any { return &corev1.Namespace{} }), true
	}
	return Schema{}, false
}

// Format is the encoding of a request body.
type Format int

const (
	JSON Format = iota
	YAML
)

// Decoder decodes bodies for one endpoint.
type Decoder struct {
	// GVK is the endpoint's kind: it fills a missing apiVersion or kind (as
	// kube-apiserver does) and names the target in errors ("cannot be handled
	// as a ConfigMap"). Whether the body's kind matches is the caller's check.
	GVK    schema.GroupVersionKind
	Schema Schema
}

// Decode decodes a POST or PUT body (JSON or YAML) into an object without
// its unknown and duplicate fields, and applies level to them: the warnings
// under Warn, a 400 under Strict.
func (d Decoder) Decode(body []byte, format Format, level Level) (map[string]any, []string, error) {
	data := body
	var issues []error
	if format == YAML {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, nil, d.unrecognized(trimYAMLPrefix(err), body)
		}
		// The lenient conversion succeeded, so a strict failure is a duplicate key.
		if _, err := yaml.YAMLToJSONStrict(body); err != nil {
			issues = append(issues, errors.New(trimYAMLPrefix(err)))
		}
		data = j
	}
	obj, h, err := d.parse(data, body)
	if err != nil {
		return nil, nil, err
	}
	if d.Schema.custom && h.kind != d.GVK.Kind {
		// Not this resource's kind: nothing is pruned, and validation
		// answers "kind: Invalid value: ...: must be <Kind>" (the caller's).
		return obj, nil, nil
	}
	gvk := [2]any{obj["apiVersion"], obj["kind"]}
	obj, more, err := d.check(data, obj, h, true)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(d.prefix(h) + err.Error())
	}
	for i, key := range []string{"apiVersion", "kind"} {
		if gvk[i] != nil {
			obj[key] = gvk[i]
		}
	}
	if !d.Schema.custom && h.kind != d.GVK.Kind {
		// kube-apiserver decodes, then fails to convert to the endpoint's kind.
		internal := d.GVK.Group
		if internal == "" {
			internal = "core"
		}
		return nil, nil, apierrors.NewBadRequest(d.prefix(h) + fmt.Sprintf("converting (%s.%s) to (%s.%s): unknown conversion", h.version, h.kind, internal, d.GVK.Kind))
	}
	issues = append(issues, more...)
	warnings, err := apply(level, issues, func(e error) error { return apierrors.NewBadRequest(d.prefix(h) + e.Error()) })
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// PatchType names the patch formats DecodePatched knows.
type PatchType string

const (
	JSONPatch           PatchType = "application/json-patch+json"
	MergePatch          PatchType = "application/merge-patch+json"
	StrategicMergePatch PatchType = "application/strategic-merge-patch+json"
)

// DecodePatched decodes the object a PATCH produced: patch is the request
// body (its duplicate fields count; a JSON patch has none), patched the
// object after the patch was applied. kube-apiserver reports a strict
// failure or a type error as 422 Invalid on the field `patch`, whose value
// is the patched object (the patch itself for a strategic merge patch).
func (d Decoder) DecodePatched(pt PatchType, patch, patched []byte, level Level) (map[string]any, []string, error) {
	var issues []error
	// Most patches have no duplicate key, which a scan of the keys proves
	// without decoding; the decode reports the others.
	if pt != JSONPatch && !(fastChecks && noDuplicateKeys(patch)) {
		var p map[string]any
		strict, err := sigsjson.UnmarshalStrict(patch, &p, sigsjson.DisallowDuplicateFields)
		if err == nil {
			issues = append(issues, strict...)
		}
	}
	invalid := func(e error) error {
		value := string(patched)
		if pt == StrategicMergePatch {
			var p map[string]any
			_ = json.Unmarshal(patch, &p)
			value = fmt.Sprintf("%v", p)
		}
		return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), value, e.Error())})
	}
	obj, h, err := d.parse(patched, patched)
	if err != nil {
		return nil, nil, err
	}
	// Nothing puts back what parse filled in: the fast check, which keeps
	// it, may answer only when parse filled nothing.
	obj, more, err := d.check(patched, obj, h, h.filled == 0)
	if err != nil {
		return nil, nil, invalid(err)
	}
	issues = append(issues, more...)
	warnings, err := apply(level, issues, invalid)
	if err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// DecodePatchedObject answers DecodePatched for a patched object already in
// hand, without its bytes: obj must be what decoding the patched object's
// JSON would give (integers as int64; jsonvalue.Copy with PreserveInts makes
// it from a merge result). ok is true only when the fast checks prove that
// DecodePatched would return obj itself and no warnings: a built-in kind's
// object at the endpoint's apiVersion, with kind set, a patch without
// duplicate keys, and nothing the typed round trip would drop or rewrite.
// Otherwise the caller encodes obj and calls DecodePatched, for its answer
// and exact wording.
func (d Decoder) DecodePatchedObject(pt PatchType, patch []byte, obj map[string]any) (map[string]any, bool) {
	if (pt != JSONPatch && !noDuplicateKeys(patch)) || !d.unchanged(obj) {
		return nil, false
	}
	return obj, true
}

// DecodeObject answers Decode(JSON of obj, JSON, level) for an object in hand
// (as jsonvalue.Copy with PreserveInts gives it), as DecodePatchedObject
// does for DecodePatched; it also wants kind to be the endpoint's, which
// Decode would otherwise refuse.
func (d Decoder) DecodeObject(obj map[string]any) (map[string]any, bool) {
	if kind, _ := obj["kind"].(string); kind != d.GVK.Kind || !d.unchanged(obj) {
		return nil, false
	}
	return obj, true
}

// unchanged proves that decoding obj's JSON gives obj back with nothing to
// report: a built-in kind's object at the endpoint's apiVersion, with kind
// set (parse fills in nothing), that the typed round trip leaves as it is.
func (d Decoder) unchanged(obj map[string]any) bool {
	if d.Schema.typed == nil || d.Schema.custom {
		return false
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	if apiVersion == "" || kind == "" || apiVersion != d.GVK.GroupVersion().String() {
		return false
	}
	// The object comes from maps, so its encoding has no duplicate key to count.
	_, ok := typedFastObject(obj, d.Schema.goType)
	return ok
}

// DecodeApply decodes a server-side apply body (application/apply-patch+yaml;
// JSON is YAML). Only duplicate keys are checked here: kube-apiserver reports
// unknown fields of an apply body when it builds the typed patch (see package
// apply). Bad YAML and, under Strict, duplicates are 400s.
func DecodeApply(body []byte, level Level) (map[string]any, []string, error) {
	if obj, ok := decodeApplyJSON(body); ok {
		return obj, nil, nil
	}
	// One strict pass answers a body without duplicates (most of them); the
	// lenient passes below give the errors and warnings of the others.
	if j, err := yaml.YAMLToJSONStrict(body); err == nil {
		var obj map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &obj); err == nil {
			if obj == nil {
				obj = map[string]any{}
			}
			return obj, nil, nil
		}
	}
	return decodeApplyYAML(body, level)
}

// decodeApplyYAML is DecodeApply the way the libraries read any body: a
// lenient parse for the syntax error, the conversion to JSON, a strict
// parse for the duplicates, then the JSON decode. The two shortcuts above
// answer as it would (FuzzDecodeApplyOnePass).
func decodeApplyYAML(body []byte, level Level) (map[string]any, []string, error) {
	var probe map[string]any
	if err := yaml.Unmarshal(body, &probe); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	var warnings []string
	if serr := yaml.UnmarshalStrict(body, &probe); serr != nil {
		switch level {
		case Strict:
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error strict decoding YAML: %v", serr))
		case Warn:
			warnings = splitIssue(trimYAMLPrefix(serr))
		}
	}
	var obj map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(j, &obj); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))
	}
	if obj == nil {
		obj = map[string]any{}
	}
	return obj, warnings, nil
}

// apply turns the problems found into warnings or an error per level.
func apply(level Level, issues []error, fail func(error) error) ([]string, error) {
	if len(issues) == 0 || level == Ignore {
		return nil, nil
	}
	if level == Strict {
		return nil, fail(runtime.NewStrictDecodingError(issues))
	}
	var out []string
	for _, e := range issues {
		out = append(out, splitIssue(e.Error())...)
	}
	return out, nil
}

// splitIssue gives one warning per line of a YAML duplicate-key report.
func splitIssue(msg string) []string {
	const head = "yaml: unmarshal errors:\n"
	if !strings.HasPrefix(msg, head) {
		return []string{msg}
	}
	var out []string
	for _, l := range strings.Split(strings.TrimPrefix(msg, head), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func trimYAMLPrefix(err error) string {
	return strings.TrimPrefix(err.Error(), "error converting YAML to JSON: ")
}
