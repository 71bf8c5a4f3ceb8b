package loadgen

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver"
)

var smallPlan = Plan{Objects: 20, Concurrency: 4, PageSize: 7, ListRounds: 2, SelectorLists: 2,
	Watchers: 3, WatchEvents: 6, CustomObjects: 5, PhaseTimeout: time.Minute}

func bearer(token string, base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		return base.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func startCeiling(t testing.TB) (Target, *CeilingServer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := StartCeiling(ctx, "127.0.0.1:0", "ceiling-token")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM())
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return Target{Name: "ceiling", BaseURL: s.URL(), Client: &http.Client{Transport: bearer("ceiling-token", tr)}}, s
}

// startRef starts an embedded reference server for the test and returns
// the test's context and the server as a recording target.
func startRef(t *testing.T) (context.Context, Target) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	srv, err := refserver.StartEmbedded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return ctx, Target{Name: "refserver", BaseURL: srv.URL(), Client: &http.Client{Transport: bearer(srv.Token(), http.DefaultTransport)},
		Record: NewRecording()}
}

// TestRunAndReplay drives every phase against the reference server while
// recording, then against a ceiling that replays the recording: both must
// pass every check the load makes, and the ceiling must speak HTTP/2 as
// the reference server does over TLS.
func TestRunAndReplay(t *testing.T) {
	ctx, ref := startRef(t)
	rec := ref.Record
	var phases []string
	ref.OnPhase = func(p string) func() { phases = append(phases, p); return func() {} }
	res, err := Run(ctx, ref, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(phases, PhaseNames) {
		t.Fatalf("OnPhase saw %v, want %v", phases, PhaseNames)
	}
	checkResult(t, res, PhaseNames)
	if len(rec.Events) != 2 || rec.Answers[AnswerKey("crd-gone", "")].Status != http.StatusNotFound {
		t.Fatalf("recording: events %v, crd-gone %+v", len(rec.Events), rec.Answers["crd-gone"])
	}

	ceiling, _ := startCeiling(t)
	putAnswers(t, ctx, ceiling, rec)
	res, err = Run(ctx, ceiling, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, PhaseNames)
	if res.Proto != "HTTP/2.0" {
		t.Errorf("ceiling answered with %s, want HTTP/2.0", res.Proto)
	}

	// A subset of phases reports only those, with their setup run unseen.
	sub := smallPlan
	sub.Phases = []string{PhaseWatchSelector, PhaseCRGet}
	res, err = Run(ctx, ceiling, sub)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, sub.Phases)
}

func checkResult(t *testing.T, res Result, want []string) {
	t.Helper()
	var got []string
	for _, p := range res.Phases {
		got = append(got, p.Name)
		if p.Ops == 0 || p.OpsPerSec <= 0 || p.P99 < p.P50 {
			t.Errorf("%s: phase %+v", res.Target, p)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: phases %v, want %v", res.Target, got, want)
	}
}

func TestCeilingRefuses(t *testing.T) {
	ceiling, s := startCeiling(t)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.CAPEM())
	noToken := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, tc := range []struct {
		name   string
		client *http.Client
		op     string
		status int
		body   string
	}{
		{"no token", noToken, "get", http.StatusUnauthorized, "unauthorized"},
		{"no op", ceiling.Client, "", http.StatusBadRequest, "not a load request"},
		{"unrecorded op", ceiling.Client, "get", http.StatusInternalServerError, `no recorded answer for op "get"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, ceiling.BaseURL+"/api/v1/namespaces", nil)
			if tc.op != "" {
				req.Header.Set(OpHeader, tc.op)
			}
			resp, err := tc.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || !strings.Contains(string(body), tc.body) {
				t.Fatalf("got %d %q, want %d %q", resp.StatusCode, body, tc.status, tc.body)
			}
		})
	}
	if _, err := StartCeiling(context.Background(), "0.0.0.0:0", "t"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("non-loopback address: %v", err)
	}
}

func TestCountItems(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		cont string
		bad  bool
	}{
		{`{"metadata":{"continue":"abc"},"items":[{},{"a":1}]}`, 2, "abc", false},
		{`{"metadata":{},"items":[]}`, 0, "", false},
		{`{"metadata":{}}`, 0, "", false},
		{`{"items":{}}`, 0, "", true},
		{`not json`, 0, "", true},
	} {
		n, c, err := countItems([]byte(tc.in))
		if (err != nil) != tc.bad || n != tc.n || c != tc.cont {
			t.Errorf("countItems(%s) = %d, %q, %v", tc.in, n, c, err)
		}
	}
}

func TestEventReader(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		types        []string
		err          string
	}{
		{"newline separated", `{"type":"MODIFIED","object":{"kind":"ConfigMap"}}` + "\n" + `{"type":"BOOKMARK","object":{}}` + "\n",
			[]string{"MODIFIED", "BOOKMARK"}, ""},
		{"back to back, type last", `{"object":{"kind":"ConfigMap"},"type":"ADDED"}{"type":"ERROR","object":{}}`, []string{"ADDED", "ERROR"}, ""},
		{"braces and quotes in strings", `{"type":"MODIFIED","object":{"data":{"a":"}\"{[","b":"\\"}}}`, []string{"MODIFIED"}, ""},
		{"cut short", `{"type":"MODIFIED","object":{`, nil, "unexpected EOF"},
		{"not an object", `["MODIFIED"]`, nil, "where an event should start"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newEventReader(strings.NewReader(tc.stream))
			var types []string
			var err error
			for {
				var typ string
				if _, typ, err = r.next(); err != nil {
					break
				}
				types = append(types, typ)
			}
			if tc.err == "" && err != io.EOF || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if !slices.Equal(types, tc.types) {
				t.Fatalf("types = %v, want %v", types, tc.types)
			}
		})
	}
}

// BenchmarkCeiling is the transport's cost of one request: TLS, HTTP/2 and
// this client, the server answering stored bytes (an object, a page of 500).
func BenchmarkCeiling(b *testing.B) {
	ceiling, _ := startCeiling(b)
	rec := NewRecording()
	rec.Answers["get"] = Answer{Status: http.StatusOK, ContentType: "application/json", Body: configMap(1, payload)}
	rec.Answers["list-page"] = Answer{Status: http.StatusOK, ContentType: "application/json", Body: page500()}
	data, _ := json.Marshal(rec)
	put, _ := http.NewRequest(http.MethodPut, ceiling.BaseURL+CeilingAnswersPath, bytes.NewReader(data))
	resp, err := ceiling.Client.Do(put)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	r := &runner{t: ceiling, plan: smallPlan.WithDefaults(), ns: "bench"}
	for _, op := range []string{"get", "list-page"} {
		b.Run(op, func(b *testing.B) {
			b.SetBytes(int64(len(rec.Answers[op].Body)))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := r.do(context.Background(), req{op: op, method: http.MethodGet, path: r.itemPath(1)}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func page500() []byte {
	var page bytes.Buffer
	page.WriteString(`{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"token"},"items":[`)
	for i := 0; i < 500; i++ {
		if i > 0 {
			page.WriteString(",")
		}
		page.Write(configMap(i, payload))
	}
	page.WriteString("]}")
	return page.Bytes()
}

// BenchmarkEventReader is the client's cost per watch event.
func BenchmarkEventReader(b *testing.B) {
	ev := fmt.Sprintf(`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"cm-00000","namespace":"ac-load-0","resourceVersion":"12345","labels":{"load":"apiconform","shard":"0"}},"data":{"payload":%q}}}`+"\n", strings.Repeat("p", 600))
	stream := strings.Repeat(ev, 1000)
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		r := newEventReader(strings.NewReader(stream))
		for i := 0; i < 1000; i++ {
			if _, typ, err := r.next(); err != nil || typ != "MODIFIED" {
				b.Fatal(typ, err)
			}
		}
	}
}

// BenchmarkCountItems is the client's cost per page of 500.
func BenchmarkCountItems(b *testing.B) {
	data := page500()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n, _, err := countItems(data); err != nil || n != 500 {
			b.Fatal(n, err)
		}
	}
}
