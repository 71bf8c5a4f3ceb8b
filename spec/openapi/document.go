package openapi

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// Document is one API description in the shape both checkers read: named schemas
// (definitions), the operations that reach them, and the group/versions served.
type Document struct {
	Source string
	Format string
	// Schemas by definition name (Swagger definitions, OpenAPI components, or
	// "group/version/Kind" for a CRD version's openAPIV3Schema).
	Schemas map[string]*openapi3.SchemaRef
	// Names is Schemas' keys, sorted.
	Names      []string
	Operations []Operation
	// GroupVersions by "group/version" ("v1" for the core group).
	GroupVersions map[string]*GroupVersion
	// Kinds maps a definition name to the kinds it declares (x-kubernetes-group-version-kind).
	Kinds map[string][]GVK
	// CRDVersions holds spec.versions of each CRD by "group/Kind" (CRD documents only).
	CRDVersions map[string][]CRDVersion
	// CRDs holds each CRD's conversion strategy and stored versions by "group/Kind".
	CRDs map[string]CRDInfo

	graphOnce sync.Once
	edges     map[string][]Edge   // definition -> refs it holds
	reverse   map[string][]string // definition -> definitions that refer to it
	opsByDef  map[string][]int    // definition -> operations that name it directly
	statusSet map[string]bool     // definitions reached only through a kind's status
	reachMu   sync.Mutex
	reachMemo map[string]Reach
}

// Operation is one HTTP operation and the definitions it names directly.
type Operation struct {
	Method, Path, ID string
	Deprecated       bool
	Schemas          []string
	// Parameters are the path, query and header parameters (the body is RequestBody).
	Parameters []Parameter
	// RequestBody and Responses (by 2xx status code) name the body's type: a
	// definition name, or the JSON type for an inline schema ("" when there is none).
	RequestBody string
	Responses   map[string]string
}

// Parameter is one non-body parameter of an operation.
type Parameter struct {
	Name, In string
	Required bool
	// Type is the definition name, or the JSON type and format ("integer/int32", "array of string").
	Type string
}

// Key identifies an operation across documents: "METHOD path".
func (o Operation) Key() string { return o.Method + " " + o.Path }

// String names the operation for reports: its operationId, else METHOD path.
func (o Operation) String() string {
	if o.ID != "" {
		return o.ID
	}
	return o.Method + " " + o.Path
}

// GVK is a group/version/kind triple.
type GVK struct{ Group, Version, Kind string }

// GroupVersion returns "group/version", or "version" for the core group.
func (g GVK) GroupVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

func (g GVK) String() string { return g.GroupVersion() + ", Kind=" + g.Kind }

// GroupVersion is a served group/version with what the document says about it.
type GroupVersion struct {
	Group, Version string
	Served         bool
	// Storage is known only for CRDs.
	Storage bool
	// Deprecated: a CRD version marked deprecated, or every operation of the version deprecated.
	Deprecated bool
	// Kinds served in the version (known for CRDs and for documents with GVK extensions).
	Kinds []string

	allOpsDeprecated bool
}

// Key is "group/version", or "version" for the core group.
func (g *GroupVersion) Key() string { return GVK{Group: g.Group, Version: g.Version}.GroupVersion() }

// Edge is a $ref held by a definition at a JSON pointer inside it.
type Edge struct {
	Pointer string
	Target  string
}

func newDocument(source, format string) *Document {
	return &Document{
		Source:        source,
		Format:        format,
		Schemas:       map[string]*openapi3.SchemaRef{},
		GroupVersions: map[string]*GroupVersion{},
		Kinds:         map[string][]GVK{},
		CRDVersions:   map[string][]CRDVersion{},
		CRDs:          map[string]CRDInfo{},
	}
}

func (d *Document) groupVersion(key string) *GroupVersion {
	if g, ok := d.GroupVersions[key]; ok {
		return g
	}
	group, version := "", key
	if i := strings.LastIndex(key, "/"); i >= 0 {
		group, version = key[:i], key[i+1:]
	}
	g := &GroupVersion{Group: group, Version: version, allOpsDeprecated: true}
	d.GroupVersions[key] = g
	return g
}

// finish fills the derived indexes after the schemas are in place.
func (d *Document) finish() {
	d.Names = d.Names[:0]
	for n, s := range d.Schemas {
		d.Names = append(d.Names, n)
		if _, ok := d.Kinds[n]; !ok && s.Value != nil {
			if gvks := gvkExtension(s.Value.Extensions["x-kubernetes-group-version-kind"]); len(gvks) > 0 {
				d.Kinds[n] = gvks
			}
		}
	}
	sort.Strings(d.Names)
	for _, n := range d.Names {
		for _, k := range d.Kinds[n] {
			if g, ok := d.GroupVersions[k.GroupVersion()]; ok && !slices.Contains(g.Kinds, k.Kind) {
				g.Kinds = append(g.Kinds, k.Kind)
			}
		}
	}
}

func gvkExtension(v any) []GVK {
	list, ok := v.([]any)
	if !ok {
		return nil
	}
	var out []GVK
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		g, _ := m["group"].(string)
		ver, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		if k != "" && ver != "" {
			out = append(out, GVK{Group: g, Version: ver, Kind: k})
		}
	}
	return out
}

// WalkInline visits s and its inline subschemas depth-first with their JSON pointers
// (relative to s). It never follows a $ref: visit sees the ref'ing schema and
// should return false to stop there. Refs are where cycles live, so the walk is finite.
func WalkInline(s *openapi3.SchemaRef, ptr string, visit func(ptr string, s *openapi3.SchemaRef) bool) {
	if s == nil {
		return
	}
	if !visit(ptr, s) || s.Ref != "" || s.Value == nil {
		return
	}
	v := s.Value
	for _, name := range sortedKeys(v.Properties) {
		WalkInline(v.Properties[name], ptr+"/properties/"+EscapePointer(name), visit)
	}
	WalkInline(v.Items, ptr+"/items", visit)
	WalkInline(v.AdditionalProperties.Schema, ptr+"/additionalProperties", visit)
	for i, sub := range v.AllOf {
		WalkInline(sub, ptr+"/allOf/"+strconv.Itoa(i), visit)
	}
	for i, sub := range v.AnyOf {
		WalkInline(sub, ptr+"/anyOf/"+strconv.Itoa(i), visit)
	}
	for i, sub := range v.OneOf {
		WalkInline(sub, ptr+"/oneOf/"+strconv.Itoa(i), visit)
	}
	WalkInline(v.Not, ptr+"/not", visit)
}

func sortedKeys(m openapi3.Schemas) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// EscapePointer escapes a JSON pointer token (RFC 6901).
func EscapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// buildGraph indexes refs between definitions once; everything reachability needs comes from it.
func (d *Document) buildGraph() {
	d.graphOnce.Do(func() {
		d.edges = map[string][]Edge{}
		d.reverse = map[string][]string{}
		d.opsByDef = map[string][]int{}
		d.reachMemo = map[string]Reach{}
		for _, n := range d.Names {
			seen := map[string]bool{}
			WalkInline(d.Schemas[n], "", func(ptr string, s *openapi3.SchemaRef) bool {
				if t := RefName(s.Ref); t != "" {
					d.edges[n] = append(d.edges[n], Edge{Pointer: ptr, Target: t})
					if !seen[t] {
						seen[t] = true
						d.reverse[t] = append(d.reverse[t], n)
					}
					return false
				}
				return true
			})
		}
		for i, op := range d.Operations {
			for _, n := range op.Schemas {
				d.opsByDef[n] = append(d.opsByDef[n], i)
			}
		}
		d.statusSet = d.computeStatusOnly()
	})
}

// Edges returns the refs definition name holds.
func (d *Document) Edges(name string) []Edge {
	d.buildGraph()
	return d.edges[name]
}

// Referrers returns the definitions that hold a $ref to name.
func (d *Document) Referrers(name string) []string {
	d.buildGraph()
	return d.reverse[name]
}

// Reach is what reaches a definition: kinds that contain it and operations that name it or a container.
type Reach struct {
	Kinds      []string
	Operations []string
	// AllAlpha is true when at least one kind reaches it and every such kind is an alpha version.
	AllAlpha bool
}

// ReachedBy walks refs backwards from name to list the kinds and operations that reach it.
func (d *Document) ReachedBy(name string) Reach {
	d.buildGraph()
	d.reachMu.Lock()
	defer d.reachMu.Unlock()
	if r, ok := d.reachMemo[name]; ok {
		return r
	}
	seen := map[string]bool{name: true}
	queue := []string{name}
	kinds := map[string]bool{}
	ops := map[int]bool{}
	alpha := true
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, k := range d.Kinds[n] {
			kinds[k.String()] = true
			if !strings.Contains(k.Version, "alpha") {
				alpha = false
			}
		}
		for _, i := range d.opsByDef[n] {
			ops[i] = true
		}
		for _, from := range d.reverse[n] {
			if !seen[from] {
				seen[from] = true
				queue = append(queue, from)
			}
		}
	}
	r := Reach{AllAlpha: alpha && len(kinds) > 0}
	for k := range kinds {
		r.Kinds = append(r.Kinds, k)
	}
	sort.Strings(r.Kinds)
	idx := make([]int, 0, len(ops))
	for i := range ops {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		r.Operations = append(r.Operations, d.Operations[i].String())
	}
	d.reachMemo[name] = r
	return r
}

// StatusOnly reports whether a definition is reached only through the "status"
// field of kinds (the document allows status validation to be tightened).
func (d *Document) StatusOnly(name string) bool {
	d.buildGraph()
	return d.statusSet[name]
}

func (d *Document) computeStatusOnly() map[string]bool {
	viaSpec := map[string]bool{}
	viaStatus := map[string]bool{}
	var specQueue, statusQueue []string
	for _, n := range d.Names {
		if len(d.Kinds[n]) == 0 {
			continue
		}
		viaSpec[n] = true
		for _, e := range d.edges[n] {
			if IsStatusPointer(e.Pointer) {
				if !viaStatus[e.Target] {
					viaStatus[e.Target] = true
					statusQueue = append(statusQueue, e.Target)
				}
			} else if !viaSpec[e.Target] {
				viaSpec[e.Target] = true
				specQueue = append(specQueue, e.Target)
			}
		}
	}
	spread := func(queue []string, set map[string]bool) {
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, e := range d.edges[n] {
				if !set[e.Target] {
					set[e.Target] = true
					queue = append(queue, e.Target)
				}
			}
		}
	}
	spread(specQueue, viaSpec)
	spread(statusQueue, viaStatus)
	out := map[string]bool{}
	for n := range viaStatus {
		if !viaSpec[n] {
			out[n] = true
		}
	}
	return out
}

// IsStatusPointer reports whether a pointer inside a kind's schema is under its top-level status.
func IsStatusPointer(ptr string) bool {
	return ptr == "/properties/status" || strings.HasPrefix(ptr, "/properties/status/")
}

var kubeVersionRE = regexp.MustCompile(`^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$`)

// IsKubeVersion reports whether s looks like a Kubernetes API version (v1, v2beta1, v1alpha3).
func IsKubeVersion(s string) bool { return kubeVersionRE.MatchString(s) }

// VersionLess orders versions by Kubernetes priority: GA before beta before alpha,
// higher numbers first; non-Kubernetes-looking versions last, alphabetically.
func VersionLess(a, b string) bool {
	pa, pb := versionPriority(a), versionPriority(b)
	if pa != pb {
		return pa > pb
	}
	return a < b
}

func versionPriority(v string) int {
	m := kubeVersionRE.FindStringSubmatch(v)
	if m == nil {
		return -1
	}
	major, _ := strconv.Atoi(m[1])
	minor := 0
	if m[3] != "" {
		minor, _ = strconv.Atoi(m[3])
	}
	stability := 3
	switch m[2] {
	case "beta":
		stability = 2
	case "alpha":
		stability = 1
	}
	return stability*1_000_000 + major*1000 + minor
}

// VersionOfDefinition guesses the API version of a definition from its name
// ("io.k8s.api.apps.v1beta2.Deployment" -> "v1beta2", "g/v1/Kind" -> "v1").
func VersionOfDefinition(name string) string {
	for _, sep := range []string{"/", "."} {
		parts := strings.Split(name, sep)
		for i := len(parts) - 2; i >= 0; i-- {
			if IsKubeVersion(parts[i]) {
				return parts[i]
			}
		}
	}
	return ""
}

// KindVersions lists the group/versions that declare a kind of this name, sorted.
func (d *Document) KindVersions(kind string) []string {
	seen := map[string]bool{}
	for _, gvks := range d.Kinds {
		for _, k := range gvks {
			if k.Kind == kind {
				seen[k.GroupVersion()] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for gv := range seen {
		out = append(out, gv)
	}
	sort.Strings(out)
	return out
}

// IsZeroValue reports whether a JSON value is its type's zero value ("", 0, false, {}, []).
func IsZeroValue(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return false
}

// JSONString renders a JSON value for a message.
func JSONString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
