package apiserver

import (
	"fmt"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/rvplan"
)

// get and list.

func (h *Handler) get(w http.ResponseWriter, r *http.Request, ri *requestInfo, f format) error {
	plan, serr := rvplan.Make(rvplan.Request{Verb: rvplan.Get, ResourceVersion: query(r).Get("resourceVersion")})
	if serr != nil {
		return serr
	}
	if ri.subresource != "scale" && encodedOK(r, f) {
		b, err := h.reg.GetJSON(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, plan)
		if err != nil {
			return err
		}
		writeEncoded(w, 200, b)
		return nil
	}
	obj, err := h.reg.Get(r.Context(), ri.kind, ri.version, ri.namespace, ri.name, plan)
	if err != nil {
		return err
	}
	if ri.subresource == "scale" {
		return h.writeScale(w, r, ri, obj)
	}
	if f == formatTable {
		writeObject(w, r, 200, objectTable(ri.kind, obj, query(r).Get("includeObject")))
		return nil
	}
	writeObject(w, r, 200, obj)
	return nil
}

// listParams parses the selectors and the rvplan request of a list, watch or deletecollection.
func (h *Handler) listParams(r *http.Request, ri *requestInfo, verb rvplan.Verb) (rvplan.Request, registry.Selector, error) {
	q := query(r)
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
	// Selector errors carry the parser's own words, as kube-apiserver sends them.
	ls, err := labels.Parse(q.Get("labelSelector"))
	if err != nil {
		return req, sel, apierrors.NewBadRequest(err.Error())
	}
	fs, err := fields.ParseSelector(q.Get("fieldSelector"))
	if err != nil {
		return req, sel, apierrors.NewBadRequest(err.Error())
	}
	if err := registry.CheckFieldSelector(ri.kind, fs); err != nil {
		return req, sel, apierrors.NewBadRequest(err.Error())
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
	if encodedOK(r, f) {
		el, err := h.reg.ListEncoded(r.Context(), ri.kind, ri.version, ri.namespace, plan, sel, bareItems(ri.kind))
		if err != nil {
			return err
		}
		writeEncodedList(w, 200, ri.kind.ListKind, ri.kind.APIVersion(ri.version), listMeta(ri, &el.ListResult), el.Raw)
		return nil
	}
	res, err := h.reg.List(r.Context(), ri.kind, ri.version, ri.namespace, plan, sel)
	if err != nil {
		return err
	}
	rv := strconv.FormatInt(res.ResourceVersion, 10)
	if f == formatTable {
		t := toTable(ri.kind, res.Items, rv, res.Continue, query(r).Get("includeObject"))
		t.RemainingItemCount = res.RemainingItemCount
		writeObject(w, r, 200, t)
		return nil
	}
	writeObject(w, r, 200, h.listObject(ri, res))
	return nil
}

func (h *Handler) listObject(ri *requestInfo, res *registry.ListResult) map[string]any {
	items := make([]any, 0, len(res.Items))
	for _, it := range res.Items {
		if bareItems(ri.kind) {
			delete(it, "kind")
			delete(it, "apiVersion")
		}
		items = append(items, it)
	}
	return map[string]any{"kind": ri.kind.ListKind, "apiVersion": ri.kind.APIVersion(ri.version), "metadata": listMeta(ri, res), "items": items}
}
