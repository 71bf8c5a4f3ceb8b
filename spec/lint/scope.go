package lint

import (
	"strings"

	"github.com/apiconform/apiconform/spec/openapi"
)

// scope decides what the conventions apply to: API objects (and their lists) and
// the definitions they use. Discovery documents (APIGroup, APIResourceList),
// option kinds (DeleteOptions), watch events and definitions that mirror an
// external format (JSONSchemaProps, whose fields are JSON Schema keywords) are
// not API objects, so no rule reports on them.
type scope struct {
	// objects are the kind definitions served by resource endpoints (every CRD kind).
	objects map[string]bool
	// checked are the definitions field rules look at: objects and what they use.
	checked map[string]bool
}

func newScope(d *openapi.Document) *scope {
	sc := &scope{objects: map[string]bool{}, checked: map[string]bool{}}
	served := map[string]bool{}
	for _, op := range d.Operations {
		if !isResourcePath(op.Path) {
			continue
		}
		for _, t := range append([]string{op.RequestBody}, mapValues(op.Responses)...) {
			served[t] = true
		}
	}
	for _, name := range d.Names {
		gvks := d.Kinds[name]
		if len(gvks) == 0 || isOptionKind(gvks[0].Kind) || externalFormat(d, name) {
			continue
		}
		// Without operations (a bare schema set, a CRD manifest) every kind counts.
		if d.Format == openapi.FormatCRD || len(d.Operations) == 0 || served[name] {
			sc.objects[name] = true
		}
	}
	queue := make([]string, 0, len(sc.objects))
	for name := range sc.objects {
		sc.checked[name] = true
		queue = append(queue, name)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, e := range d.Edges(n) {
			t := e.Target
			if sc.checked[t] || externalFormat(d, t) || (len(d.Kinds[t]) > 0 && !sc.objects[t]) {
				continue
			}
			sc.checked[t] = true
			queue = append(queue, t)
		}
	}
	return sc
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// isResourcePath: /api/v1/<resource>… or /apis/<group>/<version>/<resource>…, not a watch path.
func isResourcePath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		rest = parts[3:]
	default:
		return false
	}
	return len(rest) > 0 && rest[0] != "watch" && openapi.GroupVersionOfPath(path) != ""
}

// isOptionKind: query and body option kinds (DeleteOptions, ListOptions, PodLogOptions).
func isOptionKind(kind string) bool {
	return strings.HasSuffix(kind, "Options") || kind == "WatchEvent"
}

// externalFormat: a definition whose fields are another format's keywords ($ref,
// $schema, x-kubernetes-*), such as JSONSchemaProps; its names are not API fields.
func externalFormat(d *openapi.Document, name string) bool {
	s := d.Schemas[name]
	if s == nil || s.Value == nil {
		return false
	}
	for p := range s.Value.Properties {
		if strings.HasPrefix(p, "$") || strings.HasPrefix(p, "x-") {
			return true
		}
	}
	return false
}
