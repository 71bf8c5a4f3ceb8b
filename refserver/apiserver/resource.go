package apiserver

import (
	"net/http"
	"strings"

	"github.com/apiconform/apiconform/refserver/auth"
	"github.com/apiconform/apiconform/refserver/registry"
)

// requestInfo is a parsed resource path.
type requestInfo struct {
	group, version, resource, subresource, namespace, name string
	kind                                                   *registry.Kind
	user                                                   auth.User // who asks
}

// serveAPI routes /api/... and /apis/... paths.
func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request, user auth.User) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var group string
	var rest []string
	if segs[0] == "api" {
		rest = segs[1:]
	} else {
		group = segs[1]
		if len(segs) == 2 {
			if r.Method != http.MethodGet {
				writeStatus(w, r, errMethodNotAllowed())
				return
			}
			h.serveGroup(w, r, group)
			return
		}
		rest = segs[2:]
	}
	version := rest[0]
	rest = rest[1:]
	if len(rest) == 0 {
		if r.Method != http.MethodGet {
			writeStatus(w, r, errMethodNotAllowed())
			return
		}
		h.serveResourceList(w, r, group, version)
		return
	}
	ri := &requestInfo{group: group, version: version, user: user}
	if rest[0] == "namespaces" && len(rest) >= 3 {
		if k := h.reg.Lookup(group, rest[2]); k != nil && k.Namespaced {
			ri.namespace, rest = rest[1], rest[2:]
		}
	}
	for _, s := range rest {
		if s == "" {
			writeStatus(w, r, errNotFoundResource())
			return
		}
	}
	ri.resource = rest[0]
	if len(rest) > 1 {
		ri.name = rest[1]
	}
	if len(rest) > 2 {
		ri.subresource = rest[2]
	}
	k := h.reg.Lookup(group, ri.resource)
	if k == nil || !k.Serves(version) || len(rest) > 3 || (ri.namespace != "" && !k.Namespaced) {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	if k.Namespaced && ri.namespace == "" && ri.name != "" {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	switch ri.subresource {
	case "":
	case "status":
		if !k.StatusSubresource {
			writeStatus(w, r, errNotFoundResource())
			return
		}
	case "scale":
		if k.Scale == nil {
			writeStatus(w, r, errNotFoundResource())
			return
		}
	default:
		writeStatus(w, r, errNotFoundResource())
		return
	}
	ri.kind = k
	if err := h.serveResource(w, r, ri); err != nil {
		writeStatus(w, r, err)
	}
}

func (h *Handler) serveResource(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	q := query(r)
	isWatch := q.Get("watch") == "1" || q.Get("watch") == "true"
	var verb string
	switch r.Method {
	case http.MethodGet:
		switch {
		case ri.name != "":
			verb = "get"
		case isWatch:
			verb = "watch"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if ri.name == "" {
			verb = "deletecollection"
		}
	default:
		return errMethodNotAllowed()
	}
	if ri.subresource != "" && verb != "get" && verb != "update" && verb != "patch" {
		return errMethodNotAllowed()
	}
	if (verb == "create" && ri.name != "") || (ri.name == "" && (verb == "update" || verb == "patch")) {
		return errMethodNotAllowed()
	}
	if verb == "create" && ri.kind.Namespaced && ri.namespace == "" {
		return errMethodNotAllowed()
	}
	if err := h.authorize(verb, ri); err != nil {
		return err
	}
	f, err := negotiateKind(r.Header.Get("Accept"), ri.kind, ri.version)
	if err != nil {
		return err
	}
	if verb == "delete" || verb == "deletecollection" {
		if err := validateOptions(r, verb); err != nil {
			return err
		}
	}
	if f == formatTable && verb != "get" && verb != "list" && verb != "watch" {
		f = formatJSON
	}
	switch verb {
	case "get":
		return h.get(w, r, ri, f)
	case "list":
		return h.list(w, r, ri, f)
	case "watch":
		return h.watch(w, r, ri, f)
	case "create":
		return h.create(w, r, ri)
	case "update":
		return h.update(w, r, ri)
	case "patch":
		return h.patch(w, r, ri)
	case "delete":
		return h.delete(w, r, ri)
	default:
		return h.deleteCollection(w, r, ri)
	}
}
