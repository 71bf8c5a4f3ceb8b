package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/apiconform/apiconform/refserver/registry"
)

// objectSchema is the schema served for a kind: its CRD schema when it has
// one, else a generic object with the common fields.
func objectSchema(k *registry.Kind, v, ref string) map[string]any {
	var out map[string]any
	switch {
	case k.Schemas[v] != nil && k.Typed == nil && k.TypedFor != nil:
		out = registry.DeepCopy(k.Schemas[v])
	case k.Typed != nil:
		out = schemaFromType(reflect.TypeOf(k.Typed()), ref, 0)
		if props, ok := out["properties"].(map[string]any); ok {
			props["metadata"] = map[string]any{"$ref": ref + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
		}
	case k.Schemas[v] != nil:
		out = registry.DeepCopy(k.Schemas[v])
		props, _ := out["properties"].(map[string]any)
		if props == nil {
			props = map[string]any{}
			out["properties"] = props
		}
		props["apiVersion"] = map[string]any{"type": "string"}
		props["kind"] = map[string]any{"type": "string"}
		props["metadata"] = map[string]any{"$ref": ref + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
	default:
		out = map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": map[string]any{
			"apiVersion": map[string]any{"type": "string"}, "kind": map[string]any{"type": "string"},
			"metadata": map[string]any{"$ref": ref + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}}}
	}
	out["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": k.Group, "version": v, "kind": k.Kind}}
	return out
}

func defName(k *registry.Kind, v string) string {
	g := k.Group
	if g == "" {
		return "io.k8s.api.core." + v + "." + k.Kind
	}
	parts := strings.Split(g, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + v + "." + k.Kind
}

var objectMetaSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name": map[string]any{"type": "string"}, "namespace": map[string]any{"type": "string"},
		"generateName": map[string]any{"type": "string"}, "uid": map[string]any{"type": "string"},
		"resourceVersion": map[string]any{"type": "string"}, "generation": map[string]any{"type": "integer", "format": "int64"},
		"creationTimestamp": map[string]any{"type": "string", "format": "date-time"},
		"deletionTimestamp": map[string]any{"type": "string", "format": "date-time"},
		"labels":            map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"annotations":       map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
		"finalizers":        map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "x-kubernetes-patch-strategy": "merge"},
	},
}

func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case p == "/openapi/v2":
		defs := map[string]any{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": objectMetaSchema}
		paths := map[string]any{}
		for _, k := range h.reg.Kinds() {
			for _, v := range k.Versions {
				defs[defName(k, v)] = objectSchema(k, v, "#/definitions/")
				paths[collectionPath(k, v)] = map[string]any{"get": map[string]any{"operationId": "list" + k.Kind, "responses": map[string]any{"200": map[string]any{"description": "OK"}}}}
			}
		}
		doc := map[string]any{"swagger": "2.0", "info": map[string]any{"title": "Kubernetes", "version": "v1.36.3-apiconform"}, "paths": paths, "definitions": defs}
		if strings.Contains(r.Header.Get("Accept"), "protobuf") {
			b, _ := json.Marshal(doc)
			pb, err := openAPIv2Protobuf(b)
			if err != nil {
				writeStatus(w, r, err)
				return
			}
			w.Header().Set("Content-Type", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
			_, _ = w.Write(pb)
			return
		}
		writeObject(w, r, 200, doc)
	case p == "/openapi/v3":
		paths := map[string]any{}
		for _, gv := range h.gvList() {
			doc, _ := json.Marshal(h.openAPIv3(gv))
			sum := sha256.Sum256(doc)
			paths[gv] = map[string]any{"serverRelativeURL": "/openapi/v3/" + gv + "?hash=" + strings.ToUpper(hex.EncodeToString(sum[:]))}
		}
		writeObject(w, r, 200, map[string]any{"paths": paths})
	case strings.HasPrefix(p, "/openapi/v3/"):
		gv := strings.TrimPrefix(p, "/openapi/v3/")
		if !slices.Contains(h.gvList(), gv) {
			writeStatus(w, r, errNotFoundResource())
			return
		}
		writeObject(w, r, 200, h.openAPIv3(gv))
	default:
		writeStatus(w, r, errNotFoundResource())
	}
}

// gvList names the served group-versions as openapi v3 paths ("api/v1", "apis/G/V").
func (h *Handler) gvList() []string {
	var out []string
	for _, k := range h.reg.Kinds() {
		for _, v := range k.Versions {
			gv := "api/" + v
			if k.Group != "" {
				gv = "apis/" + k.Group + "/" + v
			}
			if !slices.Contains(out, gv) {
				out = append(out, gv)
			}
		}
	}
	return out
}

func (h *Handler) openAPIv3(gv string) map[string]any {
	schemas := map[string]any{"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": objectMetaSchema}
	paths := map[string]any{}
	for _, k := range h.reg.Kinds() {
		for _, v := range k.Versions {
			if strings.TrimPrefix(collectionPath(k, v), "/") != gv+"/"+k.Resource && !strings.HasPrefix(strings.TrimPrefix(collectionPath(k, v), "/"), gv+"/namespaces/") {
				continue
			}
			schemas[defName(k, v)] = objectSchema(k, v, "#/components/schemas/")
			paths[collectionPath(k, v)] = map[string]any{"get": map[string]any{"operationId": "list" + k.Kind, "responses": map[string]any{"200": map[string]any{"description": "OK"}}}}
		}
	}
	return map[string]any{"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes", "version": "v1.36.3-apiconform"}, "paths": paths, "components": map[string]any{"schemas": schemas}}
}

func collectionPath(k *registry.Kind, v string) string {
	base := "/api/" + v
	if k.Group != "" {
		base = "/apis/" + k.Group + "/" + v
	}
	if k.Namespaced {
		return base + "/namespaces/{namespace}/" + k.Resource
	}
	return base + "/" + k.Resource
}
