package framework

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/reports/redact"
	"github.com/apiconform/apiconform/reports/redact/redacttest"
	"github.com/apiconform/apiconform/reports/result"
)

// fakeServer answers the discovery probes and a few test paths.
func fakeServer(t *testing.T, refServer bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(fakeMux(refServer))
	t.Cleanup(srv.Close)
	return srv
}

func fakeMux(refServer bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/version", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"major":"1","minor":"36","gitVersion":"v1.36.3"}`)
	})
	mux.HandleFunc("/apis", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"groups":[{"name":"apiextensions.k8s.io","versions":[{"groupVersion":"apiextensions.k8s.io/v1","version":"v1"}]}]}`)
	})
	mux.HandleFunc("/apis/apiextensions.k8s.io/v1", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"resources":[{"name":"customresourcedefinitions"}]}`)
	})
	mux.HandleFunc("/apiconform/admin", func(w http.ResponseWriter, r *http.Request) {
		if !refServer {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `{}`)
	})
	mux.HandleFunc("/apiconform/admin/compact", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		fmt.Fprint(w, `{"compactedRevision": 42}`)
	})
	mux.HandleFunc("/api/v1/namespaces", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "" {
			fmt.Fprint(w, `{"items":[]}`)
			return
		}
		// A watch list: one ADDED, then the initial-events-end bookmark, then hang until the client leaves.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n")
		fmt.Fprint(w, `{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7","annotations":{"k8s.io/initial-events-end":"true"}}}}`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Warning", `299 - "unknown field \"spec.foo\""`)
		w.Header().Add("Warning", `299 - "duplicate field \"data\""`)
		w.Header().Set("Set-Cookie", "session=abc")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, `{"method":%q,"token":"hunter2","ct":%q}`, r.Method, r.Header.Get("Content-Type"))
	})
	return mux
}

func TestConfigureDetectsCapabilities(t *testing.T) {
	tests := []struct {
		name      string
		refServer bool
	}{
		{"kube-like", false},
		{"reference server", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeServer(t, tt.refServer)
			if err := Configure(context.Background(), Target{Server: srv.URL, Token: "s3cret"}); err != nil {
				t.Fatal(err)
			}
			caps := Caps()
			if caps.GitVersion != "v1.36.3" || !caps.CRDs || !caps.WatchList || caps.Frobbers {
				t.Fatalf("caps = %+v", caps)
			}
			if caps.RefServer != tt.refServer {
				t.Fatalf("RefServer = %v, want %v", caps.RefServer, tt.refServer)
			}
			rev, err := Compact(context.Background())
			if tt.refServer {
				if err != nil || rev != 42 {
					t.Fatalf("Compact = %d, %v; want 42", rev, err)
				}
			} else if !errors.Is(err, ErrNotSupported) {
				t.Fatalf("Compact error = %v, want ErrNotSupported", err)
			}
		})
	}
}

func TestConfigureErrors(t *testing.T) {
	srv := fakeServer(t, false)
	dir := t.TempDir()
	badKubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(badKubeconfig, []byte("not: [yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		target Target
		want   string
	}{
		{"nothing", Target{}, "no kubeconfig and no server"},
		{"both", Target{Server: srv.URL, Kubeconfig: badKubeconfig}, "not both"},
		{"bad scheme", Target{Server: "127.0.0.1:1"}, "want an http:// or https:// URL"},
		{"bad kubeconfig", Target{Kubeconfig: badKubeconfig}, "kubeconfig"},
		{"wrong token", Target{Server: srv.URL, Token: "nope"}, "answered 401"},
		{"unreachable", Target{Server: "http://127.0.0.1:1", RequestTimeout: 2 * time.Second}, "unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Configure(context.Background(), tt.target)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// client-go sends kubeconfig credentials only over TLS, so this one is an HTTPS server.
func TestKubeconfigTarget(t *testing.T) {
	srv := httptest.NewTLSServer(fakeMux(false))
	defer srv.Close()
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, certificate-authority-data: %s}
users:
- name: u
  user: {token: s3cret}
- name: other
  user: {token: wrong}
contexts:
- name: good
  context: {cluster: c, user: u}
- name: bad
  context: {cluster: c, user: other}
current-context: bad
`, srv.URL, base64.StdEncoding.EncodeToString(caPEM))
	if err := os.WriteFile(kc, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Configure(context.Background(), Target{Kubeconfig: kc}); err == nil {
		t.Fatal("current-context uses the wrong token: want an error")
	}
	if err := Configure(context.Background(), Target{Kubeconfig: kc, Context: "good"}); err != nil {
		t.Fatalf("context good: %v", err)
	}
}

func TestDoRecordsAndRedacts(t *testing.T) {
	srv := fakeServer(t, false)
	if err := Configure(context.Background(), Target{Server: srv.URL, Token: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	c := DefaultClient()
	rec := c.startRecording()
	defer c.stopRecording()
	r, err := c.Do(context.Background(), Request{Method: "POST", Path: "/echo", Body: []byte(`{"password":"pw"}`),
		Header: http.Header{"Cookie": {"id=1"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Code != http.StatusTeapot || r.Str("method") != "POST" || r.Str("ct") != "application/json" {
		t.Fatalf("response = %s", r)
	}
	if got := r.Warnings(); len(got) != 2 || got[0] != `unknown field "spec.foo"` || got[1] != `duplicate field "data"` {
		t.Fatalf("warnings = %q", got)
	}
	if len(*rec) != 1 {
		t.Fatalf("recorded %d exchanges, want 1", len(*rec))
	}
	x := (*rec)[0]
	if x.Method != "POST" || x.URL != srv.URL+"/echo" || x.Status != http.StatusTeapot {
		t.Errorf("recorded %+v", x)
	}
	want := []result.Header{{Name: "Cookie", Value: redact.Mask}}
	if !slices.ContainsFunc(x.RequestHeaders, func(h result.Header) bool { return h == want[0] }) {
		t.Errorf("request headers %+v lack %+v", x.RequestHeaders, want[0])
	}
	if !slices.Contains(x.ResponseHeaders, result.Header{Name: "Warning", Value: `299 - "unknown field \"spec.foo\""`}) {
		t.Errorf("response headers %+v lack the warning", x.ResponseHeaders)
	}
	text := result.ExchangesEntryValue(*rec)
	for _, secret := range []string{"s3cret", "hunter2", "id=1", "session=abc", `"pw"`} {
		if strings.Contains(text, secret) {
			t.Errorf("recorded exchange leaks %q:\n%s", secret, text)
		}
	}
}

// TestRecordingRedactsEverySecret plants every kind of secret (redacttest) in
// every part of a request and of its answer (plain, watch, refused watch) and
// checks that the exchanges the framework records carry none of them.
func TestRecordingRedactsEverySecret(t *testing.T) {
	mux := fakeMux(false)
	leak := func(w http.ResponseWriter, code int) {
		w.Header().Set("Set-Cookie", "s=cookie-SECRET-0002")
		w.Header().Set("X-Leak", strings.ReplaceAll(redacttest.Leak, "\n", " "))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		fmt.Fprint(w, redacttest.SecretBody+redacttest.Leak)
	}
	mux.HandleFunc("/leak", func(w http.ResponseWriter, r *http.Request) { leak(w, http.StatusOK) })
	mux.HandleFunc("/leakwatch", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("refuse") != "" {
			leak(w, http.StatusGone)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type":"ADDED","object":{"metadata":{"name":"a"},"data":{"token":"kubeconfig-token-SECRET-0005","leak":%q}}}`+"\n", redacttest.Leak)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if err := Configure(context.Background(), Target{Server: srv.URL, Token: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	c := DefaultClient()
	rec := c.startRecording()
	defer c.stopRecording()
	hdr := http.Header{"Authorization": {"Bearer sk-bearer-SECRET-0001"}, "Cookie": {"session=cookie-SECRET-0002"},
		"Proxy-Authorization": {"Basic proxy-SECRET-0003"}, "X-Leak": {strings.ReplaceAll(redacttest.Leak, "\n", " ")}}
	q := url.Values{"access_token": {"kubeconfig-token-SECRET-0005"}}
	if _, err := c.Do(context.Background(), Request{Method: "POST", Path: "/leak", Query: q, Header: hdr, Body: []byte(redacttest.Leak)}); err != nil {
		t.Fatal(err)
	}
	for _, refuse := range []string{"", "yes"} {
		wq := url.Values{"refuse": {refuse}, "access_token": {"kubeconfig-token-SECRET-0005"}}
		w, err := c.OpenWatch(context.Background(), "/leakwatch", wq, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if refuse == "" {
			if _, err := w.Next(5 * time.Second); err != nil {
				t.Fatal(err)
			}
		}
		w.Close()
	}
	if len(*rec) != 3 {
		t.Fatalf("recorded %d exchanges, want 3", len(*rec))
	}
	text := result.ExchangesEntryValue(*rec)
	for _, s := range redacttest.Secrets {
		if strings.Contains(text, s) {
			t.Errorf("recorded exchanges contain %q:\n%s", s, text)
		}
	}
	if !strings.Contains(text, redact.Mask) || !strings.Contains(text, "watch stream, 1 events recorded") {
		t.Errorf("recording lost the masked fields or the watch events:\n%s", text)
	}
}

func TestDoDeadline(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	c := &Client{http: srv.Client(), base: srv.URL, requestTimeout: 50 * time.Millisecond}
	_, err := c.Do(context.Background(), Request{Path: "/slow"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a deadline error", err)
	}
}

func TestWatchReader(t *testing.T) {
	srv := fakeServer(t, false)
	if err := Configure(context.Background(), Target{Server: srv.URL, Token: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	w, err := DefaultClient().OpenWatch(context.Background(), "/api/v1/namespaces", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ev, err := w.Next(5 * time.Second)
	if err != nil || ev.Type != "ADDED" || ev.Object.Get("metadata.name").String() != "a" {
		t.Fatalf("first event = %+v, %v", ev, err)
	}
	ev, err = w.Next(5 * time.Second)
	if err != nil || ev.Type != "BOOKMARK" {
		t.Fatalf("second event = %+v, %v", ev, err)
	}
	if _, err := w.Next(20 * time.Millisecond); !errors.Is(err, ErrWatchTimeout) {
		t.Fatalf("third Next = %v, want ErrWatchTimeout", err)
	}
	w.Close()
	if _, err := w.Next(time.Second); err == nil {
		t.Fatal("Next after Close: want an error")
	}
}

func TestWatchNon200(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, `{"kind":"Status","code":410,"reason":"Expired"}`)
	}))
	defer srv.Close()
	c := &Client{http: srv.Client(), base: srv.URL, requestTimeout: time.Second, watchTimeout: time.Second}
	w, err := c.OpenWatch(context.Background(), "/x", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if w.Code != http.StatusGone || !strings.Contains(string(w.Body), "Expired") {
		t.Fatalf("watch = %d %s", w.Code, w.Body)
	}
	if _, err := w.Next(time.Second); !errors.Is(err, ErrWatchClosed) {
		t.Fatalf("Next = %v, want ErrWatchClosed", err)
	}
	w.Close()
}

func TestNamesAndLabels(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Field_Validation", "fieldvalidation"},
		{"--x--", "x"},
		{"", "x"},
		{"averyveryverylongareanamebeyondtwenty", "averyveryverylongare"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := Req("A-B", "C-D"); len(got) != 2 || got[0] != "req:A-B" || got[1] != "req:C-D" {
		t.Errorf("Req = %v", got)
	}
	if got := ReqIDs([]string{"area:x", "req:A-B", "slow"}); len(got) != 1 || got[0] != "A-B" {
		t.Errorf("ReqIDs = %v", got)
	}
	if a, b := randomSuffix(5), randomSuffix(5); len(a) != 5 || a == b {
		t.Errorf("randomSuffix gave %q and %q", a, b)
	}
}

func TestEncodeBody(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{nil, ""},
		{"raw {", "raw {"},
		{[]byte("bytes"), "bytes"},
		{map[string]int{"a": 1}, `{"a":1}`},
	}
	for _, tt := range tests {
		got, err := encodeBody(tt.in)
		if err != nil || string(got) != tt.want {
			t.Errorf("encodeBody(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := encodeBody(make(chan int)); err == nil {
		t.Error("encodeBody(chan): want an error")
	}
}

func TestTrimRedactsBeforeCutting(t *testing.T) {
	pad := strings.Repeat("x", 90)
	tests := []struct {
		name, in, secret, want string
	}{
		{"short", "token: abcdefgh", "abcdefgh", "token: [REDACTED]"},
		{"secret across the cut", pad + " Bearer abcdefghijklmnop", "abcdefgh", pad + " Bearer [R... (114 bytes)"},
		{"long, no secret", strings.Repeat("y", 150), "", strings.Repeat("y", 100) + "... (150 bytes)"},
	}
	for _, tt := range tests {
		got := trim([]byte(tt.in), 100)
		if got != tt.want || (tt.secret != "" && strings.Contains(got, tt.secret)) {
			t.Errorf("%s: trim = %q, want %q", tt.name, got, tt.want)
		}
	}
}
