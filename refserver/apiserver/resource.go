package apiserver

import (
	"encoding/json"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/rvplan"
)

// requestInfo is a parsed resource path.
type requestInfo struct {
	group, version, resource, subresource, namespace, name string
	kind                                                   *registry.Kind
}

// serveAPI routes /api/... and /apis/... paths.
func (h *Handler) serveAPI(w http.ResponseWriter, r *http.Request) {
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
	ri := &requestInfo{group: group, version: version}
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
	q := r.URL.Query()
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
	if err := h.authorize(r, verb, ri); err != nil {
		return err
	}
	f, ok := negotiate(r.Header.Get("Accept"))
	if !ok {
		return errNotAcceptable()
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

func (h *Handler) get(w http.ResponseWriter, r *http.Request, ri *requestInfo, f format) error {
	plan, serr := rvplan.Make(rvplan.Request{Verb: rvplan.Get, ResourceVersion: r.URL.Query().Get("resourceVersion")})
	if serr != nil {
		return serr
	}
	obj, err := h.reg.Get(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, plan)
	if err != nil {
		return err
	}
	if ri.subresource == "scale" {
		return h.writeScale(w, r, ri, obj)
	}
	if f == formatTable {
		writeObject(w, r, 200, toTable(ri.kind, []registry.Object{obj}, "", "", r.URL.Query().Get("includeObject")))
		return nil
	}
	writeObject(w, r, 200, obj)
	return nil
}

// listParams parses the selectors and the rvplan request of a list, watch or deletecollection.
func (h *Handler) listParams(r *http.Request, ri *requestInfo, verb rvplan.Verb) (rvplan.Request, registry.Selector, error) {
	q := r.URL.Query()
	req := rvplan.Request{Verb: verb, ResourceVersion: q.Get("resourceVersion"), ResourceVersionMatch: q.Get("resourceVersionMatch"), Continue: q.Get("continue")}
	var sel registry.Selector
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return req, sel, apierrors.NewBadRequest(fmt.Sprintf("invalid limit %q: %v", s, err))
		}
		if n > 0 {
			req.Limit = n
		}
	}
	if s := q.Get("allowWatchBookmarks"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return req, sel, apierrors.NewBadRequest(fmt.Sprintf("invalid allowWatchBookmarks %q", s))
		}
		req.AllowWatchBookmarks = b
	}
	if s, ok := q["sendInitialEvents"]; ok {
		b, err := strconv.ParseBool(s[0])
		if err != nil {
			return req, sel, apierrors.NewBadRequest(fmt.Sprintf("invalid sendInitialEvents %q", s[0]))
		}
		req.SendInitialEvents = &b
	}
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return req, sel, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return req, sel, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector: %v", err))
	}
	if err := registry.CheckFieldSelector(ri.kind, fs); err != nil {
		return req, sel, apierrors.NewBadRequest(fmt.Sprintf("Unable to find %q that match label selector %q, field selector %q: %v",
			schema.GroupResource{Group: ri.group, Resource: ri.resource}.String(), ls.String(), fs.String(), err))
	}
	sel = registry.Selector{Labels: ls, Fields: fs}
	return req, sel, nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, ri *requestInfo, f format) error {
	req, sel, err := h.listParams(r, ri, rvplan.List)
	if err != nil {
		return err
	}
	plan, serr := rvplan.Make(req)
	if serr != nil {
		return serr
	}
	res, err := h.reg.List(r.Context(), ri.kind, ri.version, ri.namespace, plan, sel)
	if err != nil {
		return err
	}
	rv := strconv.FormatInt(res.ResourceVersion, 10)
	if f == formatTable {
		t := toTable(ri.kind, res.Items, rv, res.Continue, r.URL.Query().Get("includeObject"))
		t.RemainingItemCount = res.RemainingItemCount
		writeObject(w, r, 200, t)
		return nil
	}
	writeObject(w, r, 200, h.listObject(ri, res))
	return nil
}

func (h *Handler) listObject(ri *requestInfo, res *registry.ListResult) map[string]any {
	lm := map[string]any{"resourceVersion": strconv.FormatInt(res.ResourceVersion, 10)}
	custom := ri.kind.Typed == nil && ri.kind.TypedFor == nil && ri.kind.Group != "apiextensions.k8s.io"
	if res.Continue != "" || custom {
		lm["continue"] = res.Continue // custom resource lists always carry it, as kube-apiserver's do
	}
	if res.RemainingItemCount != nil {
		lm["remainingItemCount"] = *res.RemainingItemCount
	}
	items := make([]any, 0, len(res.Items))
	for _, it := range res.Items {
		// kube-apiserver leaves kind and apiVersion off items of built-in
		// kinds; custom resources keep them.
		if ri.kind.Typed != nil || ri.kind.TypedFor != nil || ri.kind.Group == "apiextensions.k8s.io" {
			delete(it, "kind")
			delete(it, "apiVersion")
		}
		items = append(items, it)
	}
	return map[string]any{"kind": ri.kind.ListKind, "apiVersion": ri.kind.APIVersion(ri.version), "metadata": lm, "items": items}
}

func dryRun(r *http.Request) (bool, error) {
	return len(r.URL.Query()["dryRun"]) > 0, nil
}

// readObject reads and decodes the body of a create or update (verb).
func (h *Handler) readObject(w http.ResponseWriter, r *http.Request, ri *requestInfo, verb string) (registry.Object, error) {
	body, f, err := h.readInput(r, verb)
	if err != nil {
		return nil, err
	}
	lv, err := level(r, map[string]string{"create": "CreateOptions", "update": "UpdateOptions"}[verb])
	if err != nil {
		return nil, err
	}
	obj, warnings, err := decodeObject(ri, body, f, lv)
	if err != nil {
		return nil, err
	}
	h.addWarnings(w, warnings)
	m := registry.Meta(obj)
	if ns, _ := m["namespace"].(string); ri.kind.Namespaced && ns != "" && ns != ri.namespace {
		return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return obj, nil
}

// readInput reads the body of a create or update in kube-apiserver's order:
// a create checks the media type (415) before the body and the query options
// (422); an update checks the media type last.
func (h *Handler) readInput(r *http.Request, verb string) ([]byte, fieldcheck.Format, error) {
	ct := r.Header.Get("Content-Type")
	if verb == "create" {
		if _, _, err := inputFormat(ct); err != nil {
			return nil, 0, err
		}
	}
	body, err := readBody(r)
	if err != nil {
		return nil, 0, err
	}
	if err := validateOptions(r, verb); err != nil {
		return nil, 0, err
	}
	return bodyOf(ct, body)
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	dry, err := dryRun(r)
	if err != nil {
		return err
	}
	obj, err := h.readObject(w, r, ri, "create")
	if err != nil {
		return err
	}
	out, err := h.reg.Create(r.Context(), ri.kind, ri.version, ri.namespace, obj, registry.WriteOptions{DryRun: dry, FieldManager: managerOf(r)})
	if err != nil {
		return err
	}
	writeObject(w, r, http.StatusCreated, out)
	return nil
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	dry, err := dryRun(r)
	if err != nil {
		return err
	}
	if ri.subresource == "scale" {
		return h.updateScale(w, r, ri, dry)
	}
	obj, err := h.readObject(w, r, ri, "update")
	if err != nil {
		return err
	}
	m := registry.Meta(obj)
	if name, _ := m["name"].(string); name != ri.name {
		return apierrors.NewBadRequest("the name of the object (" + name + ") does not match the name on the URL (" + ri.name + ")")
	}
	out, err := h.reg.Update(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, obj, registry.WriteOptions{DryRun: dry, Subresource: ri.subresource, FieldManager: managerOf(r)})
	if err != nil {
		return err
	}
	writeObject(w, r, 200, out)
	return nil
}

func (h *Handler) deleteOptions(r *http.Request) (registry.DeleteOptions, error) {
	var o registry.DeleteOptions
	body, err := readBody(r)
	if err != nil {
		return o, err
	}
	var opts metav1.DeleteOptions
	if len(strings.TrimSpace(string(body))) > 0 {
		b, f, err := bodyOf(r.Header.Get("Content-Type"), body)
		if err != nil {
			return o, err
		}
		raw, err := toJSON(b, f)
		if err != nil {
			return o, err
		}
		if err := json.Unmarshal(raw, &opts); err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml: %v", err))
		}
	}
	q := r.URL.Query()
	if p := q.Get("propagationPolicy"); p != "" {
		pp := metav1.DeletionPropagation(p)
		opts.PropagationPolicy = &pp
	}
	if p := q.Get("gracePeriodSeconds"); p != "" {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return o, apierrors.NewBadRequest(fmt.Sprintf("invalid gracePeriodSeconds %q", p))
		}
		opts.GracePeriodSeconds = &n
	}
	dry, err := dryRun(r)
	if err != nil {
		return o, err
	}
	o.DryRun = dry
	if err := fieldcheck.ValidateDeleteDryRun(opts.DryRun); err != nil {
		return o, err
	}
	o.DryRun = o.DryRun || len(opts.DryRun) > 0
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationForeground, metav1.DeletePropagationBackground, metav1.DeletePropagationOrphan:
			o.PropagationPolicy = string(*opts.PropagationPolicy)
		default:
			return o, invalidDeleteOptions(string(*opts.PropagationPolicy))
		}
	}
	if opts.Preconditions != nil {
		if opts.Preconditions.UID != nil {
			o.PreconditionUID = string(*opts.Preconditions.UID)
		}
		if opts.Preconditions.ResourceVersion != nil {
			o.PreconditionVersion = *opts.Preconditions.ResourceVersion
		}
	}
	return o, nil
}

func invalidDeleteOptions(policy string) error {
	msg := fmt.Sprintf("Unsupported value: %q: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"", policy)
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid,
		Message: "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: " + msg,
		Details: &metav1.StatusDetails{Group: "meta.k8s.io", Kind: "DeleteOptions", Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueNotSupported, Message: msg, Field: "propagationPolicy"}}},
	}}
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	o, err := h.deleteOptions(r)
	if err != nil {
		return err
	}
	res, err := h.reg.Delete(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, o)
	if err != nil {
		return err
	}
	if res.Finished && ri.kind.DeleteReturnsStatus {
		m := registry.Meta(res.Object)
		uid, _ := m["uid"].(string)
		writeObject(w, r, 200, metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
			Details: &metav1.StatusDetails{Name: ri.name, Group: ri.group, Kind: ri.resource, UID: typesUID(uid)}})
		return nil
	}
	writeObject(w, r, 200, res.Object)
	return nil
}

func (h *Handler) deleteCollection(w http.ResponseWriter, r *http.Request, ri *requestInfo) error {
	req, sel, err := h.listParams(r, ri, rvplan.List)
	if err != nil {
		return err
	}
	if _, serr := rvplan.Make(req); serr != nil {
		return serr
	}
	o, err := h.deleteOptions(r)
	if err != nil {
		return err
	}
	res, err := h.reg.DeleteCollection(r.Context(), ri.kind, ri.version, ri.namespace, sel, o)
	if err != nil {
		return err
	}
	writeObject(w, r, 200, h.listObject(ri, res))
	return nil
}
