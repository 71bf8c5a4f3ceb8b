package apiserver

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver/auth"
)

var testTokens = auth.Tokens{
	"user":  {Name: "alice", Groups: []string{auth.Authenticated}},
	"admin": {Name: "root", Groups: []string{auth.Masters, auth.Authenticated}},
}

func serve(h *Handler, token, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func check429(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	var st struct {
		Kind, Reason, Message string
		Code                  int
		Details               struct{ RetryAfterSeconds int }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	if st.Kind != "Status" || st.Reason != "TooManyRequests" || st.Code != 429 ||
		st.Message != "Too many requests, please try again later." || st.Details.RetryAfterSeconds != 1 {
		t.Errorf("429 Status = %+v", st)
	}
	if rec.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After = %q, want 1", rec.Header().Get("Retry-After"))
	}
}

// TestMaxRequestsInFlight: at the limit a request gets kube-apiserver's 429
// TooManyRequests with Retry-After, whoever sends it, unless it is from
// system:masters or a health probe; short requests and watch
// initialisation have separate pools, so neither starves the other.
func TestMaxRequestsInFlight(t *testing.T) {
	const list = "/api/v1/namespaces/default/configmaps"
	const watch = list + "?watch=1&timeoutSeconds=1"
	tests := []struct {
		name        string
		tokens      auth.Tokens
		fullShort   bool // the short-request pool is full
		fullWatches bool // the watch-initialisation pool is full
		token, path string
		want        int
	}{
		{"short request at the limit", testTokens, true, false, "user", list, 429},
		{"anonymous on an open server at the limit", nil, true, false, "", list, 429},
		{"anonymous watch on an open server at the limit", nil, false, true, "", watch, 429},
		{"admin is exempt", testTokens, true, true, "admin", list, 200},
		{"health probe is exempt", nil, true, true, "", "/readyz", 200},
		{"watch while short requests are at the limit", nil, true, false, "", watch, 200},
		{"short request while watches are at the limit", nil, false, true, "", list, 200},
		{"below the limit", nil, false, false, "", list, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, _ := testKinds(t)
			h := New(Config{Registry: reg, MaxRequestsInFlight: 1, Logf: t.Logf, Tokens: tt.tokens})
			if tt.fullShort {
				h.flow.short <- struct{}{}
			}
			if tt.fullWatches {
				h.flow.watchInit <- struct{}{}
			}
			rec := serve(h, tt.token, tt.path)
			if rec.Code != tt.want {
				t.Fatalf("GET %s: %d, want %d: %s", tt.path, rec.Code, tt.want, rec.Body)
			}
			if tt.want == 429 {
				check429(t, rec)
			}
			if tt.fullShort {
				<-h.flow.short
			}
			if tt.fullWatches {
				<-h.flow.watchInit
			}
			if n, m := len(h.flow.short), len(h.flow.watchInit); n != 0 || m != 0 {
				t.Fatalf("%d short and %d watch slots still taken after the request finished", n, m)
			}
		})
	}
}

// TestWatchReleasesInitSlot: a watch gives its slot back once its initial
// state is delivered, while it keeps running.
func TestWatchReleasesInitSlot(t *testing.T) {
	reg, _ := testKinds(t)
	h := New(Config{Registry: reg, MaxRequestsInFlight: 1, Logf: t.Logf})
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=30")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, "k8s.io/initial-events-end") {
		t.Fatalf("first event %q, %v; want the initial-events-end bookmark", line, err)
	}
	for i := 0; len(h.flow.watchInit) != 0; i++ {
		if i == 500 {
			t.Fatal("the watch still holds its initialisation slot")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rec := serve(h, "", "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1"); rec.Code != 200 {
		t.Fatalf("second watch: %d %s", rec.Code, rec.Body)
	}
}
