package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// The HTTP seam: a middleware that rewrites requests before the API handler
// sees them and responses (JSON only) after it answers. It never touches
// /apiconform/admin, and answers /version with the deviations it simulates.

// Wrap returns next with the HTTP-seam faults of s in front of it (next
// itself when s has none).
func (s Set) Wrap(next http.Handler) http.Handler {
	if len(s.Names()) == 0 {
		return next
	}
	// Even with registry faults only, /version names them.
	return &middleware{set: s, next: next}
}

type middleware struct {
	set  Set
	next http.Handler
	// clearedDeletions holds the uids whose deletionTimestamp a client unset
	// under deletion-timestamp-clearable: later answers leave it out.
	clearedDeletions sync.Map
}

// call is what the middleware knows of one API request.
type call struct {
	watch, list, collection bool
	resource, name, sub     string
	allNamespaces           bool // a namespaced-style collection URL without a namespace
	q                       url.Values
}

func classify(r *http.Request) (call, bool) {
	var segs []string
	switch p := strings.Trim(r.URL.Path, "/"); {
	case strings.HasPrefix(p, "api/"):
		segs = strings.Split(p, "/")[2:] // api/v1/...
	case strings.HasPrefix(p, "apis/"):
		segs = strings.Split(p, "/")
		if len(segs) < 3 {
			return call{}, false
		}
		segs = segs[3:]
	default:
		return call{}, false
	}
	if len(segs) >= 3 && segs[0] == "namespaces" {
		segs = segs[2:]
	}
	if len(segs) == 0 {
		return call{}, false
	}
	c := call{resource: segs[0], q: r.URL.Query()}
	if len(segs) > 1 {
		c.name = segs[1]
	}
	if len(segs) > 2 {
		c.sub = segs[2]
	}
	c.collection = c.name == ""
	c.allNamespaces = c.collection && !strings.Contains(r.URL.Path, "/namespaces/") && segs[0] != "namespaces"
	c.watch = r.Method == http.MethodGet && (c.q.Get("watch") == "1" || c.q.Get("watch") == "true")
	c.list = r.Method == http.MethodGet && c.collection && !c.watch
	return c, true
}

func (m *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := r.URL.Path; p == "/version" || p == "/version/" {
		m.serveVersion(w, r)
		return
	}
	if m.serveClients(w, r) || m.serveResources(w, r) {
		return
	}
	c, ok := classify(r)
	if !ok {
		m.next.ServeHTTP(w, r)
		return
	}
	r = m.rewriteRequest(r, &c)
	r = m.rewriteResourcesRequest(r, &c)
	r = m.rewriteClientsRequest(r, &c)
	r = m.rewriteReadsRequest(r, &c)
	r = m.rewriteWritesRequest(r, &c)
	r = m.rewriteStreamsRequest(r, &c)
	if c.watch {
		m.streamsWatch(w, r, c) // clientsWatch then serveWatch, through streams.go and clients.go stream faults
		return
	}
	if !m.rewritesResponse(r, c) && !m.resourcesRewriteResponse(r, c) && !m.clientsRewriteResponse(r, c) &&
		!m.readsRewriteResponse(r, c) && !m.writesRewriteResponse(r, c) && !m.streamsRewriteResponse(r, c) {
		m.next.ServeHTTP(w, r)
		return
	}
	rec := newRecorder()
	m.next.ServeHTTP(rec, r)
	m.after(r, c, rec)
	m.afterResources(r, c, rec)
	m.afterClients(r, c, rec)
	m.afterReads(r, c, rec)
	m.afterWrites(r, c, rec)
	m.afterStreams(r, c, rec)
	rec.copyTo(w)
}

// has is Has for the middleware's set.
func (m *middleware) has(f string) bool { return m.set.Has(f) }

func (m *middleware) rewriteRequest(r *http.Request, c *call) *http.Request {
	q := c.q
	ct := r.Header.Get("Content-Type")
	if c.watch && m.has(WatchTrueIsList) && q.Get("watch") == "true" {
		q.Del("watch")
		c.watch, c.list = false, true
	}
	if c.watch {
		if m.has(IgnoreSendInitialEvents) {
			q.Del("sendInitialEvents")
			q.Del("resourceVersionMatch")
		}
		if m.has(SendInitialEventsFalseSends) && q.Get("sendInitialEvents") == "false" {
			q.Set("sendInitialEvents", "true")
		}
		if m.has(InitialEventsBookmarkUnasked) && q.Get("sendInitialEvents") == "true" && q.Get("allowWatchBookmarks") != "true" {
			q.Set("allowWatchBookmarks", "true")
		}
		if m.has(LabelSelectorIgnoredOnWatch) {
			q.Del("labelSelector")
		}
		if m.has(FieldSelectorIgnoredOnWatch) {
			q.Del("fieldSelector")
		}
		if m.has(WatchResumeReplays) && q.Get("sendInitialEvents") == "" {
			if n, err := strconv.ParseInt(q.Get("resourceVersion"), 10, 64); err == nil && n > 1 {
				q.Set("resourceVersion", strconv.FormatInt(n-1, 10))
			}
		}
	}
	if c.list {
		if m.has(LabelSelectorIgnoredOnList) {
			q.Del("labelSelector")
		}
		if m.has(FieldSelectorIgnoredOnList) {
			q.Del("fieldSelector")
		}
		if m.has(ListIgnoresSendInitialEvents) {
			q.Del("sendInitialEvents")
		}
		if m.has(TableIgnoresIncludeObject) {
			q.Del("includeObject")
		}
		if m.has(RVMatchUnchecked) && q.Get("resourceVersionMatch") != "Exact" && q.Get("resourceVersionMatch") != "NotOlderThan" {
			q.Del("resourceVersionMatch")
		}
		if m.has(AllNamespacesListsDefault) && c.allNamespaces && c.resource == "configmaps" {
			r.URL.Path = strings.Replace(r.URL.Path, "/v1/", "/v1/namespaces/default/", 1)
		}
	}
	if r.Method == http.MethodGet {
		accept := r.Header.Get("Accept")
		if m.has(YAMLAnswersJSON) && strings.Contains(accept, "application/yaml") {
			r.Header.Set("Accept", "application/json")
		}
		if m.has(ProtobufAnswersJSON) && strings.Contains(accept, "application/vnd.kubernetes.protobuf") && !c.watch {
			r.Header.Set("Accept", "application/json")
		}
	}
	if m.has(LabelNotEqualRequiresKey) && q.Get("labelSelector") != "" {
		q.Set("labelSelector", requireKeysOfNotEqual(q.Get("labelSelector")))
	}
	if m.has(SelectorIgnoredOnContinue) && c.list && q.Get("continue") != "" {
		q.Del("labelSelector")
		q.Del("fieldSelector")
	}
	if m.has(DeleteCollectionIgnoresSel) && r.Method == http.MethodDelete && c.collection {
		q.Del("labelSelector")
		q.Del("fieldSelector")
	}
	write := r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch
	if write {
		switch fv := q.Get("fieldValidation"); {
		case m.has(FieldValidationStrictIgnored) && fv == "Strict",
			m.has(FieldValidationIgnoreWarns) && fv == "Ignore":
			q.Del("fieldValidation")
		case m.has(FieldValidationDefaultStrict) && fv == "":
			q.Set("fieldValidation", "Strict")
		}
	}
	if r.Method == http.MethodPatch && strings.HasPrefix(ct, "application/apply-patch") {
		if m.has(ApplyAlwaysForces) {
			q.Set("force", "true")
		}
		if m.has(ApplyForceIgnored) {
			q.Del("force")
		}
		if m.has(ApplyFieldManagerDefaulted) && q.Get("fieldManager") == "" {
			q.Set("fieldManager", "defaulted")
		}
	}
	if m.has(StrategicMergeAsMerge) && r.Method == http.MethodPatch && strings.HasPrefix(ct, "application/strategic-merge-patch+json") {
		r.Header.Set("Content-Type", "application/merge-patch+json")
	}
	if m.has(StatusSubresourceWritesSpec) && c.sub == "status" && (r.Method == http.MethodPut || r.Method == http.MethodPatch) {
		r.URL.Path = strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/status")
		c.sub = ""
	}
	r.URL.RawQuery = q.Encode()
	r.RequestURI = r.URL.RequestURI()

	switch {
	case m.has(UpdateIgnoresResourceVersion) && r.Method == http.MethodPut:
		editBody(r, func(o map[string]any) {
			if md, ok := o["metadata"].(map[string]any); ok {
				delete(md, "resourceVersion")
			}
		})
	case m.has(DeleteIgnoresPreconditions) && r.Method == http.MethodDelete:
		editBody(r, func(o map[string]any) { delete(o, "preconditions") })
	case m.has(GenerateNameUnsupported) && r.Method == http.MethodPost:
		editBody(r, func(o map[string]any) {
			if md, ok := o["metadata"].(map[string]any); ok {
				delete(md, "generateName")
			}
		})
	case m.has(JSONPatchTestIgnored) && r.Method == http.MethodPatch && strings.HasPrefix(ct, "application/json-patch+json"):
		editRawBody(r, func(b []byte) []byte {
			var ops []map[string]any
			if json.Unmarshal(b, &ops) != nil {
				return b
			}
			kept := ops[:0]
			for _, op := range ops {
				if op["op"] != "test" {
					kept = append(kept, op)
				}
			}
			out, _ := json.Marshal(kept)
			return out
		})
	}
	return r
}

// requireKeysOfNotEqual adds "key" (exists) for every "key!=value" of sel.
func requireKeysOfNotEqual(sel string) string {
	parsed, err := labels.Parse(sel)
	if err != nil {
		return sel
	}
	reqs, _ := parsed.Requirements()
	out := parsed
	for _, rq := range reqs {
		if rq.Operator() == selection.NotEquals || rq.Operator() == selection.NotIn {
			if ex, err := labels.NewRequirement(rq.Key(), selection.Exists, nil); err == nil {
				out = out.Add(*ex)
			}
		}
	}
	return out.String()
}

// rewritesResponse says whether the answer to r must be buffered.
func (m *middleware) rewritesResponse(r *http.Request, c call) bool {
	switch {
	case c.list && (m.has(EmptyListItemsNull) || m.has(ListKindWithoutSuffix) || m.has(ListMissingResourceVersion) || m.has(RemainingCountWithSelector)),
		m.has(ResourceVersionAsNumber) && (!c.collection || r.Method == http.MethodPost),
		m.has(CreateAnswers200) && r.Method == http.MethodPost,
		m.has(StatusMissingReason), m.has(StatusMissingDetails),
		m.has(FinalizersIgnored) && r.Method == http.MethodDelete && !c.collection:
		return true
	}
	return false
}

// after rewrites a buffered answer (and does follow-up requests).
func (m *middleware) after(r *http.Request, c call, rec *recorder) {
	if m.has(FinalizersIgnored) && r.Method == http.MethodDelete && !c.collection && rec.code == http.StatusOK &&
		c.q.Get("dryRun") == "" {
		var o map[string]any
		if json.Unmarshal(rec.body.Bytes(), &o) == nil {
			if md, ok := o["metadata"].(map[string]any); ok && md["deletionTimestamp"] != nil && md["finalizers"] != nil {
				m.release(r)
			}
		}
	}
	if m.has(CreateAnswers200) && r.Method == http.MethodPost && rec.code == http.StatusCreated {
		rec.code = http.StatusOK
	}
	if !strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") {
		return
	}
	var o map[string]any
	d := json.NewDecoder(bytes.NewReader(rec.body.Bytes()))
	d.UseNumber()
	if d.Decode(&o) != nil {
		return
	}
	md, _ := o["metadata"].(map[string]any)
	kind, _ := o["kind"].(string)
	switch {
	case kind == "Status" && rec.code >= 300:
		if m.has(StatusMissingReason) {
			delete(o, "reason")
		}
		if m.has(StatusMissingDetails) {
			delete(o, "details")
		}
	case c.list && strings.HasSuffix(kind, "List"):
		if items, ok := o["items"].([]any); ok && len(items) == 0 && m.has(EmptyListItemsNull) {
			o["items"] = nil
		}
		if m.has(ListKindWithoutSuffix) {
			o["kind"] = strings.TrimSuffix(kind, "List")
		}
		if md != nil && m.has(ListMissingResourceVersion) {
			delete(md, "resourceVersion")
		}
		if md != nil && m.has(RemainingCountWithSelector) && md["continue"] != nil && md["continue"] != "" &&
			(c.q.Get("labelSelector") != "" || c.q.Get("fieldSelector") != "") {
			md["remainingItemCount"] = 1
		}
	case md != nil && (!c.collection || r.Method == http.MethodPost) && m.has(ResourceVersionAsNumber):
		if rv, ok := md["resourceVersion"].(string); ok {
			if n, err := strconv.ParseInt(rv, 10, 64); err == nil {
				md["resourceVersion"] = n
			}
		}
	default:
		return
	}
	b, err := json.Marshal(o)
	if err != nil {
		return
	}
	rec.body.Reset()
	rec.body.Write(b)
	rec.body.WriteByte('\n')
}

// release drops the finalizers of the object r deleted, so that it goes.
func (m *middleware) release(r *http.Request) {
	p, _ := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodPatch, r.URL.Path,
		strings.NewReader(`{"metadata":{"finalizers":null}}`))
	p.Header = r.Header.Clone()
	p.Header.Set("Content-Type", "application/merge-patch+json")
	p.Header.Del("Content-Length")
	m.next.ServeHTTP(newRecorder(), p)
}

func (m *middleware) serveVersion(w http.ResponseWriter, r *http.Request) {
	rec := newRecorder()
	m.next.ServeHTTP(rec, r)
	var o map[string]any
	if rec.code == http.StatusOK && json.Unmarshal(rec.body.Bytes(), &o) == nil {
		o["apiconformSimulatedDeviations"] = m.set.Names()
		if b, err := json.MarshalIndent(o, "", "  "); err == nil {
			rec.body.Reset()
			rec.body.Write(b)
		}
	}
	rec.copyTo(w)
}

// serveWatch passes a watch through, rewriting its JSON events.
func (m *middleware) serveWatch(w http.ResponseWriter, r *http.Request, c call) {
	initial := c.q.Get("sendInitialEvents") == "true"
	if !initial || !(m.has(WatchListEndsWithError) || m.has(WatchListNoEndAnnotation) || m.has(WatchListStaleBookmarkRV)) {
		m.next.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	lw := &lineWriter{w: w, edit: func(line []byte) ([]byte, bool) {
		ev, ok := decodeEvent(line)
		if !ok || ev.Type != "BOOKMARK" {
			return line, true
		}
		md, _ := ev.Object["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if ann["k8s.io/initial-events-end"] != "true" {
			return line, true
		}
		switch {
		case m.has(WatchListEndsWithError):
			cancel()
			return []byte(`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
				`"message":"rpc error: code = Unknown desc = no progress notification support","reason":"InternalError","code":500}}` + "\n"), false
		case m.has(WatchListNoEndAnnotation):
			delete(md, "annotations")
		case m.has(WatchListStaleBookmarkRV):
			md["resourceVersion"] = "1"
		}
		b, _ := json.Marshal(ev)
		return append(b, '\n'), true
	}}
	m.next.ServeHTTP(lw, r.WithContext(ctx))
}

// event is one JSON watch event, its object decoded with numbers kept as
// written.
type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

// decodeEvent decodes one line of a JSON watch stream; ok is false when it
// is not an event with an object.
func decodeEvent(line []byte) (ev event, ok bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	return ev, d.Decode(&ev) == nil && ev.Object != nil
}

// lineWriter hands every complete line of a JSON stream to edit; once edit
// says stop, the rest of the stream is dropped.
type lineWriter struct {
	w       http.ResponseWriter
	edit    func([]byte) ([]byte, bool)
	json    bool
	started bool
	stopped bool
	buf     []byte
}

func (l *lineWriter) Header() http.Header { return l.w.Header() }

func (l *lineWriter) WriteHeader(code int) {
	if !l.started {
		l.started = true
		l.json = code == http.StatusOK && strings.HasPrefix(l.w.Header().Get("Content-Type"), "application/json")
	}
	l.w.WriteHeader(code)
}

func (l *lineWriter) Write(p []byte) (int, error) {
	if !l.started {
		l.WriteHeader(http.StatusOK)
	}
	if !l.json {
		return l.w.Write(p)
	}
	if l.stopped {
		return len(p), nil
	}
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := l.buf[:i+1]
		out, more := l.edit(line)
		if _, err := l.w.Write(out); err != nil {
			return 0, err
		}
		l.buf = l.buf[i+1:]
		if !more {
			l.stopped = true
			l.Flush()
			return len(p), nil
		}
	}
}

func (l *lineWriter) Flush() {
	if f, ok := l.w.(http.Flusher); ok {
		f.Flush()
	}
}

// recorder buffers an answer.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}, code: http.StatusOK} }

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) { r.code = code }

func (r *recorder) Write(p []byte) (int, error) { return r.body.Write(p) }

func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(r.body.Len()))
	w.WriteHeader(r.code)
	_, _ = w.Write(r.body.Bytes())
}

// editBody rewrites a JSON object request body.
func editBody(r *http.Request, edit func(map[string]any)) {
	editRawBody(r, func(b []byte) []byte {
		if out, ok := editJSONObject(b, edit); ok {
			return out
		}
		return b
	})
}

// editJSONObject decodes b as a JSON object (numbers kept as written),
// applies edit and encodes it again; ok is false when b is not one.
func editJSONObject(b []byte, edit func(map[string]any)) (out []byte, ok bool) {
	var o map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&o) != nil || o == nil {
		return nil, false
	}
	edit(o)
	out, err := json.Marshal(o)
	return out, err == nil
}

// editObjectAnswer rewrites a JSON object answer in place.
func editObjectAnswer(rec *recorder, edit func(map[string]any)) {
	if !strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") {
		return
	}
	if out, ok := editJSONObject(rec.body.Bytes(), edit); ok {
		rec.body.Reset()
		rec.body.Write(out)
		rec.body.WriteByte('\n')
	}
}

// writeStatus replaces the answer with a Failure Status (details left out
// when nil).
func writeStatus(rec *recorder, code int, reason, msg string, details map[string]any) {
	st := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code}
	if details != nil {
		st["details"] = details
	}
	b, _ := json.Marshal(st)
	rec.header = http.Header{"Content-Type": {"application/json"}}
	rec.code = code
	rec.body.Reset()
	rec.body.Write(b)
	rec.body.WriteByte('\n')
}

func editRawBody(r *http.Request, edit func([]byte) []byte) {
	if r.Body == nil || !strings.Contains(r.Header.Get("Content-Type"), "json") && r.Header.Get("Content-Type") != "" {
		return
	}
	b, err := io.ReadAll(bufio.NewReader(r.Body))
	_ = r.Body.Close()
	if err != nil {
		r.Body = io.NopCloser(bytes.NewReader(b))
		return
	}
	if len(b) > 0 {
		b = edit(b)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	r.Header.Set("Content-Length", strconv.Itoa(len(b)))
}
