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
	ginkgo.BeforeEach(func() {
		s := st()
		if s.ctx.Err() != nil {
			ginkgo.Skip("run cancelled: " + s.ctx.Err().Error())
		}
		f.ctx = s.ctx
		f.counter = 0
		rec := s.client.startRecording()
		ginkgo.DeferCleanup(func() {
			s.client.stopRecording()
			if ginkgo.CurrentSpecReport().Failed() && len(*rec) > 0 {
				ginkgo.AddReportEntry(result.ExchangesEntry, result.ExchangesEntryValue(*rec), ginkgo.ReportEntryVisibilityFailureOrVerbose)
			}
		})
		f.Namespace = "ac-" + sanitize(area) + "-" + randomSuffix(5)
		r := f.Post("/api/v1/namespaces", map[string]any{
			"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": f.Namespace, "labels": map[string]string{"apiconform.test/area": sanitize(area)}},
		})
		gomega.Expect(r.Code).To(gomega.Equal(http.StatusCreated), "create namespace: %s", r)
		ns := f.Namespace
		ginkgo.DeferCleanup(func() {
			// Best effort: the namespace takes the spec's objects with it.
			// Use a fresh context so cleanup runs even after cancellation.
			ctx, cancel := context.WithTimeout(context.Background(), s.client.requestTimeout)
			defer cancel()
			_, _ = s.client.Do(ctx, Request{Method: "DELETE", Path: "/api/v1/namespaces/" + ns})
		})
	})
	return f
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

// Do sends a request; a transport error fails the spec.
func (f *Framework) Do(method, path string, body any, opts ...Option) *Response {
	data, err := encodeBody(body)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	req := Request{Method: method, Path: path, Body: data}
	for _, o := range opts {
		o(&req)
	}
	r, err := st().client.Do(f.Ctx(), req)
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred(), "%s %s", method, path)
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
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred(), "watch %s", path)
	ginkgo.DeferCleanup(w.Close)
	return w
}

// ExpectStatus asserts that r is a Status object with the given code and reason.
func ExpectStatus(r *Response, code int, reason string) {
	gomega.ExpectWithOffset(1, r.Code).To(gomega.Equal(code), "%s", r)
	gomega.ExpectWithOffset(1, r.Str("kind")).To(gomega.Equal("Status"), "%s", r)
	gomega.ExpectWithOffset(1, r.Str("apiVersion")).To(gomega.Equal("v1"), "%s", r)
	gomega.ExpectWithOffset(1, r.Str("status")).To(gomega.Equal("Failure"), "%s", r)
	gomega.ExpectWithOffset(1, r.Int("code")).To(gomega.BeEquivalentTo(code), "%s", r)
	gomega.ExpectWithOffset(1, r.Str("reason")).To(gomega.Equal(reason), "%s", r)
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
