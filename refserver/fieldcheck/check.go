package fieldcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sigsjson "sigs.k8s.io/json"
)

// Finding unknown and duplicate fields.

// check finds unknown and duplicate fields of data (the JSON of obj, which
// has added keys more: see parse) and returns obj without them. The error
// is a type error (always fatal). fast allows the typed fast check.
func (d Decoder) check(data []byte, obj map[string]any, h head, fast bool) (map[string]any, []error, error) {
	switch {
	case d.Schema.typed != nil:
		if fast && typedFast(data, obj, h, d.Schema.goType) {
			return obj, nil, nil
		}
		return checkTyped(data, obj, d.Schema.typed())
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
// typed decoder does). typed is a new value of the Go type.
func checkTyped(data []byte, in map[string]any, typed any) (map[string]any, []error, error) {
	strict, err := sigsjson.UnmarshalStrict(data, typed)
	if err != nil {
		return nil, nil, err
	}
	out, err := roundTrip(typed)
	if err != nil {
		return nil, nil, err
	}
	// What the round trip adds at the top (an event's eventTime: null, a
	// lease's spec: {}) stays, as kube-apiserver encodes the typed object
	// too; but for an empty metadata, which is the caller's to judge.
	if _, sent := in["metadata"]; !sent {
		if m, ok := out["metadata"].(map[string]any); ok && len(m) == 0 {
			delete(out, "metadata")
		}
	}
	if m, ok := out["metadata"].(map[string]any); ok {
		im, _ := in["metadata"].(map[string]any)
		dropAdded(m, im)
		keepManagedFieldsReset(m, im)
	}
	return out, trimJSONPrefix(strict, ""), nil
}

// keepManagedFieldsReset puts back into out an empty metadata.managedFields
// list of in that the round trip dropped (omitempty): kube-apiserver decodes
// a built-in object into its Go type, where the list stays an empty slice,
// which its field manager reads as a request to clear the entries. (A
// custom resource's metadata goes back to a map through ObjectMeta, which
// drops it: there an empty list clears nothing, as checkStructural has it.)
func keepManagedFieldsReset(out, in map[string]any) {
	if l, ok := in["managedFields"].([]any); ok && len(l) == 0 {
		if _, has := out["managedFields"]; !has {
			out["managedFields"] = []any{}
		}
	}
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
