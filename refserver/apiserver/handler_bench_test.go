package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver/stackstart"
)

// The handler benchmarks call ServeHTTP directly, without a network or a
// client decoding the answers, so their time and allocations are the HTTP
// layer's and the registry's alone: the server's share of what `apiconform
// bench` measures. The objects are those of loadgen's configmap phases.

func benchHandler(b *testing.B) *Handler {
	b.Helper()
	reg, _ := testKinds(b)
	h := New(Config{Registry: reg, Logf: b.Logf})
	if rec := benchDo(h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"bench"}}`, ""); rec.Code != 201 {
		b.Fatalf("namespace: %d %s", rec.Code, rec.Body)
	}
	if rec := benchDo(h, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", benchCRD, "application/json"); rec.Code != 201 {
		b.Fatalf("CRD: %d %s", rec.Code, rec.Body)
	}
	return h
}

// benchCRD is the bench load's CRD (loadgen), in a group of its own.
const benchCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"loads.bench.apiconform.io"},` +
	`"spec":{"group":"bench.apiconform.io","scope":"Namespaced","names":{"plural":"loads","singular":"load","kind":"Load","listKind":"LoadList"},` +
	`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object",` +
	`"properties":{"index":{"type":"integer"},"payload":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}}}]}}`

func benchCustomResource(i int) string {
	return fmt.Sprintf(`{"apiVersion":"bench.apiconform.io/v1","kind":"Load","metadata":{"name":"load-%05d","labels":{"shard":"%d"}},"spec":{"index":%d,"payload":%q}}`,
		i, i%10, i, benchPayload)
}

func benchDo(h *Handler, method, path, body, ct string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewBufferString(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func benchConfigMap(i int, payload string) string {
	return fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","labels":{"load":"apiconform","shard":"%d"}},"data":{"index":"%d","payload":%q}}`,
		i, i%10, i, payload)
}

const benchPayload = "0123456789abcdef0123456789abcdef"

func benchFill(b *testing.B, h *Handler, n int) {
	b.Helper()
	for i := range n {
		if rec := benchDo(h, "POST", "/api/v1/namespaces/bench/configmaps", benchConfigMap(i, benchPayload), "application/json"); rec.Code != 201 {
			b.Fatalf("create: %d %s", rec.Code, rec.Body)
		}
	}
}

func benchItem(i int) string { return fmt.Sprintf("/api/v1/namespaces/bench/configmaps/cm-%05d", i) }

// writeCase is one kind of request of the write benchmarks.
type writeCase struct {
	name string
	fill func(n int) int // how many objects exist first, for n ops
	// customFill, when set, is how many custom resources exist first.
	customFill func(n int) int
	do         func(h *Handler, i int) *httptest.ResponseRecorder
	want       int
}

// writeCases: one create, get, update, merge patch, server-side apply or
// delete of a configmap per op, on a collection of 1,000 (delete: of one
// object per op), and one create of a custom resource.
func writeCases() []writeCase {
	const objects = 1000
	none := func(int) int { return 0 }
	some := func(int) int { return objects }
	return []writeCase{
		{"create", none, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "POST", "/api/v1/namespaces/bench/configmaps", benchConfigMap(i, benchPayload), "application/json")
		}, 201},
		{"get", some, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "GET", benchItem(i%objects), "", "")
		}, 200},
		{"update", some, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "PUT", benchItem(i%objects), benchConfigMap(i%objects, fmt.Sprintf("updated-%d", i)), "application/json")
		}, 200},
		{"merge-patch", some, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "PATCH", benchItem(i%objects), fmt.Sprintf(`{"data":{"patched":"%d"}}`, i), MergePatch)
		}, 200},
		// read-modify-write is a controller's update through client-go:
		// the object as read (resourceVersion and managedFields too) with a
		// value changed; the GET is part of each op.
		{"read-modify-write", some, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			got := benchDo(h, "GET", benchItem(i%objects), "", "")
			body := bytes.Replace(got.Body.Bytes(), []byte(`"payload":"`), fmt.Appendf(nil, `"payload":"%d-`, i), 1)
			return benchDo(h, "PUT", benchItem(i%objects), string(body), "application/json")
		}, 200},
		// apply re-applies a new value each time (the typed path);
		// apply-first is each object's first apply, as the bench load's.
		{"apply", some, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d"},"data":{"applied":"%d"}}`, i%objects, i)
			return benchDo(h, "PATCH", benchItem(i%objects)+"?fieldManager=apiconform-load", body, ApplyPatch)
		}, 200},
		{"apply-first", func(n int) int { return n }, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d"},"data":{"applied":"%d"}}`, i, i)
			return benchDo(h, "PATCH", benchItem(i)+"?fieldManager=apiconform-load", body, ApplyPatch)
		}, 200},
		{"delete", func(n int) int { return n }, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "DELETE", benchItem(i), "", "")
		}, 200},
		// cr-create: a custom resource checked against its CRD's schema.
		{"cr-create", none, nil, func(h *Handler, i int) *httptest.ResponseRecorder {
			return benchDo(h, "POST", "/apis/bench.apiconform.io/v1/namespaces/bench/loads", benchCustomResource(i), "application/json")
		}, 201},
		// cr-update: its writer replaces it with a new spec (integers, and
		// a generation, which stored objects decode as float64s).
		{"cr-update", none, some, func(h *Handler, i int) *httptest.ResponseRecorder {
			body := fmt.Sprintf(`{"apiVersion":"bench.apiconform.io/v1","kind":"Load","metadata":{"name":"load-%05d","labels":{"shard":"%d"}},"spec":{"index":%d,"payload":%q}}`,
				i%objects, i%objects%10, i+objects, benchPayload)
			return benchDo(h, "PUT", fmt.Sprintf("/apis/bench.apiconform.io/v1/namespaces/bench/loads/load-%05d", i%objects), body, "application/json")
		}, 200},
	}
}

// BenchmarkHandlerWrites runs writeCases on the benchmark's goroutine.
func BenchmarkHandlerWrites(b *testing.B) { benchWrites(b, false) }

// BenchmarkHandlerWritesFresh runs each request on a goroutine of its own,
// as net/http does, so its figures include growing that goroutine's stack.
func BenchmarkHandlerWritesFresh(b *testing.B) { benchWrites(b, true) }

// BenchmarkHandlerWritesFreshKept is BenchmarkHandlerWritesFresh with the
// stack ballast `apiconform serve` keeps (package stackstart): the
// goroutines start with the stack a write needs instead of growing it.
func BenchmarkHandlerWritesFreshKept(b *testing.B) {
	k := stackstart.Keep()
	defer k.Stop()
	for range 5 { // the Keeper acts after collections
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	benchWrites(b, true)
}

func benchWrites(b *testing.B, fresh bool) {
	for _, bc := range writeCases() {
		b.Run(bc.name, func(b *testing.B) {
			h := benchHandler(b)
			benchFill(b, h, bc.fill(b.N))
			if bc.customFill != nil {
				for i := range bc.customFill(b.N) {
					if rec := benchDo(h, "POST", "/apis/bench.apiconform.io/v1/namespaces/bench/loads", benchCustomResource(i), "application/json"); rec.Code != 201 {
						b.Fatalf("create: %d %s", rec.Code, rec.Body)
					}
				}
			}
			done := make(chan *httptest.ResponseRecorder)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := processCPU()
			for i := range b.N {
				var rec *httptest.ResponseRecorder
				if fresh {
					go func() { done <- bc.do(h, i) }()
					rec = <-done
				} else {
					rec = bc.do(h, i)
				}
				if rec.Code != bc.want {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
			// CPU time, the process's (GC included): on a shared machine
			// it moves less than the time per op.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkHandlerLists: a page of 500 of 1,000 configmaps (pre-encoded
// items), and a list by a label selector that matches a tenth of them.
func BenchmarkHandlerLists(b *testing.B) {
	h := benchHandler(b)
	benchFill(b, h, 1000)
	for _, bc := range []struct{ name, path string }{
		{"page500", "/api/v1/namespaces/bench/configmaps?limit=500"},
		{"selector-tenth", "/api/v1/namespaces/bench/configmaps?labelSelector=shard%3D3"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if rec := benchDo(h, "GET", bc.path, "", ""); rec.Code != 200 {
					b.Fatalf("%d %s", rec.Code, rec.Body)
				}
			}
		})
	}
}

// frameCounter is a watch's ResponseWriter that counts the frames (lines)
// written and says when it has seen want of them.
type frameCounter struct {
	header http.Header
	mu     sync.Mutex
	frames int
	want   int
	done   chan struct{}
}

func (c *frameCounter) Header() http.Header { return c.header }
func (c *frameCounter) WriteHeader(int)     {}
func (c *frameCounter) Flush()              {}
func (c *frameCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.frames += bytes.Count(p, []byte{'\n'})
	if c.frames >= c.want {
		c.finishLocked()
	}
	return len(p), nil
}

// fanoutLag is how many events the fan-out benchmark's writer may be ahead.
const fanoutLag = 200

// awaitFrames waits until n frames have arrived or the watch has ended.
func (c *frameCounter) awaitFrames(n int) {
	for {
		c.mu.Lock()
		frames, ended := c.frames, c.done == nil
		c.mu.Unlock()
		if frames >= n || ended {
			return
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// finish says the watch has ended, so a watcher the server dropped fails the
// benchmark instead of hanging it.
func (c *frameCounter) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finishLocked()
}

func (c *frameCounter) finishLocked() {
	if c.done != nil {
		close(c.done)
		c.done = nil
	}
}

// BenchmarkHandlerWatchFanout: 100 watches of one configmap (a field
// selector on its name, as loadgen's watch-fanout phase); each op is one
// merge patch that all 100 watchers receive.
func BenchmarkHandlerWatchFanout(b *testing.B) {
	const watchers = 100
	h := benchHandler(b)
	benchFill(b, h, 1)
	var list struct {
		Metadata struct{ ResourceVersion string }
	}
	if err := json.Unmarshal(benchDo(h, "GET", "/api/v1/namespaces/bench/configmaps", "", "").Body.Bytes(), &list); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	counters := make([]*frameCounter, watchers)
	var ended sync.WaitGroup
	for w := range counters {
		c := &frameCounter{header: http.Header{}, want: b.N, done: make(chan struct{})}
		counters[w] = c
		req := httptest.NewRequest("GET", "/api/v1/namespaces/bench/configmaps?watch=1&fieldSelector=metadata.name%3Dcm-00000&resourceVersion="+list.Metadata.ResourceVersion, nil).WithContext(ctx)
		ended.Add(1)
		go func() { defer ended.Done(); defer c.finish(); h.ServeHTTP(c, req) }()
	}
	// A write made before a watch has started still reaches it: it watches from list's resourceVersion.
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if rec := benchDo(h, "PATCH", benchItem(0), fmt.Sprintf(`{"data":{"seq":"%d"}}`, i), MergePatch); rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		// Writes never run further ahead of the watchers than half a watch
		// buffer, as a client waiting for its events would: a faster writer
		// measures the server ending too-slow watchers instead of fan-out.
		if i%fanoutLag == fanoutLag-1 {
			for _, c := range counters {
				c.awaitFrames(i + 1 - fanoutLag)
			}
		}
	}
	for _, c := range counters {
		c.mu.Lock()
		done := c.done
		c.mu.Unlock()
		if done != nil {
			<-done
		}
	}
	b.StopTimer()
	for w, c := range counters {
		c.mu.Lock()
		frames := c.frames
		c.mu.Unlock()
		if frames < b.N {
			b.Fatalf("watcher %d ended after %d of %d events", w, frames, b.N)
		}
	}
	cancel()
	ended.Wait()
}
