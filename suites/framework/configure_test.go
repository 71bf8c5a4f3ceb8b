package framework

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProbeWatchList: a capability is absent only when the target behaves as
// a server without it may; a claimed and broken one is a problem.
func TestProbeWatchList(t *testing.T) {
	const (
		added = `{"type":"ADDED","object":{"metadata":{"name":"default","resourceVersion":"3"}}}` + "\n"
		end   = `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
		plain = `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}` + "\n"
		stale = `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
		errEv = `{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError"}}` + "\n"
	)
	for _, tc := range []struct {
		name       string
		code       int
		stream     string
		supported  bool
		hasProblem bool
	}{
		{"watch list", 200, added + end, true, false},
		{"parameter refused", 422, `{"kind":"Status","message":"sendInitialEvents is forbidden"}`, false, false},
		{"parameter ignored: plain watch, periodic bookmark", 200, plain, false, false},
		{"parameter ignored: plain watch, nothing", 200, "", false, false},
		{"ERROR where the bookmark belongs", 200, added + errEv, false, true},
		{"bookmark without the annotation", 200, added + plain, false, true},
		{"bookmark older than asked", 200, added + stale, false, true},
		{"bookmark before the state", 200, end, false, true},
		{"refused without naming the parameter", 500, `{"kind":"Status","message":"boom"}`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Query().Get("watch") == "" {
					fmt.Fprint(w, `{"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"default"}}]}`)
					return
				}
				w.WriteHeader(tc.code)
				fmt.Fprint(w, tc.stream)
			}))
			defer srv.Close()
			c := &Client{http: srv.Client(), base: srv.URL, requestTimeout: 5e9, watchTimeout: 5e9}
			ok, problem := probeWatchList(context.Background(), c)
			if ok != tc.supported || (problem != "") != tc.hasProblem {
				t.Errorf("got supported=%v problem=%q, want supported=%v problem=%v", ok, problem, tc.supported, tc.hasProblem)
			}
		})
	}
}
