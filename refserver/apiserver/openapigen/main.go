// Command openapigen trims kube-apiserver v1.36.3's published OpenAPI
// documents to what the reference server serves, and turns the paths it
// publishes for two sample CRDs into templates, writing the data file the
// apiserver package embeds (openapi_data.json.gz). The inputs are facts
// about kube-apiserver: the release's swagger and core v3 document from
// ../shared/testdata/openapi, and the captures of capture.sh from a running
// oracle. Run from the module root:
//
//	refserver/apiserver/openapigen/capture.sh .oracle/kubeconfig /tmp/capture
//	go run ./refserver/apiserver/openapigen -testdata ../shared/testdata/openapi -capture /tmp/capture
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/apiconform/apiconform/refserver/apiserver/openapidata"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// served lists, per group-version, the built-in resources (with their
// subresources) the reference server serves.
var served = map[string][]string{
	"api/v1":                            {"namespaces", "configmaps", "secrets", "serviceaccounts", "events"},
	"apis/apiextensions.k8s.io/v1":      {"customresourcedefinitions", "customresourcedefinitions/status"},
	"apis/coordination.k8s.io/v1":       {"leases"},
	"apis/events.k8s.io/v1":             {"events"},
	"apis/rbac.authorization.k8s.io/v1": {"roles", "clusterroles", "rolebindings", "clusterrolebindings"},
	"apis/authorization.k8s.io/v1":      {"selfsubjectaccessreviews", "selfsubjectrulesreviews"},
	"apis/authentication.k8s.io/v1":     {"selfsubjectreviews"},
}

// sample names the two CRDs of samples.yaml and the placeholders their
// names become in the templates (longest first, so no name eats another).
type sample struct {
	file, v2prefix string
	repl           [][2]string
}

var samples = map[string]sample{
	"namespaced": {file: "crd-namespaced-v3.json", v2prefix: "/apis/zgroup.example.org/", repl: [][2]string{
		{"org.example.zgroup", "{{DEFGROUP}}"}, {"ZgroupExampleOrg", "{{GROUPID}}"}, {"zgroupExampleOrg", "{{GROUPTAG}}"},
		{"zgroup.example.org", "{{GROUP}}"}, {"V9beta7", "{{VERSIONID}}"}, {"v9beta7", "{{VERSION}}"},
		{"QkindList", "{{LISTKIND}}"}, {"Qkind", "{{KIND}}"}, {"pplurals", "{{PLURAL}}"}, {"ssingular", "{{SINGULAR}}"}}},
	"cluster": {file: "crd-cluster-v3.json", v2prefix: "/apis/ygroup.example.org/", repl: [][2]string{
		{"org.example.ygroup", "{{DEFGROUP}}"}, {"YgroupExampleOrg", "{{GROUPID}}"}, {"ygroupExampleOrg", "{{GROUPTAG}}"},
		{"ygroup.example.org", "{{GROUP}}"}, {"V9beta7", "{{VERSIONID}}"}, {"v9beta7", "{{VERSION}}"},
		{"CkindList", "{{LISTKIND}}"}, {"Ckind", "{{KIND}}"}, {"cplurals", "{{PLURAL}}"}, {"csingular", "{{SINGULAR}}"}}},
}

func main() {
	testdata := flag.String("testdata", "../shared/testdata/openapi", "kube's release OpenAPI documents")
	capture := flag.String("capture", "", "directory written by capture.sh")
	out := flag.String("out", "refserver/apiserver/openapi_data.json.gz", "output file")
	flag.Parse()
	if err := run(*testdata, *capture, *out); err != nil {
		fmt.Fprintln(os.Stderr, "openapigen:", err)
		os.Exit(1)
	}
}

func run(testdata, capture, out string) error {
	var d openapidata.Data
	swagger, err := load(filepath.Join(testdata, "k8s-v1.36.3-swagger.json"))
	if err != nil {
		return err
	}
	oracleV2, err := load(filepath.Join(capture, "swagger.json"))
	if err != nil {
		return err
	}
	d.V2.Paths, d.V2.Definitions, d.V2.Parameters = map[string]any{}, map[string]any{}, map[string]any{}
	for p, item := range obj(swagger["paths"]) {
		if isServed(p) {
			d.V2.Paths[p] = item
		}
	}
	d.CRD.V2, d.CRD.V3 = map[string]map[string]any{}, map[string]map[string]any{}
	for scope, s := range samples {
		tmpl := map[string]any{}
		for p, item := range obj(oracleV2["paths"]) {
			if strings.HasPrefix(p, s.v2prefix) {
				tmpl[p] = item
			}
		}
		// References from the CR paths to shared definitions and parameters.
		closeRefs(tmpl, "#/definitions/", obj(swagger["definitions"]), d.V2.Definitions)
		closeRefs(tmpl, "#/parameters/", obj(oracleV2["parameters"]), d.V2.Parameters)
		if d.CRD.V2[scope], err = template(tmpl, s.repl); err != nil {
			return err
		}
	}
	closeRefs(d.V2.Paths, "#/definitions/", obj(swagger["definitions"]), d.V2.Definitions)
	closeRefs(d.V2.Paths, "#/parameters/", obj(swagger["parameters"]), d.V2.Parameters)
	// Sample CR definitions are built per CRD at run time.
	for name := range d.V2.Definitions {
		if strings.HasPrefix(name, "org.example.") {
			delete(d.V2.Definitions, name)
		}
	}

	d.V3 = map[string]map[string]any{}
	for gv := range served {
		file := filepath.Join(capture, strings.ReplaceAll(gv, "/", "__")+"_openapi.json")
		if gv == "api/v1" {
			file = filepath.Join(testdata, "v3-v1.36.3", "api__v1_openapi.json")
		}
		doc, err := load(file)
		if err != nil {
			return err
		}
		paths := map[string]any{}
		for p, item := range obj(doc["paths"]) {
			if isServed(p) {
				paths[p] = item
			}
		}
		schemas := map[string]any{}
		closeRefs(paths, "#/components/schemas/", obj(obj(doc["components"])["schemas"]), schemas)
		doc["paths"] = paths
		doc["components"] = map[string]any{"schemas": schemas}
		d.V3[gv] = doc
	}
	d.CRD.V3Components = map[string]any{}
	for scope, s := range samples {
		doc, err := load(filepath.Join(capture, s.file))
		if err != nil {
			return err
		}
		paths := obj(doc["paths"])
		all := obj(obj(doc["components"])["schemas"])
		for name, sch := range all {
			if !strings.HasPrefix(name, "org.example.") {
				d.CRD.V3Components[name] = sch
			}
		}
		if d.CRD.V3[scope], err = template(paths, s.repl); err != nil {
			return err
		}
	}

	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

// isServed reports whether a kube-apiserver path is one the reference
// server serves: the group-version root, or a served resource's collection,
// item or subresource (namespaced or not). Deprecated /watch/ paths are not.
func isServed(p string) bool {
	for gv, resources := range served {
		prefix := "/" + gv + "/"
		if p == prefix {
			return true
		}
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		rest = strings.TrimPrefix(rest, "namespaces/{namespace}/")
		m := resourcePath.FindStringSubmatch(rest)
		if m == nil {
			continue
		}
		res := m[1]
		if m[3] != "" {
			res += "/" + m[3]
		}
		for _, r := range resources {
			if r == res {
				return true
			}
		}
	}
	return false
}

var resourcePath = regexp.MustCompile(`^([a-z]+)(/\{name\}(?:/([a-z]+))?)?$`)

// closeRefs copies into out every entry of from that v references with
// prefix, transitively.
func closeRefs(v any, prefix string, from, out map[string]any) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if s, ok := x.(string); ok && k == "$ref" && strings.HasPrefix(s, prefix) {
				name := strings.TrimPrefix(s, prefix)
				if _, done := out[name]; !done && from[name] != nil {
					out[name] = from[name]
					closeRefs(from[name], prefix, from, out)
				}
				continue
			}
			closeRefs(x, prefix, from, out)
		}
	case []any:
		for _, x := range t {
			closeRefs(x, prefix, from, out)
		}
	}
}

// template replaces a sample CRD's names with placeholders.
func template(paths map[string]any, repl [][2]string) (map[string]any, error) {
	b, err := json.Marshal(paths)
	if err != nil {
		return nil, err
	}
	s := string(b)
	for _, r := range repl {
		s = strings.ReplaceAll(s, r[0], r[1])
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.Contains(k, "{{PLURAL}}") {
			return nil, fmt.Errorf("template path %s names no resource", k)
		}
	}
	return out, nil
}

func load(file string) (map[string]any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return m, nil
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
