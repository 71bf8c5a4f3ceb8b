package faults

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// Deviations of the watch and compatibility areas (event shape and order, bookmarks, 410, Frobber versions).
//
// The watch faults live on the stream (streamsWatch, which http.go's watch
// path calls): a request rewrite, a refusal, or an edit of each JSON event
// line. The compatibility faults rewrite Frobber request bodies and the
// answers of custom resource requests.

// Fault names.
const (
	WatchIgnoresResourceVersion = "watch-ignores-resource-version"
	WatchEventsWithoutTypeMeta  = "watch-events-without-type-meta"
	BookmarkCarriesObject       = "bookmark-carries-object"
	WatchGoneInternalError      = "watch-gone-internal-error"
	AllowWatchBookmarksRefused  = "allow-watch-bookmarks-refused"
	FrobberV6ParamIgnored       = "frobber-v6-param-ignored"
	FrobberV6ParamsTruncated    = "frobber-v6-params-truncated"
	FrobberV6ParamRefilled      = "frobber-v6-param-refilled"
	CRDNoVersionConversion      = "crd-no-version-conversion"
	PutRefusesServerSetFields   = "put-refuses-server-set-fields"
)

var streamFaults = map[string]fault{
	WatchIgnoresResourceVersion: {SeamHTTP, "a watch from a resourceVersion is served as one without: it starts with the current state instead of the changes after it (a store that keeps no history)"},
	WatchEventsWithoutTypeMeta:  {SeamHTTP, "watch event objects carry no kind and apiVersion (internal objects encoded as they are)"},
	BookmarkCarriesObject:       {SeamHTTP, "a BOOKMARK carries the last object sent, with its resourceVersion, instead of only metadata.resourceVersion"},
	WatchGoneInternalError:      {SeamHTTP, "a watch from a compacted resourceVersion ends with a 500 InternalError ERROR event (the storage error passed through) instead of 410 Expired"},
	AllowWatchBookmarksRefused:  {SeamHTTP, "a plain watch with allowWatchBookmarks=true is refused with 400 (a server without bookmarks rejecting the parameter)"},
	FrobberV6ParamIgnored:       {SeamHTTP, "v6 Frobber writes ignore the singular param: params is stored as sent and param shown as params[0] (no create or update sync rules)"},
	FrobberV6ParamRefilled:      {SeamHTTP, "a v6 Frobber update that clears param keeps it as params[0] (the singular/plural ambiguity resolved for params)"},
	FrobberV6ParamsTruncated:    {SeamHTTP, "a Frobber read at v6 shows params cut to [param] (a lossy conversion to the older version)"},
	CRDNoVersionConversion:      {SeamHTTP, "custom resources are answered at the version they are stored at, whatever served version the URL names (no conversion, not even of apiVersion)"},
	PutRefusesServerSetFields:   {SeamHTTP, "a PUT whose metadata carries fields the server sets (uid, creationTimestamp, managedFields) is refused with 422 instead of accepted as they are"},
}

const frobberGroup = "compat.apiconform.io"

// rewriteStreamsRequest applies this file's request-side faults.
func (m *middleware) rewriteStreamsRequest(r *http.Request, c *call) *http.Request {
	if c.watch && m.has(WatchIgnoresResourceVersion) && c.q.Get("sendInitialEvents") == "" {
		if rv := c.q.Get("resourceVersion"); rv != "" && rv != "0" {
			c.q.Del("resourceVersion")
			r.URL.RawQuery = c.q.Encode()
			r.RequestURI = r.URL.RequestURI()
		}
	}
	if m.has(FrobberV6ParamIgnored) && isFrobberV6(r, c) {
		ignoreParam(r)
	}
	if m.has(FrobberV6ParamRefilled) && isFrobberV6(r, c) && c.name != "" {
		refillParam(r)
	}
	if m.has(PutRefusesServerSetFields) && r.Method == http.MethodPut && c.name != "" {
		if field := serverSetField(peekBody(r)); field != "" {
			r = harmless(r)
			r = r.WithContext(context.WithValue(r.Context(), refusedKey{}, field))
		}
	}
	return r
}

// refusedKey marks a request this file's faults answer themselves: its value
// is the field refused.
type refusedKey struct{}

// serverSetField names the first server-set metadata field body carries.
func serverSetField(body []byte) string {
	var o struct {
		Kind     string         `json:"kind"`
		Metadata map[string]any `json:"metadata"`
	}
	if json.Unmarshal(body, &o) != nil {
		return ""
	}
	for _, f := range []string{"uid", "creationTimestamp", "managedFields"} {
		if v, ok := o.Metadata[f]; ok && v != nil {
			return f
		}
	}
	return ""
}

// isFrobberV6 says whether r is addressed to v6 Frobbers.
func isFrobberV6(r *http.Request, c *call) bool {
	return c.resource == "frobbers" && c.sub == "" && strings.HasPrefix(r.URL.Path, "/apis/"+frobberGroup+"/v6/")
}

// ignoreParam makes a v6 write carry param = params[0] (or no param at
// all), so that the server's sync rules see nothing to sync: params wins.
func ignoreParam(r *http.Request) {
	ct := r.Header.Get("Content-Type")
	switch {
	case r.Method == http.MethodPatch && strings.HasPrefix(ct, "application/merge-patch+json"):
		editBody(r, func(o map[string]any) { delete(o, "param") })
	case r.Method == http.MethodPost || r.Method == http.MethodPut:
		editBody(r, func(o map[string]any) {
			if ps, ok := o["params"].([]any); ok && len(ps) > 0 {
				o["param"] = ps[0]
			} else {
				delete(o, "param")
			}
		})
	}
}

// refillParam undoes an update's clearing of param: a PUT gets params[0]
// back, a merge patch loses its "param": "" (or null).
func refillParam(r *http.Request) {
	switch {
	case r.Method == http.MethodPatch && strings.HasPrefix(r.Header.Get("Content-Type"), "application/merge-patch+json"):
		editBody(r, func(o map[string]any) {
			if v, ok := o["param"]; ok && (v == nil || v == "") {
				delete(o, "param")
			}
		})
	case r.Method == http.MethodPut:
		editBody(r, func(o map[string]any) {
			if ps, ok := o["params"].([]any); ok && len(ps) > 0 && (o["param"] == nil || o["param"] == "") {
				o["param"] = ps[0]
			}
		})
	}
}

// streamsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) streamsRewriteResponse(r *http.Request, c call) bool {
	switch {
	case r.Context().Value(refusedKey{}) != nil:
		return true
	case m.has(FrobberV6ParamsTruncated) && r.Method == http.MethodGet && isFrobberV6(r, &c):
		return true
	case m.has(CRDNoVersionConversion) && c.sub == "":
		a, ok := parsePath(r.URL.Path)
		return ok && strings.Contains(a.group, ".") && !strings.HasSuffix(a.group, ".k8s.io")
	}
	return false
}

// afterStreams rewrites a buffered answer for this file's faults.
func (m *middleware) afterStreams(r *http.Request, c call, rec *recorder) {
	if field, ok := r.Context().Value(refusedKey{}).(string); ok {
		writeStatus(rec, http.StatusUnprocessableEntity, "Invalid", c.name+" is invalid: metadata."+field+": Forbidden: field is set by the server",
			map[string]any{"name": c.name, "causes": []any{map[string]any{"reason": "FieldValueForbidden",
				"message": "Forbidden: field is set by the server", "field": "metadata." + field}}})
		return
	}
	if rec.code >= http.StatusMultipleChoices {
		return
	}
	if m.has(FrobberV6ParamsTruncated) && r.Method == http.MethodGet && isFrobberV6(r, &c) {
		editObjectAnswer(rec, func(o map[string]any) { eachObject(o, truncateParams) })
	}
	if m.has(CRDNoVersionConversion) && c.sub == "" {
		a, ok := parsePath(r.URL.Path)
		if !ok || !strings.Contains(a.group, ".") || strings.HasSuffix(a.group, ".k8s.io") {
			return
		}
		if stored := m.storageVersion(r, a); stored != "" {
			editObjectAnswer(rec, func(o map[string]any) {
				eachObject(o, func(o map[string]any) {
					if av, _ := o["apiVersion"].(string); strings.HasPrefix(av, a.group+"/") {
						o["apiVersion"] = a.group + "/" + stored
					}
				})
			})
		}
	}
}

// eachObject calls edit on o, or on every item of o when it is a list.
func eachObject(o map[string]any, edit func(map[string]any)) {
	if items, ok := o["items"].([]any); ok {
		for _, it := range items {
			if obj, ok := it.(map[string]any); ok {
				edit(obj)
			}
		}
		return
	}
	if k, _ := o["kind"].(string); k != "Status" {
		edit(o)
	}
}

func truncateParams(o map[string]any) {
	if p, _ := o["param"].(string); p != "" {
		o["params"] = []any{p}
	} else {
		delete(o, "params")
	}
}

// storageVersion is the storage version of the custom resource a addresses
// ("" when it is not one).
func (m *middleware) storageVersion(r *http.Request, a apiPath) string {
	got := m.internal(r, http.MethodGet, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+a.rest[0]+"."+a.group, nil, nil)
	if got.code != http.StatusOK {
		return ""
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name    string
				Storage bool
			}
		}
	}
	if json.Unmarshal(got.body.Bytes(), &crd) != nil {
		return ""
	}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// streamsWatch serves a watch (through clients.go's stream faults), with
// this file's watch faults in front.
func (m *middleware) streamsWatch(w http.ResponseWriter, r *http.Request, c call) {
	if m.has(AllowWatchBookmarksRefused) && c.q.Get("allowWatchBookmarks") == "true" && c.q.Get("sendInitialEvents") == "" {
		rec := newRecorder()
		writeStatus(rec, http.StatusBadRequest, "BadRequest", "allowWatchBookmarks: Unsupported value: \"true\": bookmarks are not supported", nil)
		rec.copyTo(w)
		return
	}
	if !m.has(WatchEventsWithoutTypeMeta) && !m.has(BookmarkCarriesObject) && !m.has(WatchGoneInternalError) {
		m.clientsWatch(w, r, c)
		return
	}
	var last map[string]any // the object of the last ADDED, MODIFIED or DELETED event
	lw := &lineWriter{w: w, edit: func(line []byte) ([]byte, bool) {
		ev, ok := decodeEvent(line)
		if !ok {
			return line, true
		}
		switch {
		case ev.Type == "ERROR":
			if !m.has(WatchGoneInternalError) || ev.Object["code"] != json.Number("410") {
				return line, true
			}
			ev.Object["code"] = 500
			ev.Object["reason"] = "InternalError"
			ev.Object["message"] = "etcdserver: mvcc: required revision has been compacted"
		case ev.Type == "BOOKMARK" && m.has(BookmarkCarriesObject) && last != nil:
			md, _ := ev.Object["metadata"].(map[string]any)
			obj, _ := json.Marshal(last)
			var o map[string]any
			_ = json.Unmarshal(obj, &o)
			omd, _ := o["metadata"].(map[string]any)
			if omd == nil {
				omd = map[string]any{}
				o["metadata"] = omd
			}
			for k, v := range md {
				omd[k] = v
			}
			ev.Object = o
		case ev.Type != "BOOKMARK":
			last = ev.Object
		}
		if m.has(WatchEventsWithoutTypeMeta) && ev.Type != "ERROR" {
			delete(ev.Object, "kind")
			delete(ev.Object, "apiVersion")
		}
		b, err := json.Marshal(ev)
		if err != nil {
			return line, true
		}
		return append(b, '\n'), true
	}}
	m.clientsWatch(lw, r, c)
}
