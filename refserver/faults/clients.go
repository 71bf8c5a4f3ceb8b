package faults

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"sigs.k8s.io/yaml"
)

// Deviations of the clients area (what client-go, kubectl and
// controller-runtime rely on: discovery, OpenAPI, protobuf, informers, the
// pager, authorization reviews).

// Fault names.
const (
	WatchNoModified            = "watch-no-modified"
	WatchExpiredNo410          = "watch-expired-no-410"
	ContinueSkipsItem          = "continue-skips-item"
	ProtobufBodyRefused        = "protobuf-body-refused"
	DiscoveryClusterScoped     = "discovery-cluster-scoped"
	OpenAPIV3NoGVK             = "openapi-v3-no-gvk"
	OpenAPIV3NoFieldValidation = "openapi-v3-no-field-validation"
	AccessReviewDenies         = "access-review-denies"
	EventSelectorsIgnored      = "event-selectors-ignored"
	LeaseUpdatesUnconditional  = "lease-updates-unconditional"
	EventsAPIsApart            = "events-apis-apart"
)

var clientFaults = map[string]fault{
	WatchNoModified:            {SeamHTTP, "watches send no MODIFIED events (JSON and protobuf streams): updates go unseen"},
	WatchExpiredNo410:          {SeamHTTP, "a watch from an expired resourceVersion answers 200 and then nothing, instead of a 410 Expired ERROR event"},
	ContinueSkipsItem:          {SeamHTTP, "a continue token skips the first item of the page it continues to"},
	ProtobufBodyRefused:        {SeamHTTP, "protobuf request bodies are refused with 415 (a JSON-only server)"},
	DiscoveryClusterScoped:     {SeamHTTP, "discovery lists namespaced resources as cluster-scoped (legacy and aggregated, JSON, YAML and protobuf)"},
	OpenAPIV3NoGVK:             {SeamHTTP, "OpenAPI v3 schemas carry no x-kubernetes-group-version-kind"},
	OpenAPIV3NoFieldValidation: {SeamHTTP, "OpenAPI v3 operations have no fieldValidation parameter (a server from before field validation)"},
	AccessReviewDenies:         {SeamHTTP, "SelfSubjectAccessReviews always answer allowed: false"},
	EventSelectorsIgnored:      {SeamHTTP, "lists of events ignore field selectors on the involved object (involvedObject.*): every event of the namespace is listed"},
	LeaseUpdatesUnconditional:  {SeamHTTP, "a PUT of a lease (JSON) overwrites it whatever resourceVersion it names: a stale candidate takes the lease from its leader"},
	EventsAPIsApart:            {SeamHTTP, "core/v1 lists and watches of events leave out those written through events.k8s.io/v1 (the two APIs kept apart): kubectl describe misses a controller's events"},
}

// pbType is the Kubernetes protobuf media type.
const pbType = "application/vnd.kubernetes.protobuf"

// serveClients answers the requests this file's faults take over entirely
// (those classify does not see: discovery, OpenAPI; and refused bodies);
// false leaves r to the rest of the middleware.
func (m *middleware) serveClients(w http.ResponseWriter, r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case m.has(ProtobufBodyRefused) && r.Method != http.MethodGet && mediaType(r.Header.Get("Content-Type")) == pbType:
		// What a server without protobuf support says (kube-apiserver's
		// wording for a custom resource, which has no protobuf form).
		b, _ := json.Marshal(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml",
			Reason:  metav1.StatusReasonUnsupportedMediaType, Code: http.StatusUnsupportedMediaType})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnsupportedMediaType)
		_, _ = w.Write(append(b, '\n'))
	case m.has(DiscoveryClusterScoped) && isDiscovery(p):
		m.serveEdited(w, r, clusterScoped)
	case (m.has(OpenAPIV3NoGVK) || m.has(OpenAPIV3NoFieldValidation)) && strings.HasPrefix(p, "/openapi/v3/"):
		m.serveEdited(w, r, m.editOpenAPI)
	default:
		return false
	}
	return true
}

// rewriteClientsRequest applies this file's request-side faults.
func (m *middleware) rewriteClientsRequest(r *http.Request, c *call) *http.Request {
	if m.has(ContinueSkipsItem) && c.list && c.q.Get("continue") != "" {
		if next := m.continueAfterOne(r); next != "" {
			c.q.Set("continue", next)
			r.URL.RawQuery = c.q.Encode()
			r.RequestURI = r.URL.RequestURI()
		}
	}
	if m.has(EventSelectorsIgnored) && c.list && c.resource == "events" && c.q.Has("fieldSelector") {
		var kept []string
		for _, term := range strings.Split(c.q.Get("fieldSelector"), ",") {
			if !strings.HasPrefix(term, "involvedObject.") {
				kept = append(kept, term)
			}
		}
		c.q.Set("fieldSelector", strings.Join(kept, ","))
		r.URL.RawQuery = c.q.Encode()
		r.RequestURI = r.URL.RequestURI()
	}
	if m.has(EventsAPIsApart) && (c.list || c.watch) && c.resource == "events" && strings.HasPrefix(r.URL.Path, "/api/") {
		// Events written through events.k8s.io/v1 name their reporting
		// controller; those written through core/v1 by client-go's older
		// recorder do not: core/v1 then sees only its own.
		sel := "reportingComponent="
		if s := c.q.Get("fieldSelector"); s != "" {
			sel = s + "," + sel
		}
		c.q.Set("fieldSelector", sel)
		r.URL.RawQuery = c.q.Encode()
		r.RequestURI = r.URL.RequestURI()
	}
	if m.has(LeaseUpdatesUnconditional) && r.Method == http.MethodPut && c.resource == "leases" && c.name != "" && c.sub == "" {
		if now := m.askResourceVersion(r, r.URL.Path, nil); now != "" {
			editBody(r, func(o map[string]any) {
				if md, ok := o["metadata"].(map[string]any); ok {
					md["resourceVersion"] = now
				}
			})
		}
	}
	return r
}

// continueAfterOne asks for the first item of the page r continues to and
// returns the token past it ("" when there is none).
func (m *middleware) continueAfterOne(r *http.Request) string {
	q := url.Values{}
	for k, v := range r.URL.Query() {
		q[k] = v
	}
	q.Set("limit", "1")
	u := *r.URL
	u.RawQuery = q.Encode()
	one, err := http.NewRequestWithContext(r.Context(), http.MethodGet, u.String(), nil)
	if err != nil {
		return ""
	}
	one.Header = r.Header.Clone()
	one.Header.Set("Accept", "application/json")
	one.RemoteAddr, one.Host = r.RemoteAddr, r.Host
	rec := newRecorder()
	m.next.ServeHTTP(rec, one)
	var l struct {
		Metadata struct {
			Continue string `json:"continue"`
		} `json:"metadata"`
	}
	if rec.code != http.StatusOK || json.Unmarshal(rec.body.Bytes(), &l) != nil {
		return ""
	}
	return l.Metadata.Continue
}

// clientsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) clientsRewriteResponse(r *http.Request, c call) bool {
	return m.has(AccessReviewDenies) && r.Method == http.MethodPost && c.resource == "selfsubjectaccessreviews"
}

// afterClients rewrites a buffered answer for this file's faults.
func (m *middleware) afterClients(r *http.Request, c call, rec *recorder) {
	if m.has(AccessReviewDenies) && r.Method == http.MethodPost && c.resource == "selfsubjectaccessreviews" && rec.code < 300 {
		editAnswer(rec, func(kind string, o map[string]any) {
			if st, ok := o["status"].(map[string]any); ok && kind == "SelfSubjectAccessReview" {
				st["allowed"] = false
				delete(st, "reason")
			}
		})
	}
}

// isDiscovery tells whether p (no trailing slash) is a discovery document:
// /api, /api/v1, /apis, /apis/G, /apis/G/V.
func isDiscovery(p string) bool {
	segs := strings.Split(strings.Trim(p, "/"), "/")
	switch segs[0] {
	case "api":
		return len(segs) <= 2
	case "apis":
		return len(segs) <= 3
	}
	return false
}

// clusterScoped makes every resource of a discovery document cluster-scoped.
func clusterScoped(kind string, o map[string]any) {
	switch kind {
	case "APIResourceList":
		for _, r := range asList(o["resources"]) {
			if rm, ok := r.(map[string]any); ok {
				rm["namespaced"] = false
			}
		}
	case "APIGroupDiscoveryList":
		for _, g := range asList(o["items"]) {
			gm, _ := g.(map[string]any)
			for _, v := range asList(gm["versions"]) {
				vm, _ := v.(map[string]any)
				for _, r := range asList(vm["resources"]) {
					if rm, ok := r.(map[string]any); ok && rm["scope"] == string(apidiscoveryv2.ScopeNamespace) {
						rm["scope"] = string(apidiscoveryv2.ScopeCluster)
					}
				}
			}
		}
	}
}

// editOpenAPI strips what this file's OpenAPI faults remove from a v3
// group-version document.
func (m *middleware) editOpenAPI(_ string, doc map[string]any) {
	if m.has(OpenAPIV3NoGVK) {
		dropKey(doc, "x-kubernetes-group-version-kind")
	}
	if !m.has(OpenAPIV3NoFieldValidation) {
		return
	}
	paths, _ := doc["paths"].(map[string]any)
	for _, item := range paths {
		im, _ := item.(map[string]any)
		dropFieldValidation(im) // the path's own parameters
		for _, op := range im {
			if om, ok := op.(map[string]any); ok {
				dropFieldValidation(om)
			}
		}
	}
}

// dropFieldValidation removes the fieldValidation parameter of an OpenAPI
// path item or operation.
func dropFieldValidation(o map[string]any) {
	params, ok := o["parameters"].([]any)
	if !ok {
		return
	}
	kept := []any{}
	for _, p := range params {
		if pm, ok := p.(map[string]any); !ok || pm["name"] != "fieldValidation" {
			kept = append(kept, p)
		}
	}
	o["parameters"] = kept
}

// dropKey deletes key from every object inside v.
func dropKey(v any, key string) {
	switch t := v.(type) {
	case map[string]any:
		delete(t, key)
		for _, x := range t {
			dropKey(x, key)
		}
	case []any:
		for _, x := range t {
			dropKey(x, key)
		}
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// serveEdited serves r through edit (a 200 answer only).
func (m *middleware) serveEdited(w http.ResponseWriter, r *http.Request, edit func(kind string, o map[string]any)) {
	rec := newRecorder()
	m.next.ServeHTTP(rec, r)
	if rec.code == http.StatusOK {
		editAnswer(rec, edit)
	}
	rec.copyTo(w)
}

// clientsScheme knows the protobuf forms of the documents this file edits.
var clientsScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{apidiscoveryv2.AddToScheme, authorizationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	s.AddKnownTypes(schema.GroupVersion{Version: "v1"}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{},
		&metav1.APIResourceList{}, &metav1.Status{})
	return s
}()

var clientsProtobuf = protobuf.NewSerializer(clientsScheme, clientsScheme)

// editAnswer applies edit to a buffered object answer in JSON, YAML or
// Kubernetes protobuf, and leaves anything else (or anything undecodable)
// as it is.
func editAnswer(rec *recorder, edit func(kind string, o map[string]any)) {
	body := rec.body.Bytes()
	var out []byte
	switch mediaType(rec.header.Get("Content-Type")) {
	case "application/json":
		out = editJSON(body, "", edit)
	case "application/yaml":
		if j, err := yaml.YAMLToJSON(body); err == nil {
			if e := editJSON(j, "", edit); e != nil {
				out, _ = yaml.JSONToYAML(e)
			}
		}
	case pbType:
		obj, gvk, err := clientsProtobuf.Decode(body, nil, nil)
		if err != nil {
			return
		}
		j, err := json.Marshal(obj)
		if err != nil {
			return
		}
		e := editJSON(j, gvk.Kind, edit)
		edited, err := clientsScheme.New(*gvk)
		if e == nil || err != nil || json.Unmarshal(e, edited) != nil {
			return
		}
		edited.GetObjectKind().SetGroupVersionKind(*gvk)
		var buf bytes.Buffer
		if clientsProtobuf.Encode(edited, &buf) != nil {
			return
		}
		out = buf.Bytes()
	}
	if out == nil {
		return
	}
	rec.body.Reset()
	rec.body.Write(out)
}

// editJSON applies edit to a JSON object (kind from the object unless
// given); nil when b is not one.
func editJSON(b []byte, kind string, edit func(string, map[string]any)) []byte {
	out, ok := editJSONObject(b, func(o map[string]any) {
		k := kind
		if k == "" {
			k, _ = o["kind"].(string)
		}
		edit(k, o)
	})
	if !ok {
		return nil
	}
	return append(out, '\n')
}

func mediaType(ct string) string {
	mt, _, _ := mime.ParseMediaType(ct)
	return mt
}

// maxQuietWatch bounds how long a watch that swallowed its 410 stays open
// when the client set no timeoutSeconds.
const maxQuietWatch = 30 * time.Minute

// clientsWatch serves a watch through this file's stream faults.
func (m *middleware) clientsWatch(w http.ResponseWriter, r *http.Request, c call) {
	if !m.has(WatchNoModified) && !m.has(WatchExpiredNo410) {
		m.serveWatch(w, r, c)
		return
	}
	ew := &eventWriter{w: w, drop: func(typ string, code int32) bool {
		return m.has(WatchNoModified) && typ == "MODIFIED" || m.has(WatchExpiredNo410) && typ == "ERROR" && code == http.StatusGone
	}, hide410: m.has(WatchExpiredNo410)}
	m.serveWatch(ew, r, c)
	if !ew.swallowed410 {
		return
	}
	// The watch "goes on" with nothing to say, as a server that silently
	// restarts from its oldest history would, until the client gives up.
	wait := maxQuietWatch
	if n, err := strconv.Atoi(c.q.Get("timeoutSeconds")); err == nil && n > 0 && time.Duration(n)*time.Second < wait {
		wait = time.Duration(n) * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-r.Context().Done():
	case <-t.C:
	}
}

// eventWriter passes a watch stream (JSON lines or protobuf frames) through,
// dropping the events drop names; hide410 turns a 410 answer into an
// empty 200 stream.
type eventWriter struct {
	w            http.ResponseWriter
	drop         func(typ string, code int32) bool
	hide410      bool
	started      bool
	format       string // "json", "protobuf" or "" (passed through)
	discard      bool   // the body of a hidden 410
	swallowed410 bool
	buf          []byte
}

func (e *eventWriter) Header() http.Header { return e.w.Header() }

func (e *eventWriter) WriteHeader(code int) {
	if e.started {
		return
	}
	e.started = true
	if code == http.StatusGone && e.hide410 {
		e.discard, e.swallowed410 = true, true
		e.w.Header().Set("Content-Type", "application/json")
		e.w.Header().Del("Content-Length")
		code = http.StatusOK
	} else if code == http.StatusOK {
		switch ct := e.w.Header().Get("Content-Type"); {
		case strings.HasPrefix(ct, "application/json"):
			e.format = "json"
		case strings.HasPrefix(ct, pbType):
			e.format = "protobuf"
		}
	}
	e.w.WriteHeader(code)
}

func (e *eventWriter) Write(p []byte) (int, error) {
	if !e.started {
		e.WriteHeader(http.StatusOK)
	}
	switch {
	case e.discard:
		return len(p), nil
	case e.format == "":
		return e.w.Write(p)
	}
	e.buf = append(e.buf, p...)
	for {
		n := e.nextEvent()
		if n == 0 {
			return len(p), nil
		}
		ev := e.buf[:n]
		typ, code := e.eventOf(ev)
		if e.drop(typ, code) {
			if typ == "ERROR" && code == http.StatusGone {
				e.swallowed410 = true
			}
		} else if _, err := e.w.Write(ev); err != nil {
			return 0, err
		}
		e.buf = e.buf[n:]
	}
}

// nextEvent is the length of the first complete event in buf (0: none yet).
func (e *eventWriter) nextEvent() int {
	if e.format == "json" {
		return bytes.IndexByte(e.buf, '\n') + 1
	}
	if len(e.buf) < 4 {
		return 0
	}
	n := 4 + int(binary.BigEndian.Uint32(e.buf[:4]))
	if len(e.buf) < n {
		return 0
	}
	return n
}

// eventOf reads an event's type and, for an ERROR event, its Status code.
func (e *eventWriter) eventOf(ev []byte) (string, int32) {
	if e.format == "json" {
		var j struct {
			Type   string `json:"type"`
			Object struct {
				Code int32 `json:"code"`
			} `json:"object"`
		}
		_ = json.Unmarshal(ev, &j)
		return j.Type, j.Object.Code
	}
	// A frame is a bare WatchEvent whose object is an enveloped object.
	var we metav1.WatchEvent
	if we.Unmarshal(ev[4:]) != nil {
		return "", 0
	}
	if we.Type != "ERROR" {
		return we.Type, 0
	}
	var u runtime.Unknown
	if raw := we.Object.Raw; len(raw) < 4 || u.Unmarshal(raw[4:]) != nil || u.Kind != "Status" {
		return we.Type, 0
	}
	var st metav1.Status
	if st.Unmarshal(u.Raw) != nil {
		return we.Type, 0
	}
	return we.Type, st.Code
}

func (e *eventWriter) Flush() {
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
}
