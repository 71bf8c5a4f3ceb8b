package apiserver

import (
	"slices"
	"strings"
	"unicode"

	"github.com/apiconform/apiconform/refserver/registry"
)

// The descriptions kube-apiserver gives the fields it adds to a custom
// resource's schema.
const (
	descAPIVersion = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	descKind       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
	descMetadata   = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
	descListMeta   = "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
	metaPkg        = "io.k8s.apimachinery.pkg.apis.meta.v1."
)

// modelName is the definition name of a kind: the group reversed, the
// version, the kind ("io.k8s.api.core.v1.ConfigMap" for built-ins is data).
func modelName(group, version, kind string) string {
	return reverseGroup(group) + "." + version + "." + kind
}

func reverseGroup(group string) string {
	parts := strings.Split(group, ".")
	slices.Reverse(parts)
	return strings.Join(parts, ".")
}

// operationID makes a name part of an operationId or tag the way
// kube-apiserver does: letters, '_' and (not first) digits are kept, any
// other rune drops out and capitalises the next.
func operationID(s string, capitalizeFirst bool) string {
	var b strings.Builder
	capitalize := capitalizeFirst
	for i, r := range s {
		if unicode.IsLetter(r) || r == '_' || (i != 0 && unicode.IsDigit(r)) {
			if capitalize {
				r = unicode.ToUpper(r)
				capitalize = false
			}
			b.WriteRune(r)
		} else {
			capitalize = true
		}
	}
	return b.String()
}

// crSchemas builds the published schemas of a custom resource version (and
// its list) from the structural schema: apiVersion, kind and metadata added
// with kube-apiserver's descriptions, and the GVK extension. v2 refers to
// ObjectMeta with a sibling $ref and drops defaults; v3 wraps it in allOf.
func crSchemas(k *registry.Kind, v string, v2 bool) (obj, list map[string]any) {
	ref := "#/components/schemas/"
	if v2 {
		ref = "#/definitions/"
	}
	metaRef := func(desc, name string) map[string]any {
		if v2 {
			return map[string]any{"description": desc, "$ref": ref + metaPkg + name}
		}
		return map[string]any{"description": desc, "allOf": []any{map[string]any{"$ref": ref + metaPkg + name}}}
	}
	obj = map[string]any{"type": "object"}
	if s := k.Schemas[v]; s != nil {
		obj = registry.DeepCopy(s)
	}
	if v2 {
		stripV3Only(obj)
	}
	props, _ := obj["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		obj["properties"] = props
	}
	props["apiVersion"] = map[string]any{"description": descAPIVersion, "type": "string"}
	props["kind"] = map[string]any{"description": descKind, "type": "string"}
	props["metadata"] = metaRef(descMetadata, "ObjectMeta")
	obj["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": k.Group, "kind": k.Kind, "version": v}}
	list = map[string]any{
		"description": k.ListKind + " is a list of " + k.Kind,
		"type":        "object",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": descAPIVersion, "type": "string"},
			"kind":       map[string]any{"description": descKind, "type": "string"},
			"metadata":   metaRef(descListMeta, "ListMeta"),
			"items": map[string]any{
				"description": "List of " + k.Resource + ". More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md",
				"type":        "array",
				"items":       map[string]any{"$ref": ref + modelName(k.Group, v, k.Kind)},
			},
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": k.Group, "kind": k.ListKind, "version": v}},
	}
	return obj, list
}

// stripV3Only removes what OpenAPI v2 cannot say (defaults, nullable) from
// a schema and its subschemas (property names are left alone).
func stripV3Only(v any) {
	s, ok := v.(map[string]any)
	if !ok {
		return
	}
	delete(s, "default")
	delete(s, "nullable")
	if props, ok := s["properties"].(map[string]any); ok {
		for _, p := range props {
			stripV3Only(p)
		}
	}
	stripV3Only(s["items"])
	stripV3Only(s["additionalProperties"])
	stripV3Only(s["not"])
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := s[key].([]any); ok {
			for _, x := range list {
				stripV3Only(x)
			}
		}
	}
}
