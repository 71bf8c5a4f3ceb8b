package fieldcheck

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	structural map[string]any
	custom     bool // a custom resource: kube-apiserver decodes it unstructured
}

// Typed is the schema of a built-in kind: newObj returns a pointer to a new
// value of its Go type (e.g. &corev1.ConfigMap{}).
func Typed(newObj func() any) Schema { return Schema{typed: newObj} }

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
	prefix := h.prefix
	gvk := [2]any{obj["apiVersion"], obj["kind"]}
	obj, more, err := d.check(data, obj)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(prefix + err.Error())
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
		return nil, nil, apierrors.NewBadRequest(prefix + fmt.Sprintf("converting (%s.%s) to (%s.%s): unknown conversion", h.version, h.kind, internal, d.GVK.Kind))
	}
	issues = append(issues, more...)
	warnings, err := apply(level, issues, func(e error) error { return apierrors.NewBadRequest(prefix + e.Error()) })
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
	if pt != JSONPatch {
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
	obj, _, err := d.parse(patched, patched)
	if err != nil {
		return nil, nil, err
	}
	obj, more, err := d.check(patched, obj)
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

// DecodeApply decodes a server-side apply body (application/apply-patch+yaml;
// JSON is YAML). Only duplicate keys are checked here: kube-apiserver reports
// unknown fields of an apply body when it builds the typed patch (see package
// apply). Bad YAML and, under Strict, duplicates are 400s.
func DecodeApply(body []byte, level Level) (map[string]any, []string, error) {
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

// parse reads the body as a JSON object and fills apiVersion and kind from
// the endpoint when missing; prefix is kube-apiserver's lead-in for decoding
// errors ("ConfigMap in version "v1" cannot be handled as a ConfigMap: ").
// A custom resource is not filled in: without a kind (or as JSON null) it is
// unrecognized, and a missing apiVersion is left for the caller's version
// check ("the API version in the data () does not match ...").
func (d Decoder) parse(data, original []byte) (map[string]any, head, error) {
	var h struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &h); err != nil {
		return nil, head{}, d.unrecognized("couldn't get version/kind; json parse error: "+err.Error(), original)
	}
	var obj map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &obj); err != nil {
		return nil, head{}, d.unrecognized("couldn't get version/kind; json parse error: "+err.Error(), original)
	}
	if d.Schema.custom && (obj == nil || h.Kind == "") {
		return nil, head{}, d.unrecognized(fmt.Sprintf("Object 'Kind' is missing in '%s'", original), original)
	}
	if obj == nil {
		obj = map[string]any{} // a JSON null is an empty object: defaults, then validation, decide
	}
	gv := d.GVK.GroupVersion()
	if h.APIVersion != "" {
		if p, err := schema.ParseGroupVersion(h.APIVersion); err == nil {
			gv = p
		}
	} else if !d.Schema.custom {
		obj["apiVersion"] = d.GVK.GroupVersion().String()
	}
	kind := h.Kind
	if kind == "" {
		kind = d.GVK.Kind
		obj["kind"] = kind
	}
	out := head{prefix: fmt.Sprintf("%s in version %q cannot be handled as a %s: ", kind, gv.Version, d.GVK.Kind), version: gv.Version, kind: kind}
	if !d.Schema.custom && gv != d.GVK.GroupVersion() {
		// A built-in kind's scheme knows only the endpoint's version.
		return nil, head{}, apierrors.NewBadRequest(out.prefix + fmt.Sprintf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, h.APIVersion))
	}
	return obj, out, nil
}

// head is what parse read of a body's apiVersion and kind.
type head struct {
	prefix        string // kube-apiserver's lead-in for decoding errors
	version, kind string // as the body gives them, or the endpoint's
}

// unrecognized is kube-apiserver's 400 for a body it cannot even read.
func (d Decoder) unrecognized(msg string, body []byte) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)", d.GVK.Kind, msg, summarize(body, 30)))
}

// summarize shows the start of a body: as text when it looks like a JSON
// object, in hex otherwise (kube-apiserver's choice).
func summarize(b []byte, max int) string {
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	default:
		if len(b) > max {
			return hex.EncodeToString(b[:max]) + " ..."
		}
		return hex.EncodeToString(b)
	}
}

// check finds unknown and duplicate fields of data (the JSON of obj) and
// returns obj without them. The error is a type error (always fatal).
func (d Decoder) check(data []byte, obj map[string]any) (map[string]any, []error, error) {
	switch {
	case d.Schema.typed != nil:
		return checkTyped(data, obj, d.Schema.typed)
	case d.Schema.structural != nil:
		return checkStructural(data, obj, d.Schema.structural)
	}
	var dup map[string]any
	strict, err := sigsjson.UnmarshalStrict(data, &dup, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, nil, err
	}
	return obj, strict, nil
}

// checkTyped decodes into the Go type: sigs.k8s.io/json reports unknown and
// duplicate fields in document order with kube-apiserver's paths, and the
// round trip through the type drops them (merging duplicate maps, as the
// typed decoder does).
func checkTyped(data []byte, in map[string]any, newObj func() any) (map[string]any, []error, error) {
	typed := newObj()
	strict, err := sigsjson.UnmarshalStrict(data, typed)
	if err != nil {
		return nil, nil, err
	}
	out, err := roundTrip(typed)
	if err != nil {
		return nil, nil, err
	}
	dropAdded(out, in)
	if m, ok := out["metadata"].(map[string]any); ok {
		im, _ := in["metadata"].(map[string]any)
		dropAdded(m, im)
	}
	return out, trimJSONPrefix(strict, ""), nil
}

// checkStructural decodes a custom resource: duplicates anywhere, then
// metadata through ObjectMeta, then pruning by the schema (paths sorted, as
// kube-apiserver reports them).
func checkStructural(data []byte, obj map[string]any, s map[string]any) (map[string]any, []error, error) {
	var dup map[string]any
	issues, err := sigsjson.UnmarshalStrict(data, &dup, sigsjson.DisallowDuplicateFields)
	if err != nil {
		return nil, nil, err
	}
	issues = trimJSONPrefix(issues, "")
	if raw, ok := obj["metadata"]; ok && raw != nil {
		mj, _ := json.Marshal(raw)
		var om metav1.ObjectMeta
		strict, err := sigsjson.UnmarshalStrict(mj, &om, sigsjson.DisallowUnknownFields)
		if err != nil {
			return nil, nil, err
		}
		issues = append(issues, trimJSONPrefix(strict, "metadata.")...)
		m, err := roundTrip(&om)
		if err != nil {
			return nil, nil, err
		}
		in, _ := raw.(map[string]any)
		dropAdded(m, in)
		obj["metadata"] = m
	}
	for _, p := range Prune(obj, s) {
		issues = append(issues, fmt.Errorf("unknown field %q", p))
	}
	DropNulls(obj, s)
	return obj, issues, nil
}

// trimJSONPrefix drops the "json: " lead-in of strict errors and puts prefix
// before their field paths.
func trimJSONPrefix(errs []error, prefix string) []error {
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		if fe, ok := e.(sigsjson.FieldError); ok && prefix != "" {
			fe.SetFieldPath(prefix + fe.FieldPath())
		}
		out = append(out, errors.New(strings.TrimPrefix(e.Error(), "json: ")))
	}
	return out
}

func roundTrip(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(b, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// dropAdded removes the null and empty-object fields a Go round trip adds
// (creationTimestamp: null, spec: {}) when the client did not send them.
func dropAdded(out, in map[string]any) {
	for k, v := range out {
		if _, sent := in[k]; sent {
			continue
		}
		if m, ok := v.(map[string]any); v == nil || (ok && len(m) == 0) {
			delete(out, k)
		}
	}
}
