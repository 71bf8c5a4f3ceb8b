package resourceversion_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/suites/framework"
	_ "github.com/apiconform/apiconform/suites/resourceversion"
	"github.com/apiconform/apiconform/suites/runner"
)

const area = "resourceversion"

// TestSpecs runs this area's specs against APICONFORM_KUBECONFIG when set
// (APICONFORM_FOCUS narrows them), and otherwise enumerates them (dry run).
// Either way every spec must name catalogue requirements of this area, and
// every requirement of the area must have a spec.
func TestSpecs(t *testing.T) {
	cfg := runner.Config{Areas: []string{area}, Timeout: 15 * time.Minute}
	if kc := os.Getenv("APICONFORM_KUBECONFIG"); kc != "" {
		cfg.Target = framework.Target{Kubeconfig: kc}
	} else {
		cfg.DryRun = true
	}
	if f := os.Getenv("APICONFORM_FOCUS"); f != "" {
		cfg.Focus = []string{f}
	}
	if os.Getenv("APICONFORM_VERBOSE") != "" {
		cfg.Output, cfg.Verbose = os.Stdout, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	report, err := runner.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		ids := framework.ReqIDs(s.Labels())
		if len(ids) == 0 {
			t.Errorf("spec %q has no req: label", s.FullText())
		}
		for _, id := range ids {
			r, ok := catalog.ByID(id)
			if !ok {
				t.Errorf("spec %q names unknown requirement %s", s.FullText(), id)
				continue
			}
			if r.Area != area {
				t.Errorf("spec %q names %s of area %s", s.FullText(), id, r.Area)
			}
			covered[id] = true
		}
		switch {
		case s.State.Is(types.SpecStateFailureStates):
			t.Errorf("FAIL %s %v\n%s\n%s", s.FullText(), ids, s.Failure.Message, s.Failure.Location)
			for _, e := range s.ReportEntries {
				if e.Name == framework.ExchangesEntryName {
					t.Logf("exchanges:\n%s", e.StringRepresentation())
				}
			}
		case s.State == types.SpecStateSkipped && s.Failure.Message != "":
			t.Logf("SKIP %s: %s", s.FullText(), s.Failure.Message)
		case s.State == types.SpecStatePassed && !cfg.DryRun:
			t.Logf("PASS %s %v", s.FullText(), ids)
		}
		for _, e := range s.ReportEntries {
			if e.Name != framework.ExchangesEntryName {
				t.Logf("  %s: %s", e.Name, e.StringRepresentation())
			}
		}
	}
	if len(cfg.Focus) == 0 {
		for _, r := range catalog.All() {
			if r.Area == area && r.Untestable == "" && !covered[r.ID] {
				t.Errorf("requirement %s has no spec", r.ID)
			}
		}
	}
}
