package apiserver

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"github.com/apiconform/apiconform/refserver/apiserver/openapidata"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/apiconform/apiconform/refserver/registry"
)

//go:generate sh -c "cd ../.. && go run ./refserver/apiserver/openapigen -testdata ../shared/testdata/openapi -capture $CAPTURE"

// openapiDataGz is kube-apiserver v1.36.3's published OpenAPI for the
// built-in kinds served here, and its templates for custom resource paths
// (written by openapigen).
//
//go:embed openapi_data.json.gz
var openapiDataGz []byte

var loadOpenAPIData = sync.OnceValue(func() *openapidata.Data {
	zr, err := gzip.NewReader(bytes.NewReader(openapiDataGz))
	if err != nil {
		panic(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		panic(err)
	}
	var d openapidata.Data
	if err := json.Unmarshal(b, &d); err != nil {
		panic(err)
	}
	return &d
})

// gvPath names a group-version as the OpenAPI v3 discovery does.
func gvPath(group, version string) string {
	if group == "" {
		return "api/" + version
	}
	return "apis/" + group + "/" + version
}

// dynamicKinds are the served kinds kube-apiserver would publish from CRDs:
// those whose group-version has no built-in document (custom resources and
// Frobbers), sorted for stable documents.
func (h *Handler) dynamicKinds() []*registry.Kind {
	d := loadOpenAPIData()
	var out []*registry.Kind
	for _, k := range h.reg.Kinds() {
		if _, builtin := d.V3[gvPath(k.Group, k.StorageVersion())]; !builtin {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Group+"/"+out[i].Resource < out[j].Group+"/"+out[j].Resource
	})
	return out
}

// crPaths instantiates the custom resource path templates for one version
// of k (v2 or v3 form): the scope's paths, without subresources it lacks.
func crPaths(k *registry.Kind, v string, v2 bool) map[string]any {
	d := loadOpenAPIData()
	tmpls := d.CRD.V3
	if v2 {
		tmpls = d.CRD.V2
	}
	scope := "cluster"
	if k.Namespaced {
		scope = "namespaced"
	}
	b, _ := json.Marshal(tmpls[scope])
	r := strings.NewReplacer(
		"{{DEFGROUP}}", reverseGroup(k.Group),
		"{{GROUPID}}", operationID(strings.TrimSuffix(k.Group, ".k8s.io"), true),
		"{{GROUPTAG}}", operationID(strings.TrimSuffix(k.Group, ".k8s.io"), false),
		"{{GROUP}}", k.Group, "{{VERSIONID}}", operationID(v, true), "{{VERSION}}", v,
		"{{LISTKIND}}", k.ListKind, "{{KIND}}", k.Kind, "{{PLURAL}}", k.Resource, "{{SINGULAR}}", k.Singular)
	var out map[string]any
	_ = json.Unmarshal([]byte(r.Replace(string(b))), &out)
	for p := range out {
		if (strings.HasSuffix(p, "/status") && !k.StatusSubresource) || (strings.HasSuffix(p, "/scale") && k.Scale == nil) {
			delete(out, p)
		}
	}
	return out
}

// openAPIv2 is the swagger document: the built-in paths and definitions as
// kube-apiserver publishes them, and each served custom resource version.
func (h *Handler) openAPIv2() map[string]any {
	d := loadOpenAPIData()
	paths := make(map[string]any, len(d.V2.Paths))
	for p, item := range d.V2.Paths {
		paths[p] = item
	}
	defs := make(map[string]any, len(d.V2.Definitions))
	for n, s := range d.V2.Definitions {
		defs[n] = s
	}
	for _, k := range h.dynamicKinds() {
		for _, v := range k.Versions {
			for p, item := range crPaths(k, v, true) {
				paths[p] = item
			}
			obj, list := crSchemas(k, v, true)
			defs[modelName(k.Group, v, k.Kind)] = obj
			defs[modelName(k.Group, v, k.ListKind)] = list
		}
	}
	return map[string]any{
		"swagger": "2.0", "info": map[string]any{"title": "Kubernetes", "version": "1.36"},
		"paths": paths, "definitions": defs, "parameters": d.V2.Parameters,
		"securityDefinitions": map[string]any{"BearerToken": map[string]any{"description": "Bearer Token authentication", "type": "apiKey", "name": "authorization", "in": "header"}},
		"security":            []any{map[string]any{"BearerToken": []any{}}},
	}
}

// openAPIv3Docs builds the per-group-version v3 documents.
func (h *Handler) openAPIv3Docs() map[string]map[string]any {
	d := loadOpenAPIData()
	docs := map[string]map[string]any{}
	for _, k := range h.reg.Kinds() {
		for _, v := range k.Versions {
			if doc, ok := d.V3[gvPath(k.Group, v)]; ok {
				docs[gvPath(k.Group, v)] = doc
			}
		}
	}
	// The review kinds are served by selfsubject.go, not the registry.
	for _, gv := range []string{"apis/authorization.k8s.io/v1", "apis/authentication.k8s.io/v1"} {
		docs[gv] = d.V3[gv]
	}
	for _, k := range h.dynamicKinds() {
		for _, v := range k.Versions {
			gv := gvPath(k.Group, v)
			doc := docs[gv]
			if doc == nil {
				doc = map[string]any{"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
					"paths": map[string]any{}, "components": map[string]any{"schemas": map[string]any{}}}
				docs[gv] = doc
			}
			paths := doc["paths"].(map[string]any)
			for p, item := range crPaths(k, v, false) {
				paths[p] = item
			}
			schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
			obj, list := crSchemas(k, v, false)
			schemas[modelName(k.Group, v, k.Kind)] = obj
			schemas[modelName(k.Group, v, k.ListKind)] = list
		}
	}
	// Custom resource documents carry the shared schemas they refer to.
	for _, doc := range docs {
		if doc["info"].(map[string]any)["title"] != "Kubernetes CRD Swagger" {
			continue
		}
		schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
		closeSchemaRefs(doc["paths"], d.CRD.V3Components, schemas)
		closeSchemaRefs(schemas, d.CRD.V3Components, schemas)
	}
	return docs
}

// closeSchemaRefs copies into out the schemas of from that v refers to,
// transitively.
func closeSchemaRefs(v any, from, out map[string]any) {
	const prefix = "#/components/schemas/"
	switch t := v.(type) {
	case map[string]any:
		for key, x := range t {
			if s, ok := x.(string); ok && key == "$ref" && strings.HasPrefix(s, prefix) {
				name := strings.TrimPrefix(s, prefix)
				if _, done := out[name]; !done && from[name] != nil {
					out[name] = from[name]
					closeSchemaRefs(from[name], from, out)
				}
				continue
			}
			closeSchemaRefs(x, from, out)
		}
	case []any:
		for _, x := range t {
			closeSchemaRefs(x, from, out)
		}
	}
}

// docHash is the hash kube-apiserver puts in a v3 document's URL and ETag.
func docHash(b []byte) string {
	sum := sha512.Sum512(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

func (h *Handler) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		writeStatus(w, r, errMethodNotAllowed())
		return
	}
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case p == "/openapi/v2":
		b, err := json.Marshal(h.openAPIv2())
		if err != nil {
			writeStatus(w, r, err)
			return
		}
		ct := "application/json"
		if strings.Contains(r.Header.Get("Accept"), "protobuf") {
			if b, err = openAPIv2Protobuf(b); err != nil {
				writeStatus(w, r, err)
				return
			}
			ct = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
		}
		writeDoc(w, r, ct, b)
	case p == "/openapi/v3":
		paths := map[string]any{}
		for gv, doc := range h.openAPIv3Docs() {
			b, _ := json.Marshal(doc)
			paths[gv] = map[string]any{"serverRelativeURL": "/openapi/v3/" + gv + "?hash=" + docHash(b)}
		}
		b, _ := json.Marshal(map[string]any{"paths": paths})
		// kube-apiserver sets no type here; Go's sniffing makes it text/plain.
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache, private")
		_, _ = w.Write(b)
	case strings.HasPrefix(p, "/openapi/v3/"):
		doc, ok := h.openAPIv3Docs()[strings.TrimPrefix(p, "/openapi/v3/")]
		if !ok {
			writeStatus(w, r, errNotFoundResource())
			return
		}
		b, err := json.Marshal(doc)
		if err != nil {
			writeStatus(w, r, err)
			return
		}
		writeDoc(w, r, "application/json", b)
	default:
		writeStatus(w, r, errNotFoundResource())
	}
}

// notModified sets the ETag, Vary and Cache-Control headers of a document
// (OpenAPI, aggregated discovery) and answers 304 when the client's
// If-None-Match already names it.
func notModified(w http.ResponseWriter, r *http.Request, doc []byte) bool {
	etag := `"` + docHash(doc) + `"`
	w.Header().Set("Etag", etag)
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Cache-Control", "no-cache, private")
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}

// writeDoc writes an OpenAPI document with its ETag, answering 304 to a
// matching If-None-Match as kube-apiserver does.
func writeDoc(w http.ResponseWriter, r *http.Request, ct string, b []byte) {
	if notModified(w, r, b) {
		return
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(b)
}
