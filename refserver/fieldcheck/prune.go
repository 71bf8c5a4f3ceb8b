package fieldcheck

import (
	"sort"
	"strconv"
)

// Prune removes from a custom resource obj every field its structural schema
// does not declare and returns their paths, sorted ("spec.bar",
// "spec.items[0].b", "top"). apiVersion, kind and metadata are always known
// at the root (metadata is ObjectMeta's business, not the schema's); a node
// with x-kubernetes-preserve-unknown-fields: true keeps its unknown fields,
// and one with x-kubernetes-embedded-resource: true also knows apiVersion,
// kind and metadata. A nil schema prunes nothing.
func Prune(obj map[string]any, s map[string]any) []string {
	if s == nil {
		return nil
	}
	var out []string
	pruneObject(obj, s, "", true, &out)
	sort.Strings(out)
	return out
}

func pruneValue(v any, s map[string]any, path string, out *[]string) {
	if s == nil || truthy(s["x-kubernetes-int-or-string"]) {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		pruneObject(t, s, path, false, out)
	case []any:
		items, _ := s["items"].(map[string]any)
		for i, e := range t {
			pruneValue(e, items, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

func pruneObject(m map[string]any, s map[string]any, path string, root bool, out *[]string) {
	if typ, _ := s["type"].(string); typ != "" && typ != "object" {
		return // a type error, reported by validation
	}
	props, _ := s["properties"].(map[string]any)
	preserve := truthy(s["x-kubernetes-preserve-unknown-fields"])
	embedded := truthy(s["x-kubernetes-embedded-resource"])
	var additional map[string]any
	additionalAll := false
	switch a := s["additionalProperties"].(type) {
	case map[string]any:
		additional = a
	case bool:
		additionalAll = a
	}
	for k, v := range m {
		child := k
		if path != "" {
			child = path + "." + k
		}
		if ps, ok := props[k].(map[string]any); ok {
			if root && k == "metadata" {
				continue
			}
			pruneValue(v, ps, child, out)
			continue
		}
		switch {
		case (root || embedded) && (k == "apiVersion" || k == "kind" || k == "metadata"):
		case additional != nil:
			pruneValue(v, additional, child, out)
		case additionalAll, preserve:
		default:
			delete(m, k)
			*out = append(*out, child)
		}
	}
}

func truthy(v any) bool { b, _ := v.(bool); return b }

// DropNulls removes from a custom resource every null object property whose
// schema is not nullable: kube-apiserver treats it as unset, before
// defaulting (`"size": null` is no type error, and a defaulted size gets its
// default). Null list items stay, for TypeErrors to report.
func DropNulls(obj map[string]any, s map[string]any) {
	if s == nil {
		return
	}
	dropNulls(obj, s)
}

func dropNulls(v any, s map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			ps := propertySchema(s, k)
			if ps == nil {
				continue
			}
			if e == nil && !truthy(ps["nullable"]) {
				delete(t, k)
				continue
			}
			dropNulls(e, ps)
		}
	case []any:
		if items, _ := s["items"].(map[string]any); items != nil {
			for _, e := range t {
				dropNulls(e, items)
			}
		}
	}
}

// propertySchema is the schema of an object's property key: declared, else
// the additionalProperties schema, else nil.
func propertySchema(s map[string]any, key string) map[string]any {
	props, _ := s["properties"].(map[string]any)
	if ps, ok := props[key].(map[string]any); ok {
		return ps
	}
	additional, _ := s["additionalProperties"].(map[string]any)
	return additional
}
