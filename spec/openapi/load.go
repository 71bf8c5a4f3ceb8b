// Package openapi loads the documents the static checkers read — Swagger 2.0,
// OpenAPI 3 and CustomResourceDefinition manifests — into one model of named
// schemas, operations and group/versions, and holds the finding model and
// renderers that the compat and lint checkers share.
package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"sigs.k8s.io/yaml"
)

// Formats a Document can come from.
const (
	FormatSwagger2 = "swagger-2.0"
	FormatOpenAPI3 = "openapi-3"
	FormatCRD      = "crd"
)

// Load reads a file, or every *.json/*.yaml/*.yml file of a directory (the
// per-group-version documents kube-apiserver serves at /openapi/v3), into one Document.
func Load(path string) (*Document, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		return LoadBytes(data, path)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var files []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".json" || ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(path, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("read %s: no .json or .yaml documents in the directory", path)
	}
	// Decoding dominates (a release's /openapi/v3 is ~16 MB): one file per CPU at a time.
	docs := make([]*Document, len(files))
	errs := make([]error, len(files))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			docs[i], errs[i] = Load(f)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first, in file order
		}
	}
	return merge(path, docs), nil
}

// LoadBytes detects the format of data (JSON or YAML) and loads it; source names it in errors.
func LoadBytes(data []byte, source string) (*Document, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("%s: empty document", source)
	}
	jsonData := trimmed
	if trimmed[0] != '{' && trimmed[0] != '[' {
		// YAML: may hold several documents (a CRD manifest bundle).
		return loadYAML(trimmed, source)
	}
	if trimmed[0] == '[' {
		return nil, fmt.Errorf("%s: a JSON array, not an API description (want a Swagger 2.0, OpenAPI 3 or CustomResourceDefinition object)", source)
	}
	var probe struct {
		Swagger    string `json:"swagger"`
		OpenAPI    string `json:"openapi"`
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(jsonData, &probe); err != nil {
		return nil, fmt.Errorf("%s: unreadable document header: %s", source, jsonProblem(err))
	}
	var (
		d   *Document
		err error
	)
	switch {
	case probe.Swagger != "":
		d, err = loadSwagger2(jsonData, source, probe.Swagger)
	case probe.OpenAPI != "":
		d, err = loadOpenAPI3(jsonData, source)
	case probe.Kind == "CustomResourceDefinition" || probe.Kind == "List" || probe.Kind == "CustomResourceDefinitionList":
		return loadCRDs([][]byte{jsonData}, source)
	default:
		return nil, fmt.Errorf("%s: neither Swagger 2.0 (\"swagger\"), OpenAPI 3 (\"openapi\") nor a CustomResourceDefinition", source)
	}
	if err != nil {
		// Name a dangling reference as the document spells it (the converter
		// reports Swagger's #/definitions/X as #/components/schemas/X).
		if ref, at := danglingRef(jsonData); ref != "" {
			return nil, fmt.Errorf("%s: invalid %s: $ref %q at %s points at nothing in the document", source, formatName(probe.Swagger), ref, at)
		}
		return nil, err
	}
	if len(d.Schemas) == 0 && len(d.Operations) == 0 {
		return nil, fmt.Errorf("%s: empty document: a valid %s document with no definitions and no paths", source, d.Format)
	}
	return d, nil
}

func formatName(swagger string) string {
	if swagger != "" {
		return "Swagger 2.0"
	}
	return "OpenAPI 3"
}

// jsonProblem words a decoding error without Go type names.
func jsonProblem(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected end of JSON input") {
		return "not valid JSON: " + err.Error()
	}
	if errors.As(err, &typeErr) {
		where := typeErr.Field
		if where == "" {
			where = "the top level"
		}
		return fmt.Sprintf("a JSON %s at %s where a string was expected", typeErr.Value, where)
	}
	return err.Error()
}

// danglingRef finds the first local $ref ("#/...") that resolves to nothing, with
// the JSON pointer of the schema holding it.
func danglingRef(data []byte) (ref, at string) {
	var root any
	if json.Unmarshal(data, &root) != nil {
		return "", ""
	}
	var walk func(v any, ptr string) bool
	walk = func(v any, ptr string) bool {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok && strings.HasPrefix(r, "#/") && !resolves(root, r[1:]) {
				ref, at = r, ptr
				if at == "" {
					at = "/"
				}
				return true
			}
			for _, k := range sortedKeysOf(x) {
				if walk(x[k], ptr+"/"+EscapePointer(k)) {
					return true
				}
			}
		case []any:
			for i, e := range x {
				if walk(e, fmt.Sprintf("%s/%d", ptr, i)) {
					return true
				}
			}
		}
		return false
	}
	walk(root, "")
	return ref, at
}

func resolves(root any, ptr string) bool {
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[unescapePointer(tok)]; !ok {
			return false
		}
	}
	return true
}

func loadYAML(data []byte, source string) (*Document, error) {
	var parts [][]byte
	for _, chunk := range splitYAML(data) {
		j, err := yaml.YAMLToJSON(chunk)
		if err != nil {
			return nil, fmt.Errorf("%s: invalid YAML: %w", source, err)
		}
		if t := bytes.TrimSpace(j); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
			parts = append(parts, j)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("%s: empty document", source)
	}
	for _, p := range parts {
		if t := bytes.TrimSpace(p); t[0] != '{' {
			return nil, fmt.Errorf("%s: neither Swagger 2.0, OpenAPI 3 nor CustomResourceDefinition manifests (YAML holds no object)", source)
		}
	}
	if len(parts) == 1 {
		return LoadBytes(parts[0], source)
	}
	return loadCRDs(parts, source)
}

// splitYAML splits a YAML stream at "---" document separators.
func splitYAML(data []byte) [][]byte {
	var out [][]byte
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimRight(line, " \r") == "---" {
			out = append(out, []byte(strings.Join(cur, "\n")))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	return append(out, []byte(strings.Join(cur, "\n")))
}

func loadSwagger2(data []byte, source, version string) (*Document, error) {
	if version != "2.0" {
		return nil, fmt.Errorf("%s: unsupported swagger version %q (want 2.0)", source, version)
	}
	var doc2 openapi2.T
	if err := json.Unmarshal(data, &doc2); err != nil {
		return nil, fmt.Errorf("%s: invalid Swagger 2.0: %w", source, err)
	}
	// Explicit conversion: every definition becomes a components schema and every
	// "#/definitions/" reference is rewritten and resolved, so nothing is half-read.
	doc3, err := openapi2conv.ToV3(&doc2)
	if err != nil {
		return nil, fmt.Errorf("%s: convert Swagger 2.0 to OpenAPI 3: %w", source, err)
	}
	if len(doc3.Components.Schemas) < len(doc2.Definitions) {
		return nil, fmt.Errorf("%s: conversion kept %d of %d definitions", source, len(doc3.Components.Schemas), len(doc2.Definitions))
	}
	for name, def := range doc2.Definitions {
		carryRefExtensions(def, doc3.Components.Schemas[name])
	}
	return fromOpenAPI3(doc3, source, FormatSwagger2)
}

// carryRefExtensions copies the x- fields written beside a $ref (Kubernetes puts
// x-kubernetes-patch-strategy and x-kubernetes-map-type there, e.g. on
// DeploymentSpec.strategy) onto the converted schema; the converter drops them.
func carryRefExtensions(v2 *openapi2.SchemaRef, v3 *openapi3.SchemaRef) {
	if v2 == nil || v3 == nil {
		return
	}
	if v2.Ref != "" {
		if len(v2.Extensions) > 0 && len(v3.Extensions) == 0 {
			v3.Extensions = v2.Extensions
		}
		return
	}
	if v2.Value == nil || v3.Value == nil {
		return
	}
	for name, p := range v2.Value.Properties {
		carryRefExtensions(p, v3.Value.Properties[name])
	}
	carryRefExtensions(v2.Value.Items, v3.Value.Items)
	carryRefExtensions(v2.Value.Not, v3.Value.Not)
	for i := 0; i < len(v2.Value.AllOf) && i < len(v3.Value.AllOf); i++ {
		carryRefExtensions(v2.Value.AllOf[i], v3.Value.AllOf[i])
	}
}

func loadOpenAPI3(data []byte, source string) (*Document, error) {
	loader := openapi3.NewLoader()
	doc3, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("%s: invalid OpenAPI 3: %w", source, err)
	}
	return fromOpenAPI3(doc3, source, FormatOpenAPI3)
}

func fromOpenAPI3(doc3 *openapi3.T, source, format string) (*Document, error) {
	d := newDocument(source, format)
	if doc3.Components != nil {
		for name, s := range doc3.Components.Schemas {
			if s == nil || s.Value == nil {
				return nil, fmt.Errorf("%s: schema %q could not be resolved", source, name)
			}
			d.Schemas[name] = s
		}
	}
	if doc3.Paths != nil {
		for path, item := range doc3.Paths.Map() {
			gv, hasGV := groupVersionFromPath(path)
			for method, op := range item.Operations() {
				o := Operation{Method: strings.ToUpper(method), Path: path, ID: op.OperationID, Deprecated: op.Deprecated}
				o.Schemas = operationSchemas(item, op)
				describeOperation(&o, item, op)
				d.Operations = append(d.Operations, o)
				if hasGV {
					g := d.groupVersion(gv)
					g.Served = true
					if !op.Deprecated {
						g.allOpsDeprecated = false
					}
				}
			}
		}
	}
	sort.Slice(d.Operations, func(i, j int) bool {
		if d.Operations[i].Path != d.Operations[j].Path {
			return d.Operations[i].Path < d.Operations[j].Path
		}
		return d.Operations[i].Method < d.Operations[j].Method
	})
	for _, g := range d.GroupVersions {
		g.Deprecated = g.allOpsDeprecated
	}
	d.finish()
	return d, nil
}

// operationSchemas lists the definition names an operation names directly.
func operationSchemas(item *openapi3.PathItem, op *openapi3.Operation) []string {
	seen := map[string]bool{}
	add := func(s *openapi3.SchemaRef) {
		collectRefs(s, seen)
	}
	for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
		if p != nil && p.Value != nil {
			add(p.Value.Schema)
			for _, mt := range p.Value.Content {
				add(mt.Schema)
			}
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, mt := range op.RequestBody.Value.Content {
			add(mt.Schema)
		}
	}
	if op.Responses != nil {
		for _, r := range op.Responses.Map() {
			if r != nil && r.Value != nil {
				for _, mt := range r.Value.Content {
					add(mt.Schema)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// describeOperation records an operation's parameters and body types, which the
// compat checker compares per operation.
func describeOperation(o *Operation, item *openapi3.PathItem, op *openapi3.Operation) {
	byKey := map[string]Parameter{}
	for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
		if p == nil || p.Value == nil {
			continue
		}
		// An operation's own parameter overrides the path item's of the same name and place.
		byKey[p.Value.In+"\x00"+p.Value.Name] = Parameter{Name: p.Value.Name, In: p.Value.In, Required: p.Value.Required, Type: TypeName(p.Value.Schema)}
	}
	for _, k := range sortedKeysOf(byKey) {
		o.Parameters = append(o.Parameters, byKey[k])
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		o.RequestBody = contentType(op.RequestBody.Value.Content)
	}
	if op.Responses != nil {
		for code, r := range op.Responses.Map() {
			if strings.HasPrefix(code, "2") && r != nil && r.Value != nil {
				if o.Responses == nil {
					o.Responses = map[string]string{}
				}
				o.Responses[code] = contentType(r.Value.Content)
			}
		}
	}
}

// contentType names the body type of the first media type that has a schema (JSON first).
func contentType(c openapi3.Content) string {
	if mt := c.Get("application/json"); mt != nil && mt.Schema != nil {
		return TypeName(mt.Schema)
	}
	for _, k := range sortedKeysOf(c) {
		if c[k] != nil && c[k].Schema != nil {
			return TypeName(c[k].Schema)
		}
	}
	return ""
}

// TypeName describes a schema for comparison: the definition it names, else its JSON
// type and format, with the item type of arrays.
func TypeName(s *openapi3.SchemaRef) string {
	if s == nil {
		return ""
	}
	if n := EffectiveRef(s); n != "" {
		return n
	}
	if s.Value == nil || s.Value.Type == nil {
		return ""
	}
	t := strings.Join(s.Value.Type.Slice(), ",")
	if s.Value.Format != "" {
		t += "/" + s.Value.Format
	}
	if s.Value.Type.Is("array") && s.Value.Items != nil {
		t += " of " + TypeName(s.Value.Items)
	}
	return t
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// collectRefs adds the definitions an inline schema tree refers to (not following them).
func collectRefs(s *openapi3.SchemaRef, into map[string]bool) {
	WalkInline(s, "", func(ptr string, s *openapi3.SchemaRef) bool {
		if name := RefName(s.Ref); name != "" {
			into[name] = true
			return false
		}
		return true
	})
}

// RefName returns the definition name a $ref points at ("" if none).
func RefName(ref string) string {
	for _, prefix := range []string{"#/components/schemas/", "#/definitions/"} {
		if strings.HasPrefix(ref, prefix) {
			return unescapePointer(ref[len(prefix):])
		}
	}
	return ""
}

// EffectiveRef is the definition a schema stands for: its own $ref, or the single
// $ref of an allOf wrapper (how Kubernetes' OpenAPI v3 attaches defaults to a ref).
func EffectiveRef(s *openapi3.SchemaRef) string {
	if s == nil {
		return ""
	}
	if n := RefName(s.Ref); n != "" {
		return n
	}
	if s.Value != nil && len(s.Value.AllOf) == 1 && s.Value.Properties == nil && s.Value.Type == nil {
		return RefName(s.Value.AllOf[0].Ref)
	}
	return ""
}

// groupVersionFromPath reads "group/version" from /apis/G/V/... and "v1" (core) from /api/v1/....
func groupVersionFromPath(path string) (string, bool) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "apis" && IsKubeVersion(parts[2]):
		return parts[1] + "/" + parts[2], true
	case len(parts) >= 2 && parts[0] == "api" && IsKubeVersion(parts[1]):
		return parts[1], true
	}
	return "", false
}

// merge combines several documents (one per group/version) into one.
func merge(source string, docs []*Document) *Document {
	d := newDocument(source, docs[0].Format)
	for _, part := range docs {
		for n, s := range part.Schemas {
			if _, ok := d.Schemas[n]; !ok {
				d.Schemas[n] = s
			}
		}
		d.Operations = append(d.Operations, part.Operations...)
		for k, vs := range part.CRDVersions {
			d.CRDVersions[k] = append(d.CRDVersions[k], vs...)
		}
		for k, info := range part.CRDs {
			d.CRDs[k] = info
		}
		for n, ks := range part.Kinds {
			if _, ok := d.Kinds[n]; !ok {
				d.Kinds[n] = ks
			}
		}
		for k, g := range part.GroupVersions {
			if have, ok := d.GroupVersions[k]; ok {
				have.Served = have.Served || g.Served
				have.Storage = have.Storage || g.Storage
				have.Deprecated = have.Deprecated && g.Deprecated
				have.Kinds = append(have.Kinds, g.Kinds...)
				continue
			}
			cp := *g
			d.GroupVersions[k] = &cp
		}
	}
	d.finish()
	return d
}

var errNoCRD = errors.New("no CustomResourceDefinition in the document")

// GroupVersionOfPath returns the "group/version" (or "v1" for core) an API path serves, or "".
func GroupVersionOfPath(path string) string {
	gv, _ := groupVersionFromPath(path)
	return gv
}
