package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

// TestRunUsageErrors covers the checks made before any spec runs.
func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*runOptions)
		want   string
	}{
		{"bad format", func(o *runOptions) { o.formats = []string{"xml"} }, `--format "xml"`},
		{"unknown focus", func(o *runOptions) { o.focus = []string{"nope"} }, `--focus "nope" is neither an area`},
		{"unknown skip", func(o *runOptions) { o.skip = []string{"NOPE-X"} }, `--skip "NOPE-X"`},
		{"bad level", func(o *runOptions) { o.level = "often" }, `--level "often"`},
		{"bad fail-on", func(o *runOptions) { o.failOn = "sometimes" }, `--fail-on "sometimes"`},
		{"bad parallel", func(o *runOptions) { o.parallel = 0 }, "--parallel must be at least 1"},
		{"both targets", func(o *runOptions) { o.target = targetFlags{kubeconfig: "kc", server: "http://127.0.0.1:1"} }, "not both"},
		{"context without kubeconfig", func(o *runOptions) { o.target = targetFlags{context: "x"} }, "--context needs --kubeconfig"},
		{"bad server URL", func(o *runOptions) { o.target = targetFlags{server: "127.0.0.1:1"} }, "want an http:// or https:// URL"},
		{"refused", func(o *runOptions) { o.target = targetFlags{server: "http://127.0.0.1:1"} }, "connection refused"},
		{"missing kubeconfig", func(o *runOptions) { o.target = targetFlags{kubeconfig: "/nonexistent/kubeconfig"} }, "/nonexistent/kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newRunOptions()
			tt.mutate(o)
			var out, errOut bytes.Buffer
			err := runRun(context.Background(), &out, &errOut, o)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a usage error containing %q", err, tt.want)
			}
		})
	}
}

func TestResolveSelection(t *testing.T) {
	sel, err := resolveSelection([]string{"apply", "PAGE-LIMIT"}, []string{"watch", "APPLY-FORCE"}, "may")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.areas, []string{"apply"}) || !slices.Equal(sel.requirements, []string{"PAGE-LIMIT"}) ||
		!slices.Equal(sel.skipAreas, []string{"watch"}) || !slices.Equal(sel.skipRequirements, []string{"APPLY-FORCE"}) {
		t.Fatalf("selection = %+v", sel)
	}
	must, err := resolveSelection(nil, nil, "must")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range must.only {
		if r, _ := catalog.ByID(id); r.Level != catalog.Must {
			t.Errorf("--level must selected %s at %s", id, r.Level)
		}
	}
	if len(must.only) == 0 || len(must.requirements) != 0 {
		t.Fatal("--level must selected nothing")
	}
	// A focused MAY requirement under --level must is an error, not a silent empty run.
	var may string
	for _, r := range catalog.All() {
		if r.Level == catalog.May {
			may = r.ID
			break
		}
	}
	if _, err := resolveSelection([]string{may}, nil, "must"); err == nil {
		t.Errorf("focusing the MAY requirement %s at --level must should fail", may)
	}
	// With an area focused too, the area remains (the focus is a union).
	if sel, err := resolveSelection([]string{may, "watch"}, nil, "must"); err != nil || len(sel.requirements) != 0 ||
		!slices.Equal(sel.areas, []string{"watch"}) {
		t.Errorf("focus %s,watch at --level must = %+v, %v", may, sel, err)
	}
}

// TestRunDryRunLists is the one test of this binary that runs the specs
// (Ginkgo runs once per process): a dry run lists the selection.
func TestRunDryRunLists(t *testing.T) {
	var out, errOut bytes.Buffer
	o := newRunOptions()
	o.dryRun, o.focus, o.skip = true, []string{"apply"}, []string{"APPLY-FORCE"}
	if err := runRun(context.Background(), &out, &errOut, o); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"APPLY-CONFLICT", "Server-Side Apply requires a fieldManager", "specs selected"} {
		if !strings.Contains(text, want) {
			t.Errorf("listing lacks %q:\n%s", want, text)
		}
	}
	for _, unwanted := range []string{"APPLY-FORCE", "DRYRUN-"} {
		if strings.Contains(text, unwanted) {
			t.Errorf("listing has %q:\n%s", unwanted, text)
		}
	}
}

func TestShareAreas(t *testing.T) {
	groups := shareAreas(catalog.KnownAreas, 3)
	if len(groups) != 3 {
		t.Fatalf("groups = %v", groups)
	}
	var all []string
	for _, g := range groups {
		if len(g) == 0 {
			t.Errorf("empty group in %v", groups)
		}
		all = append(all, g...)
	}
	slices.Sort(all)
	want := slices.Clone(catalog.KnownAreas)
	slices.Sort(want)
	if !slices.Equal(all, want) {
		t.Errorf("areas shared = %v, want each of %v once", all, want)
	}
	if got := shareAreas([]string{"apply"}, 4); len(got) != 1 {
		t.Errorf("one area shares into one group, got %v", got)
	}
}

// TestRunCarriesObservations runs two specs that record what they saw, in
// two worker processes, and checks that their records reach result.json
// and the Markdown and JUnit reports: the worker's result file and the
// merge must carry them as the in-process path does.
func TestRunCarriesObservations(t *testing.T) {
	out := t.TempDir()
	c := startRunChild(t, 2*time.Minute, "run", "-p", "2", "-q", "--out", out, "--format", "json,junit,md",
		"--focus", "PAGE-CONTINUE-EXPIRED-410,WATCH-BOOKMARK-OPTIONAL")
	code := c.wait(t)
	r, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range r.Specs {
		if s.Failure != nil {
			t.Errorf("%s: %s: %s", s.Name, s.Outcome, s.Failure.Message)
		}
	}
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	seen := map[string]string{}
	for _, s := range r.Specs {
		for _, o := range s.Observations {
			seen[o.Name] = o.Text
		}
	}
	for name, prefix := range map[string]string{"expired token": "410 ", "bookmarks": ""} {
		text, ok := seen[name]
		if !ok || !strings.HasPrefix(text, prefix) {
			t.Errorf("observation %q = %q (present %v), want text starting %q; all: %v", name, text, ok, prefix, seen)
		}
	}
	for file, want := range map[string]string{"report.md": "**expired token**: 410 ", "junit.xml": "<system-out>expired token: 410 "} {
		b, err := os.ReadFile(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %q", file, want)
		}
	}
}
