package fieldcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TypeErrors checks the JSON types of a custom resource against its
// structural schema. For custom resources kube-apiserver reports a wrong
// type as a 422 (validation), not as a 400 (decoding), with causes of reason
// FieldValueTypeInvalid worded
//
//	spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"
//
// Build the 422 with apierrors.NewInvalid(schema.GroupKind{Group, Kind}, name, errs).
// kube-apiserver's order of several such errors is not stable; here they are
// sorted by path. A null object property is not checked (it is dropped as
// unset); a null list item is ("null"). An integer field holding 1.5 gets
// the "number" error only (kube-apiserver adds a second, path-less one).
func TypeErrors(obj map[string]any, s map[string]any) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	props, _ := s["properties"].(map[string]any)
	for k, v := range obj {
		if k == "metadata" || k == "apiVersion" || k == "kind" {
			continue
		}
		if ps, ok := props[k].(map[string]any); ok && v != nil {
			checkType(v, ps, field.NewPath(k), &errs)
		}
	}
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Field < errs[j].Field })
	return errs
}

func checkType(v any, s map[string]any, p *field.Path, errs *field.ErrorList) {
	if truthy(s["x-kubernetes-int-or-string"]) {
		switch jsonType(v) {
		case "integer", "string":
			return
		}
		*errs = append(*errs, field.TypeInvalid(p, jsonType(v), fmt.Sprintf("%s in body must be of type integer,string: %q", p, jsonType(v))))
		return
	}
	if v == nil && truthy(s["nullable"]) {
		return
	}
	want, _ := s["type"].(string)
	got := jsonType(v)
	if want != "" && got != want && !(want == "number" && got == "integer") {
		*errs = append(*errs, field.TypeInvalid(p, got, fmt.Sprintf("%s in body must be of type %s: %q", p, want, got)))
		return
	}
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if ps := propertySchema(s, k); e != nil && ps != nil {
				checkType(e, ps, p.Child(k), errs)
			}
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return
		}
		for i, e := range t {
			checkType(e, items, p.Index(i), errs)
		}
	}
}

// jsonType names a decoded JSON value's type as OpenAPI does.
func jsonType(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int, int32, int64:
		return "integer"
	case json.Number:
		if _, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) && math.Abs(t) < 1<<63 {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
