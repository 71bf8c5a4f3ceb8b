package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/spec/catalog"
	_ "github.com/apiconform/apiconform/suites/all"
	"github.com/apiconform/apiconform/suites/runner"
)

// TestCoverage enumerates every spec with a Ginkgo dry run (no target needed)
// and checks the two directions of the catalogue link:
//   - every spec carries an area label and at least one req: label, each
//     naming an existing requirement of that area;
//   - every requirement of an area whose suite folder exists is exercised by
//     at least one spec or explains why it is untestable.
//
// It is the only runner.Run of this test binary (RunSpecs runs once per process).
func TestCoverage(t *testing.T) {
	var progressCalls int
	report, err := runner.Run(context.Background(), runner.Config{
		DryRun:   true,
		Progress: func(runner.Progress) { progressCalls++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !report.SuiteSucceeded {
		t.Fatalf("dry run failed: %v", report.SpecialSuiteFailureReasons)
	}

	covered := map[string]int{}
	specs := 0
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt {
			continue
		}
		specs++
		areas, ids := splitLabels(s.Labels())
		if len(areas) != 1 {
			t.Errorf("spec %q: want exactly one area: label, have %v", s.FullText(), areas)
		}
		if len(ids) == 0 {
			t.Errorf("spec %q (%s): no req: label", s.FullText(), s.LeafNodeLocation)
		}
		for _, id := range ids {
			req, ok := catalog.ByID(id)
			if !ok {
				t.Errorf("spec %q: label req:%s names no catalogue requirement", s.FullText(), id)
				continue
			}
			if len(areas) == 1 && req.Area != areas[0] {
				t.Errorf("spec %q: requirement %s belongs to area %s, spec is in area %s", s.FullText(), id, req.Area, areas[0])
			}
			covered[id]++
		}
	}
	if specs == 0 {
		t.Fatal("the dry run found no specs")
	}
	if progressCalls != specs {
		t.Errorf("progress callback ran %d times for %d specs", progressCalls, specs)
	}

	suiteDirs := existingSuites(t)
	var missing []string
	for _, req := range catalog.All() {
		if !suiteDirs[req.Area] {
			continue // no suite folder for this area yet
		}
		if covered[req.ID] == 0 && strings.TrimSpace(req.Untestable) == "" {
			missing = append(missing, req.Area+"/"+req.ID)
		}
		if covered[req.ID] > 0 && req.Untestable != "" {
			t.Errorf("requirement %s is marked untestable but spec labels exercise it", req.ID)
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("requirement %s: no spec carries its label and it has no untestable reason", m)
	}
	t.Logf("%d specs cover %d requirements", specs, len(covered))
}

func splitLabels(labels []string) (areas, ids []string) {
	for _, l := range labels {
		if a, ok := strings.CutPrefix(l, "area:"); ok {
			areas = append(areas, a)
		}
		if id, ok := catalog.IDFromLabel(l); ok {
			ids = append(ids, id)
		}
	}
	return areas, ids
}

// existingSuites lists the catalogue areas that have a suite folder with Go
// code (not only tests) next to this package; each must also be imported by suites/all.
func existingSuites(t *testing.T) map[string]bool {
	t.Helper()
	allSrc, err := os.ReadFile(filepath.Join("..", "all", "all.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, area := range catalog.KnownAreas {
		files, _ := filepath.Glob(filepath.Join("..", area, "*.go"))
		code := false
		for _, f := range files {
			code = code || !strings.HasSuffix(f, "_test.go")
		}
		if !code {
			continue
		}
		out[area] = true
		if !strings.Contains(string(allSrc), `"github.com/apiconform/apiconform/suites/`+area+`"`) {
			t.Errorf("suites/%s exists but suites/all does not import it", area)
		}
	}
	return out
}
