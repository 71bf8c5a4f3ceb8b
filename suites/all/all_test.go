package all_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/reports/result"
	_ "github.com/apiconform/apiconform/suites/all"
	"github.com/apiconform/apiconform/suites/framework"
	"github.com/apiconform/apiconform/suites/runner"
)

// TestSuites runs every spec against a target given by the environment:
//
//	APICONFORM_KUBECONFIG (+ APICONFORM_CONTEXT)   a kubeconfig
//	APICONFORM_SERVER + APICONFORM_TOKEN           a URL and bearer token
//	  (+ APICONFORM_INSECURE=1, APICONFORM_CA=file)
//	APICONFORM_AREAS, APICONFORM_REQUIREMENTS      comma-separated selection
//	APICONFORM_FOCUS                               a regexp on spec text
//
// Without a target it starts the embedded reference server (see refserver_test.go).
func TestSuites(t *testing.T) {
	target, stop, reason := targetFromEnv(t)
	if reason != "" {
		t.Skip(reason)
	}
	defer stop()
	cfg := runner.Config{
		Target:       target,
		Areas:        splitEnv("APICONFORM_AREAS"),
		Requirements: splitEnv("APICONFORM_REQUIREMENTS"),
		Timeout:      20 * time.Minute,
		Progress: func(p runner.Progress) {
			if p.Failed() {
				t.Logf("[%d/%d] FAIL %s", p.Done, p.Total, p.Spec.FullText())
			}
		},
	}
	if f := os.Getenv("APICONFORM_FOCUS"); f != "" {
		cfg.Focus = []string{f}
	}
	if os.Getenv("APICONFORM_VERBOSE") != "" {
		cfg.Output = os.Stdout
	}
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	report, err := runner.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	summarize(t, report)
}

func summarize(t *testing.T, report types.Report) {
	t.Helper()
	var passed, failed, skipped int
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		switch {
		case s.State == types.SpecStatePassed:
			passed++
			t.Logf("PASS %s %v", s.FullText(), framework.ReqIDs(s.Labels()))
		case s.State.Is(types.SpecStateFailureStates):
			failed++
			t.Errorf("FAIL %s %v\n%s\n%s", s.FullText(), framework.ReqIDs(s.Labels()), s.Failure.Message, s.Failure.Location)
			for _, e := range s.ReportEntries {
				if e.Name == result.ExchangesEntry {
					t.Logf("exchanges of %q:\n%s", s.FullText(), e.StringRepresentation())
				}
			}
		case s.State == types.SpecStateSkipped && s.Failure.Message != "":
			skipped++
			t.Logf("SKIP %s: %s", s.FullText(), s.Failure.Message)
		}
	}
	t.Logf("passed %d, failed %d, skipped %d", passed, failed, skipped)
	if !report.SuiteSucceeded && failed == 0 {
		t.Errorf("suite did not succeed: %s", strings.Join(report.SpecialSuiteFailureReasons, "; "))
	}
}

func splitEnv(key string) []string {
	var out []string
	for _, s := range strings.Split(os.Getenv(key), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func targetFromEnv(t *testing.T) (framework.Target, func(), string) {
	if target, ok := runner.TargetFromEnv(); ok {
		return target, func() {}, ""
	}
	target, stop, err := startReferenceServer(t)
	if err != nil {
		return framework.Target{}, nil, fmt.Sprintf("no APICONFORM_KUBECONFIG or APICONFORM_SERVER and %v", err)
	}
	return target, stop, ""
}
