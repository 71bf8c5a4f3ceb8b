package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiconform/apiconform/reports/result"
)

// Framework is a suite's per-spec handle: call New inside a Describe body.
// Before each spec it creates a fresh namespace and starts recording
// exchanges; after the spec it deletes what the spec created and, when the
// spec failed, attaches the recorded exchanges to the report.
type Framework struct {
	Area      string
	Namespace string // the spec's own namespace, ac-<area>-<random>

	ctx     context.Context
	counter int
}

// New registers the per-spec setup and cleanup for area and returns the handle.
func New(area string) *Framework {
	f := &Framework{Area: area}
	ph := trackPhases()
	ginkgo.BeforeEach(func() {
		s := st()
		afterSpec := guardSpec(s.ctx, s.client) // outcome.go: not run, or error when the target went away
		lockHistory(s.ctx)                      // historylock.go: compactions apart from other workers' specs
		prepareEarly(s)                         // expiry.go: once per process, before anything is recorded
		f.ctx = s.ctx
		f.counter = 0
		rec := s.client.startRecording()
		ph.start(s.client)
		ginkgo.DeferCleanup(func() {
			afterSpec()
			s.client.stopRecording()
			// Roles and the verdict (verdict.go) are settled once the spec has ended.
			xs := ph.finish(*rec, ginkgo.CurrentSpecReport())
			if ginkgo.CurrentSpecReport().Failed() && len(xs) > 0 {
				ginkgo.AddReportEntry(result.ExchangesEntry, result.ExchangesEntryValue(xs), ginkgo.ReportEntryVisibilityFailureOrVerbose)
			}
		})
		r := f.createNamespace()
		gomega.Expect(r.Code).To(gomega.Equal(http.StatusCreated), "create namespace: %s", r)
		ns := f.Namespace
		ginkgo.DeferCleanup(func() { deleteNamespace(ns) })
	})
	return f
}

// createNamespace creates the handle's namespace, ac-<area>-<random>; a
// name another run still holds (409, often a namespace being deleted on a
// shared cluster) is drawn again, twice at most.
func (f *Framework) createNamespace() *Response {
	var r *Response
	for range 3 {
		f.Namespace = "ac-" + sanitize(f.Area) + "-" + randomSuffix(5)
		r = f.Post("/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": f.Namespace, "labels": map[string]string{"apiconform.test/area": sanitize(f.Area)}},
		})
		if r.Code != http.StatusConflict {
			break
		}
	}
	return r
}

// deleteNamespace deletes ns, best effort, with a fresh deadline so that it
// runs after cancellation too; the namespace takes its objects with it.
func deleteNamespace(ns string) {
	s := st()
	ctx, cancel := context.WithTimeout(context.Background(), s.client.requestTimeout)
	defer cancel()
	_, _ = s.client.Do(ctx, Request{Method: "DELETE", Path: "/api/v1/namespaces/" + ns})
}

// Ctx is the run's context (bounded per request by the client's deadlines).
func (f *Framework) Ctx() context.Context {
	if f.ctx == nil {
		return context.Background()
	}
	return f.ctx
}

// Name returns a unique object name starting with prefix.
func (f *Framework) Name(prefix string) string {
	f.counter++
	return fmt.Sprintf("%s-%d-%s", sanitize(prefix), f.counter, randomSuffix(4))
}

// Option adjusts a request.
type Option func(*Request)

// Query adds a query parameter.
func Query(key, value string) Option {
	return func(r *Request) {
		if r.Query == nil {
			r.Query = url.Values{}
		}
		r.Query.Add(key, value)
	}
}

// Header adds a request header.
func Header(key, value string) Option {
	return func(r *Request) {
		if r.Header == nil {
			r.Header = http.Header{}
		}
		r.Header.Add(key, value)
	}
}

// ContentType sets the Content-Type header.
func ContentType(ct string) Option { return Header("Content-Type", ct) }

// Accept sets the Accept header.
func Accept(a string) Option { return Header("Accept", a) }

// Timeout overrides the request deadline.
func Timeout(d time.Duration) Option { return func(r *Request) { r.Timeout = d } }

// Content types of the PATCH flavours, as apimachinery names them.
const (
	JSONPatch           = string(types.JSONPatchType)
	MergePatch          = string(types.MergePatchType)
	StrategicMergePatch = string(types.StrategicMergePatchType)
	ApplyPatch          = string(types.ApplyYAMLPatchType)
)

// Do sends a request; a transport error ends the spec as error (not a
// conformance failure), and a lost target stops the run (outcome.go).
func (f *Framework) Do(method, path string, body any, opts ...Option) *Response {
	data, err := encodeBody(body)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	req := Request{Method: method, Path: path, Body: data}
	for _, o := range opts {
		o(&req)
	}
	r, err := st().client.Do(f.Ctx(), req)
	if err != nil {
		failTransport(method+" "+path, err, 1)
	}
	return r
}

// Get sends GET path.
func (f *Framework) Get(path string, opts ...Option) *Response {
	return f.Do(http.MethodGet, path, nil, opts...)
}

// Post sends POST path with body.
func (f *Framework) Post(path string, body any, opts ...Option) *Response {
	return f.Do(http.MethodPost, path, body, opts...)
}

// Put sends PUT path with body.
func (f *Framework) Put(path string, body any, opts ...Option) *Response {
	return f.Do(http.MethodPut, path, body, opts...)
}

// Patch sends PATCH path with body and the given patch content type.
func (f *Framework) Patch(path, contentType string, body any, opts ...Option) *Response {
	return f.Do(http.MethodPatch, path, body, append([]Option{ContentType(contentType)}, opts...)...)
}

// Delete sends DELETE path (body optional, e.g. DeleteOptions).
func (f *Framework) Delete(path string, body any, opts ...Option) *Response {
	return f.Do(http.MethodDelete, path, body, opts...)
}

// Watch opens a watch stream on path (a collection URL) and closes it after the spec.
func (f *Framework) Watch(path string, opts ...Option) *Watch {
	req := Request{Path: path}
	for _, o := range opts {
		o(&req)
	}
	w, err := st().client.OpenWatch(f.Ctx(), req.Path, req.Query, req.Timeout)
	if err != nil {
		failTransport("watch "+path, err, 1)
	}
	ginkgo.DeferCleanup(w.Close)
	return w
}

// The assertion helpers below fail the spec with a verdict: one line in the
// requirement's terms naming what was expected, what came back and the
// request (verdict.go), followed by the response for detail.

// ExpectStatus asserts that r is a Status object with the given code and reason.
func ExpectStatus(r *Response, code int, reason string) {
	ginkgo.GinkgoHelper()
	if v := statusVerdict(r, code, reason); v != "" {
		fail(r, v, r.String())
	}
}

// ExpectGone asserts that r is a 410 Status whose reason is the document's
// "Gone" or kube-apiserver's "Expired" (catalogued as a deviation).
func ExpectGone(r *Response) {
	ginkgo.GinkgoHelper()
	reason := "Gone"
	if r.Str("reason") == "Expired" {
		reason = "Expired"
	}
	if v := statusVerdict(r, http.StatusGone, reason); v != "" {
		fail(r, v, r.String())
	}
}

// ExpectCode asserts that r answered one of codes.
func ExpectCode(r *Response, codes ...int) {
	ginkgo.GinkgoHelper()
	if v := codeVerdict(r, codes...); v != "" {
		fail(r, v, r.String())
	}
}

// ExpectWarning asserts that r carries a Warning header containing each of texts.
func ExpectWarning(r *Response, texts ...string) {
	ginkgo.GinkgoHelper()
	if v := warningVerdict(r, texts...); v != "" {
		fail(r, v, r.String())
	}
}

// ExpectWarnings asserts that r's Warning header texts are exactly want, in any order.
func ExpectWarnings(r *Response, want ...string) {
	ginkgo.GinkgoHelper()
	if v := warningsVerdict(r, want...); v != "" {
		fail(r, v, r.String())
	}
}

// ExpectNoWarning asserts that r carries no Warning header.
func ExpectNoWarning(r *Response) {
	ginkgo.GinkgoHelper()
	if got := r.Warnings(); len(got) > 0 {
		fail(r, fmt.Sprintf("expected no Warning header, got %q", got), r.String())
	}
}

// ExpectField asserts that the body's value at a gjson path is want (compared as text).
func ExpectField(r *Response, path, want string) {
	ginkgo.GinkgoHelper()
	if v := fieldVerdict(r, path, want); v != "" {
		fail(r, v, r.String())
	}
}

// Verify fails the spec with the verdict format/args unless ok; r (may be
// nil) is the response the verdict is about. Use it where no helper fits:
//
//	framework.Verify(r, !slices.Contains(names, late), "page 2 lists %s, created after page 1", late)
func Verify(r *Response, ok bool, format string, args ...any) {
	ginkgo.GinkgoHelper()
	if ok {
		return
	}
	detail := ""
	if r != nil {
		detail = r.String()
	}
	fail(r, fmt.Sprintf(format, args...), detail)
}

func randomSuffix(n int) string {
	b := make([]byte, (n+1)/2)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)[:n]
}

// sanitize makes s usable inside a DNS-1123 label.
func sanitize(s string) string {
	s = strings.ToLower(s)
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '-' {
			b.WriteRune(r)
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 20 {
		out = out[:20]
	}
	if out == "" {
		out = "x"
	}
	return out
}
