// Package frobber is the changing-the-API document's Frobber example as a
// kind the reference server serves: group compat.apiconform.io, kinds
// Frobber/FrobberList, resource frobbers, namespaced, versions v6 and
// v7beta1, converted through one internal form that holds only the plural.
//
// Wire shape (fields at the top level, as in the document's YAML):
//
//	v6:      height, width, param (the first param), params (all params)
//	v7beta1: height, width, params
//	internal: height, width, params
//
// The registry's write path, for a request in version v (old is the stored
// object converted to v; nil on create):
//
//	Default(obj, v)              // width defaults to 1 in every version
//	Normalize(obj, old, v)       // link param and params as the document says
//	errs := Validate(obj, old)   // 422 when they disagree
//	stored, _ := Convert(obj, StorageVersion)
//
// and on read Convert(stored, v), which fills params from param for objects
// written before params existed. See README.md for the rules and their
// source sentences. Objects are JSON-shaped map[string]any; nothing here
// speaks HTTP.
package frobber

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/runtime/schema"

	v6 "github.com/apiconform/apiconform/refserver/frobber/v6"
	"github.com/apiconform/apiconform/refserver/frobber/v7beta1"
)

const (
	Group    = "compat.apiconform.io"
	Kind     = "Frobber"
	ListKind = "FrobberList"
	Resource = "frobbers"
	Singular = "frobber"

	V6      = "v6"
	V7beta1 = "v7beta1"
	// StorageVersion is the stable version: a beta version must not be the
	// storage version (the document's rollback rule).
	StorageVersion = V6
	// DefaultWidth is width's default, the same in every version.
	DefaultWidth = 1
)

// Versions are the served versions, preferred (stable) first.
var Versions = []string{V6, V7beta1}

// GVK is the kind in a version.
func GVK(version string) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: Group, Version: version, Kind: Kind}
}

// NewTyped returns a constructor of the version's Go type (for decoding with
// field validation, e.g. fieldcheck.Typed(frobber.NewTyped("v6"))), or nil
// for an unknown version.
func NewTyped(version string) func() any {
	switch version {
	case V6:
		return func() any { return &v6.Frobber{} }
	case V7beta1:
		return func() any { return &v7beta1.Frobber{} }
	}
	return nil
}

// internal is the hub of conversion: it holds only the plural.
type internal struct {
	metadata map[string]any
	height   int64
	width    int64
	params   []string
}

// versionOf checks obj's apiVersion and returns its version.
func versionOf(obj map[string]any) (string, error) {
	av, _ := obj["apiVersion"].(string)
	gv, err := schema.ParseGroupVersion(av)
	if err != nil || gv.Group != Group || (gv.Version != V6 && gv.Version != V7beta1) {
		return "", fmt.Errorf("frobber: apiVersion %q is not %s/%s or %s/%s", av, Group, V6, Group, V7beta1)
	}
	return gv.Version, nil
}

func checkVersion(v string) error {
	if v != V6 && v != V7beta1 {
		return fmt.Errorf("frobber: unknown version %q (served: %s, %s)", v, V6, V7beta1)
	}
	return nil
}

// Convert returns obj (in either version, named by its apiVersion) in
// toVersion, through the internal form. The source is defaulted first, as
// decoding does; a v6 object without params reads with params = [param].
// Conversion is lossless for valid objects in both directions.
func Convert(obj map[string]any, toVersion string) (map[string]any, error) {
	if err := checkVersion(toVersion); err != nil {
		return nil, err
	}
	from, err := versionOf(obj)
	if err != nil {
		return nil, err
	}
	in, err := toInternal(obj, from)
	if err != nil {
		return nil, err
	}
	return fromInternal(in, toVersion), nil
}

func toInternal(obj map[string]any, version string) (*internal, error) {
	in := &internal{}
	if m, ok := obj["metadata"].(map[string]any); ok {
		in.metadata = m
	}
	var err error
	if in.height, err = intField(obj, "height"); err != nil {
		return nil, err
	}
	if in.width, err = intField(obj, "width"); err != nil {
		return nil, err
	}
	if in.width == 0 {
		in.width = DefaultWidth
	}
	if in.params, err = stringsField(obj, "params"); err != nil {
		return nil, err
	}
	if version == V6 {
		param, err := stringField(obj, "param")
		if err != nil {
			return nil, err
		}
		// On any read: an unpopulated plural is the singular as a one-element list.
		if len(in.params) == 0 && param != "" {
			in.params = []string{param}
		}
	}
	return in, nil
}

func fromInternal(in *internal, version string) map[string]any {
	out := map[string]any{
		"apiVersion": Group + "/" + version,
		"kind":       Kind,
		"height":     in.height,
		"width":      in.width,
	}
	if in.metadata != nil {
		out["metadata"] = deepCopy(in.metadata)
	}
	if len(in.params) > 0 {
		ps := make([]any, len(in.params))
		for i, p := range in.params {
			ps[i] = p
		}
		out["params"] = ps
		if version == V6 {
			out["param"] = in.params[0]
		}
	}
	return out
}

// Default applies the version's defaults in place: width is 1 when unset (0
// counts as unset, as for the document's non-pointer int) in every version.
func Default(obj map[string]any, version string) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	w, err := intField(obj, "width")
	if err != nil {
		return err
	}
	if w == 0 {
		obj["width"] = int64(DefaultWidth)
	}
	return nil
}

func intField(obj map[string]any, key string) (int64, error) {
	switch v := obj[key].(type) {
	case nil:
		return 0, nil
	case int64:
		return v, nil
	case int:
		return int64(v), nil
	case int32:
		return int64(v), nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			return int64(v), nil
		}
	}
	return 0, fmt.Errorf("frobber: %s must be an integer, not %T", key, obj[key])
}

func stringField(obj map[string]any, key string) (string, error) {
	switch v := obj[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	}
	return "", fmt.Errorf("frobber: %s must be a string, not %T", key, obj[key])
}

func stringsField(obj map[string]any, key string) ([]string, error) {
	switch v := obj[key].(type) {
	case nil:
		return nil, nil
	case []string:
		return append([]string(nil), v...), nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("frobber: %s[%d] must be a string, not %T", key, i, e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("frobber: %s must be a list of strings, not %T", key, obj[key])
}

func setStrings(obj map[string]any, key string, v []string) {
	if len(v) == 0 {
		delete(obj, key)
		return
	}
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	obj[key] = out
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = deepCopyValue(v)
	}
	return out
}

func deepCopyValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return deepCopy(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = deepCopyValue(e)
		}
		return out
	}
	return v
}
