// Package apiserver is the reference server's HTTP layer: routing, query
// parsing, content negotiation, Status rendering and watch streaming. It
// speaks the wire and the registry; it knows nothing of storage.
package apiserver

import (
	"fmt"
	"io"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"log"
	"net/http"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiconform/apiconform/refserver/auth"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/registry"
)

// MaxBodyBytes is the largest request body accepted (kube-apiserver's 3 MiB).
const MaxBodyBytes = 3 << 20

// Config configures the HTTP layer.
type Config struct {
	Registry *registry.Registry
	// Tokens authenticates bearer tokens; nil means an open server: every
	// client is anonymous and, without Rules, allowed everything.
	Tokens auth.Tokens
	// Rules authorizes requests; nil allows every authenticated user.
	Rules *auth.Rules
	// AdminEndpoints serves /apiconform/admin.
	AdminEndpoints bool
	// BookmarkInterval is how often watches with allowWatchBookmarks get a BOOKMARK (0 = 1 minute).
	BookmarkInterval time.Duration
	// MaxWatchTimeout caps a watch without timeoutSeconds (0 = 30 minutes).
	MaxWatchTimeout time.Duration
	// MaxRequestsInFlight bounds concurrent short requests, and separately
	// concurrent watch initialisations (0 = no bound); past it a request
	// gets 429 TooManyRequests with Retry-After, as kube-apiserver's
	// --max-requests-inflight does. Only system:masters and health probes
	// are exempt (flowcontrol.go).
	MaxRequestsInFlight int
	Faults              faults.Set
	// Logf logs server-side events (nil = log.Printf).
	Logf func(format string, args ...any)
}

// Handler serves the Kubernetes API.
type Handler struct {
	cfg  Config
	reg  *registry.Registry
	flow *flowControl // nil: unbounded
}

// New builds the handler.
func New(cfg Config) *Handler {
	if cfg.BookmarkInterval <= 0 {
		cfg.BookmarkInterval = time.Minute
	}
	if cfg.MaxWatchTimeout <= 0 {
		cfg.MaxWatchTimeout = 30 * time.Minute
	}
	if cfg.Logf == nil {
		cfg.Logf = log.Printf
	}
	return &Handler{cfg: cfg, reg: cfg.Registry, flow: newFlowControl(cfg.MaxRequestsInFlight)}
}

// ServeHTTP authenticates, recovers from panics and routes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if deepRequest(r) {
		growStack(len(r.URL.Path))
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.cfg.Logf("panic serving %s %s: %v\n%s", r.Method, r.URL.Path, v, debug.Stack())
			writeStatus(w, r, apierrors.NewInternalError(fmt.Errorf("%v", v)))
		}
	}()
	user, ok := h.authenticate(r)
	if !ok {
		writeStatus(w, r, errUnauthorized())
		return
	}
	r, release, admitted := h.flow.admit(w, r, user)
	if !admitted {
		return
	}
	defer release()
	// The user goes along as an argument, not in the request's context:
	// WithContext copies the request, two allocations on every call.
	if r.URL.RawQuery != "" {
		// This copy of the request is the handler's own: its Form holds
		// the query, parsed once for the options read all along the way.
		r.Form = r.URL.Query()
	}
	p := r.URL.Path
	if !isResourcePath(p) && !isAdminPath(p) {
		if err := h.authorizePath(r, user); err != nil {
			writeStatus(w, r, err)
			return
		}
	}
	switch {
	case p == "/livez" || p == "/readyz" || p == "/healthz" || strings.HasPrefix(p, "/livez/") || strings.HasPrefix(p, "/readyz/") || strings.HasPrefix(p, "/healthz/"):
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, _ = io.WriteString(w, "ok")
	case p == "/version" || p == "/version/":
		writeIndented(w, 200, versionInfo())
	case isAdminPath(p):
		h.serveAdmin(w, r, user)
	case p == "/openapi/v2" || strings.HasPrefix(p, "/openapi/"):
		h.serveOpenAPI(w, r)
	case p == "/api" || p == "/api/" || p == "/apis" || p == "/apis/":
		h.serveDiscoveryRoot(w, r)
	case isReviewPath(p):
		h.serveSelfSubject(w, r, user)
	case strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/apis/"):
		h.serveAPI(w, r, user)
	case p == "/":
		writeIndented(w, 200, map[string]any{"paths": []string{"/api", "/api/v1", "/apis", "/healthz", "/livez", "/openapi/v2", "/openapi/v3", "/readyz", "/version"}})
	default:
		writeStatus(w, r, errNotFoundResource())
	}
}

func (h *Handler) authenticate(r *http.Request) (auth.User, bool) {
	if h.cfg.Tokens == nil {
		return auth.Anonymous, true
	}
	a := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(a, "Bearer "); ok {
		u, found := h.cfg.Tokens[strings.TrimSpace(tok)]
		return u, found
	}
	if a != "" {
		return auth.User{}, false
	}
	return auth.Anonymous, true
}

// openServer: no token file and no rules, so everything is allowed.
func (h *Handler) openServer() bool { return h.cfg.Tokens == nil && h.cfg.Rules == nil }

// authorize answers 403 in kube-apiserver's words when the user may not
// act. A dry run is authorized exactly as the real request.
func (h *Handler) authorize(verb string, ri *requestInfo) error {
	u := ri.user
	res := ri.resource
	if ri.group != "" {
		res += "." + ri.group
	}
	a := auth.Attributes{Verb: verb, Resource: res, Subresource: ri.subresource, Namespace: ri.namespace, Name: ri.name}
	if h.openServer() || h.cfg.Rules.Allows(u, a) {
		return nil
	}
	return h.forbidden(u, verb, ri)
}

// authorizePath authorizes a non-resource request (discovery, OpenAPI,
// health, version) with kube-apiserver's 403 for paths.
func (h *Handler) authorizePath(r *http.Request, u auth.User) error {
	verb := strings.ToLower(r.Method)
	if h.openServer() || h.cfg.Rules.Allows(u, auth.Attributes{Verb: verb, Path: r.URL.Path}) {
		return nil
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure, Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: fmt.Sprintf("forbidden: User %q cannot %s path %q", u.Name, verb, r.URL.Path),
		Details: &metav1.StatusDetails{},
	}}
}

// isResourcePath: /api/v1/<resource>... and /apis/<group>/<version>/<resource>...;
// the shorter /api and /apis paths are discovery, a non-resource request.
func isResourcePath(p string) bool {
	// The path's segments counted, not split out: this runs on every request.
	p = strings.Trim(p, "/")
	segments := strings.Count(p, "/") + 1
	switch first, _, _ := strings.Cut(p, "/"); first {
	case "api":
		return segments >= 3
	case "apis":
		return segments >= 4
	}
	return false
}

func isAdminPath(p string) bool {
	return p == "/apiconform/admin" || strings.HasPrefix(p, "/apiconform/admin/")
}

func (h *Handler) forbidden(u auth.User, verb string, ri *requestInfo) error {
	scope := "at the cluster scope"
	if ri.namespace != "" {
		scope = fmt.Sprintf("in the namespace %q", ri.namespace)
	}
	res := ri.resource
	if ri.subresource != "" {
		res += "/" + ri.subresource
	}
	msg := fmt.Sprintf("User %q cannot %s resource %q in API group %q %s", u.Name, verb, res, ri.group, scope)
	se := apierrors.NewForbidden(schema.GroupResource{Group: ri.group, Resource: ri.resource}, ri.name, fmt.Errorf("%s", msg))
	se.ErrStatus.Message = fmt.Sprintf("%s %q is forbidden: %s", res, ri.name, msg)
	if ri.name == "" {
		se.ErrStatus.Message = fmt.Sprintf("%s is forbidden: %s", res, msg)
	}
	return se
}

// serveAdmin: GET /apiconform/admin, POST /apiconform/admin/compact and
// POST /apiconform/admin/revision-wait.
func (h *Handler) serveAdmin(w http.ResponseWriter, r *http.Request, u auth.User) {
	if !h.cfg.AdminEndpoints {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	// An open server serves them to everyone; otherwise only to system:masters.
	if h.cfg.Tokens != nil && !u.IsAdmin() {
		writeStatus(w, r, apierrors.NewForbidden(schema.GroupResource{Group: "", Resource: ""}, "", fmt.Errorf("user %q may not use the admin endpoints", u.Name)))
		return
	}
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "/apiconform/admin":
		if r.Method != http.MethodGet {
			writeStatus(w, r, errMethodNotAllowed())
			return
		}
		writeObject(w, r, 200, map[string]any{"endpoints": []string{"compact", "revision-wait"}})
	case "/apiconform/admin/compact":
		if r.Method != http.MethodPost {
			writeStatus(w, r, errMethodNotAllowed())
			return
		}
		st := h.reg.Store()
		rev := st.CurrentRevision()
		if err := st.Compact(rev); err != nil {
			writeStatus(w, r, apierrors.NewInternalError(err))
			return
		}
		writeObject(w, r, 200, map[string]any{"compactedRevision": rev})
	case "/apiconform/admin/revision-wait":
		h.serveRevisionWait(w, r)
	default:
		writeStatus(w, r, errNotFoundResource())
	}
}

func versionInfo() map[string]any {
	return map[string]any{
		"major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
		"minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
		"gitVersion": "v1.36.3-apiconform", "gitCommit": "0000000000000000000000000000000000000000",
		"gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z", "goVersion": goVersion(),
		"compiler": "gc", "platform": platform(),
	}
}

// query is r's query parameters, read-only. A write reads an option in
// half a dozen places: ServeHTTP parses the query once into r.Form (the API
// takes no form bodies, so nothing else fills it), and parsing an empty one
// still made a map.
func query(r *http.Request) url.Values {
	if r.Form != nil {
		return r.Form
	}
	if r.URL.RawQuery == "" {
		return noQuery
	}
	return r.URL.Query()
}

var noQuery = url.Values{}

// readBody reads at most MaxBodyBytes; a larger body is a 413.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := readAtMost(r.Body, MaxBodyBytes+1, r.ContentLength)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the request body: %v", err))
	}
	if len(b) > MaxBodyBytes {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", MaxBodyBytes))
	}
	return b, nil
}

// readAtMost is io.ReadAll of at most limit bytes of body, in a buffer of
// the declared length (size, -1 when unknown) plus one, where ReadAll
// starts at 512 bytes and doubles, copying, to the body's size. A declared
// length is trusted up to preallocCap only: a client that declares
// megabytes and sends nothing must not make the server hold them.
func readAtMost(body io.Reader, limit int, size int64) ([]byte, error) {
	c := 512
	if size >= 0 && size < int64(min(limit, preallocCap)) {
		c = int(size) + 1 // the extra byte lets the read that finds EOF need no room
	}
	b := make([]byte, 0, c)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):min(cap(b), limit)])
		b = b[:len(b)+n]
		if err == io.EOF || len(b) >= limit {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// preallocCap bounds the buffer a declared Content-Length preallocates.
const preallocCap = 64 << 10
