package runner

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/suites/framework"
)

// TargetFromEnv reads a target from the environment:
//
//	APICONFORM_KUBECONFIG (+ APICONFORM_CONTEXT)
//	APICONFORM_SERVER + APICONFORM_TOKEN (+ APICONFORM_INSECURE=1, APICONFORM_CA=file)
//
// ok is false when neither is set.
func TargetFromEnv() (t framework.Target, ok bool) {
	if kc := os.Getenv("APICONFORM_KUBECONFIG"); kc != "" {
		return framework.Target{Kubeconfig: kc, Context: os.Getenv("APICONFORM_CONTEXT")}, true
	}
	if srv := os.Getenv("APICONFORM_SERVER"); srv != "" {
		return framework.Target{Server: srv, Token: os.Getenv("APICONFORM_TOKEN"),
			InsecureSkipTLSVerify: os.Getenv("APICONFORM_INSECURE") != "",
			CertificateAuthority:  os.Getenv("APICONFORM_CA")}, true
	}
	return framework.Target{}, false
}

// TestArea is the body of a suite package's own Go test: it runs the area's
// specs against the target from TargetFromEnv, or only enumerates them (a
// Ginkgo dry run) when no target is set, and fails t for every failed spec,
// every spec without a req: label of this area, and (without a focus) every
// requirement of the area that no spec covers and that is not untestable.
// APICONFORM_FOCUS narrows the specs; APICONFORM_VERBOSE=1 streams Ginkgo's output.
// Like Run, it can be called once per test binary.
func TestArea(t *testing.T, area string) {
	t.Helper()
	cfg := Config{Areas: []string{area}, Timeout: 20 * time.Minute}
	target, ok := TargetFromEnv()
	if ok {
		cfg.Target = target
	} else {
		cfg.DryRun = true
		t.Log("no APICONFORM_KUBECONFIG or APICONFORM_SERVER: enumerating specs only")
	}
	if f := os.Getenv("APICONFORM_FOCUS"); f != "" {
		cfg.Focus = []string{f}
	}
	if os.Getenv("APICONFORM_VERBOSE") != "" {
		cfg.Output, cfg.Verbose = os.Stdout, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	report, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	var passed, failed, skipped int
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || NotSelected(s) {
			continue
		}
		ids := framework.ReqIDs(s.Labels())
		if len(ids) == 0 {
			t.Errorf("spec %q has no req: label", s.FullText())
		}
		for _, id := range ids {
			r, ok := catalog.ByID(id)
			switch {
			case !ok:
				t.Errorf("spec %q names unknown requirement %s", s.FullText(), id)
			case r.Area != area:
				t.Errorf("spec %q names %s of area %s", s.FullText(), id, r.Area)
			default:
				covered[id] = true
			}
		}
		switch {
		case s.State.Is(types.SpecStateFailureStates):
			failed++
			t.Errorf("FAIL %s %v\n%s\n%s", s.FullText(), ids, s.Failure.Message, s.Failure.Location)
			for _, e := range s.ReportEntries {
				if e.Name == result.ExchangesEntry {
					t.Logf("exchanges of %q:\n%s", s.FullText(), e.StringRepresentation())
				}
			}
		case s.State == types.SpecStateSkipped:
			skipped++
			t.Logf("SKIP %s: %s", s.FullText(), s.Failure.Message)
		default:
			passed++
			if !cfg.DryRun {
				t.Logf("PASS %s %v", s.FullText(), ids)
			}
		}
	}
	if len(cfg.Focus) == 0 {
		for _, r := range catalog.All() {
			if r.Area == area && strings.TrimSpace(r.Untestable) == "" && !covered[r.ID] {
				t.Errorf("requirement %s has no spec", r.ID)
			}
		}
	}
	if !cfg.DryRun {
		t.Logf("%s: passed %d, failed %d, skipped %d", area, passed, failed, skipped)
	}
	if !report.SuiteSucceeded && failed == 0 && len(report.SpecialSuiteFailureReasons) > 0 {
		t.Errorf("run did not succeed: %s", strings.Join(report.SpecialSuiteFailureReasons, "; "))
	}
}
