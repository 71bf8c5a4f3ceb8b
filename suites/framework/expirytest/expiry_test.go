// Package expirytest runs the specs that need history to expire against a
// target without a compaction hook that compacts on its own schedule, as
// kube-apiserver does: the reference server behind a proxy that hides
// /apiconform/admin, compacted by the test every compactEvery. Ginkgo runs
// once per process, so each run is a child process (this test binary
// re-executed) that writes what its specs did as JSON.
package expirytest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/reports/result"
	_ "github.com/apiconform/apiconform/suites/clients"
	"github.com/apiconform/apiconform/suites/framework"
	_ "github.com/apiconform/apiconform/suites/paging"
	_ "github.com/apiconform/apiconform/suites/resourceversion"
	"github.com/apiconform/apiconform/suites/runner"
)

const (
	envFault     = "APICONFORM_EXPIRYTEST_FAULT" // a fault name, or control
	envOut       = "APICONFORM_EXPIRYTEST_OUT"
	control      = "none"
	childTimeout = 2 * time.Minute
	compactEvery = time.Second
)

// The three specs that wait for compaction, and one that does not (it runs
// first, so the others' history is written before any spec of theirs).
var (
	waiting = []string{"PAGE-CONTINUE-EXPIRED-410", "RV-SEM-EXACT-GONE", "CLIENT-PAGER-410-FALLBACK"}
	reqs    = append([]string{"PAGE-LIMIT"}, waiting...)
)

// spec is how one selected spec ended, and whether its history was written
// before it started (the early preparation).
type spec struct {
	Reqs    []string `json:"reqs"`
	State   string   `json:"state"`
	Message string   `json:"message,omitempty"`
	Early   bool     `json:"early"`
}

func TestHooklessTarget(t *testing.T) {
	if os.Getenv(envFault) != "" {
		t.Skip("inside a child run")
	}
	for _, tc := range []struct {
		fault string
		// want is each waiting requirement's end: the fault's spec may only
		// skip (a hookless server that serves dropped history looks like one
		// that has not compacted yet: the documented allowance), all else passes.
		want map[string]string
	}{
		{fault: control},
		{fault: faults.ContinueIgnoresSnapshot, want: map[string]string{"PAGE-CONTINUE-EXPIRED-410": "skipped",
			"CLIENT-PAGER-410-FALLBACK": "skipped"}},
		{fault: faults.IgnoreRVMatchExact, want: map[string]string{"RV-SEM-EXACT-GONE": "skipped"}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			t.Parallel()
			for _, s := range runChild(t, tc.fault) {
				want := tc.want[s.Reqs[0]]
				if want == "" {
					want = "passed"
				}
				if s.State != want {
					t.Errorf("%v ended %s, want %s: %s", s.Reqs, s.State, want, s.Message)
				}
				if want == "skipped" && !strings.HasPrefix(s.Message, "allowance:") {
					t.Errorf("%v skipped without the documented allowance: %s", s.Reqs, s.Message)
				}
				if slices.Contains(waiting, s.Reqs[0]) && !s.Early {
					t.Errorf("%v: its history was not written when the process started", s.Reqs)
				}
			}
		})
	}
}

func runChild(t *testing.T, fault string) []spec {
	t.Helper()
	out := filepath.Join(t.TempDir(), "specs.json")
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestChild$", "-test.count=1", "-test.timeout="+childTimeout.String())
	cmd.Env = append(os.Environ(), envFault+"="+fault, envOut+"="+out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s: %v\n%s", fault, err, log.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("child %s wrote nothing: %v\n%s", fault, err, log.String())
	}
	var specs []spec
	if err := json.Unmarshal(data, &specs); err != nil {
		t.Fatal(err)
	}
	if len(specs) != len(reqs) {
		t.Fatalf("child %s ran %d specs, want %d: %+v", fault, len(specs), len(reqs), specs)
	}
	return specs
}

// TestChild is the child side; it runs only when started by runChild.
func TestChild(t *testing.T) {
	fault, out := os.Getenv(envFault), os.Getenv(envOut)
	if fault == "" || out == "" {
		t.Skip("runs only as a child of TestHooklessTarget")
	}
	var set faults.Set
	if fault != control {
		var err error
		if set, err = faults.Parse(fault); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	srv, err := refserver.StartEmbedded(ctx, func(c *refserver.Config) { c.Faults = set })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	base := srv.URL()
	if base == "" {
		base = srv.InsecureURL()
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/apiconform/admin") {
			http.NotFound(w, r) // no hook: the harness must wait for compaction
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	go compactPeriodically(ctx, base, srv.Token())

	report, err := runner.Run(ctx, runner.Config{Requirements: reqs, Timeout: childTimeout - 20*time.Second,
		Target: framework.Target{Server: front.URL, Token: srv.Token(), Name: "hookless", CompactionWait: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var specs []spec
	for _, sr := range report.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt || runner.NotSelected(sr) {
			continue
		}
		s := spec{Reqs: framework.ReqIDs(sr.Labels()), State: sr.State.String(), Message: sr.Failure.Message}
		for _, e := range sr.ReportEntries {
			s.Early = s.Early || (e.Name == result.ObservationEntryName("history") && strings.HasPrefix(e.StringRepresentation(), "written in namespace"))
		}
		specs = append(specs, s)
	}
	data, err := json.Marshal(specs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// compactPeriodically compacts the server behind the proxy every
// compactEvery until ctx ends, as kube-apiserver compacts etcd on its own.
func compactPeriodically(ctx context.Context, base, token string) {
	tick := time.NewTicker(compactEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/apiconform/admin/compact", strings.NewReader("{}"))
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
		} else if errors.Is(err, context.Canceled) {
			return
		}
	}
}
