package frobber

// ComponentName is the OpenAPI component name of a kind in a version, in
// kube-apiserver's reversed-domain style: io.apiconform.compat.v6.Frobber.
func ComponentName(version, kind string) string {
	return "io.apiconform.compat." + version + "." + kind
}

const (
	objectMetaRef = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMetaRef   = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
)

// Schema is the OpenAPI v3 schema of Frobber in a version (nil for an
// unknown version), shaped as kube-apiserver publishes built-in kinds:
// metadata refers to the ObjectMeta component, and
// x-kubernetes-group-version-kind names the kind. Without metadata it is a
// structural schema (usable with fieldcheck.Structural and apply.ForSchema).
func Schema(version string) map[string]any {
	if checkVersion(version) != nil {
		return nil
	}
	props := map[string]any{
		"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
		"kind":       str("Kind is a string value representing the REST resource this object represents."),
		"metadata":   ref(objectMetaRef, "Standard object's metadata."),
		"height":     map[string]any{"type": "integer", "format": "int32", "description": "height of the frobber."},
		"width":      map[string]any{"type": "integer", "format": "int32", "default": DefaultWidth, "description": "width of the frobber; defaults to 1 in every version."},
		"params": map[string]any{"type": "array", "items": map[string]any{"type": "string", "default": ""},
			"description": "params are all of the params."},
	}
	if version == V6 {
		props["param"] = str("param is the first param; when params is set, params[0] must equal param.")
		props["params"].(map[string]any)["description"] = "params are all of the params (params[0] equals param). Clients that set params must also set param."
	}
	return map[string]any{
		"type":        "object",
		"description": "Frobber is the changing-the-API document's example kind.",
		"properties":  props,
		"x-kubernetes-group-version-kind": []any{
			map[string]any{"group": Group, "version": version, "kind": Kind},
		},
	}
}

// ListSchema is the OpenAPI v3 schema of FrobberList in a version.
func ListSchema(version string) map[string]any {
	if checkVersion(version) != nil {
		return nil
	}
	return map[string]any{
		"type":        "object",
		"description": "FrobberList is a list of Frobbers.",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": str("APIVersion defines the versioned schema of this representation of an object."),
			"kind":       str("Kind is a string value representing the REST resource this object represents."),
			"metadata":   ref(listMetaRef, "Standard list metadata."),
			"items": map[string]any{"type": "array", "description": "items are the Frobbers.",
				"items": ref("#/components/schemas/"+ComponentName(version, Kind), "")},
		},
		"x-kubernetes-group-version-kind": []any{
			map[string]any{"group": Group, "version": version, "kind": ListKind},
		},
	}
}

// OpenAPIComponents are the version's component schemas by name (Frobber and
// FrobberList), to publish under /openapi/v3/apis/compat.apiconform.io/<version>
// next to the ObjectMeta and ListMeta components they refer to.
func OpenAPIComponents(version string) map[string]any {
	if checkVersion(version) != nil {
		return nil
	}
	return map[string]any{
		ComponentName(version, Kind):     Schema(version),
		ComponentName(version, ListKind): ListSchema(version),
	}
}

func str(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

func ref(to, desc string) map[string]any {
	m := map[string]any{"allOf": []any{map[string]any{"$ref": to}}, "default": map[string]any{}}
	if desc != "" {
		m["description"] = desc
	}
	return m
}
