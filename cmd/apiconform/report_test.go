package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/reports/sample"
)

func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return -1
}

func TestRunReport(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref.json")
	kube := filepath.Join(dir, "kube.json")
	if err := result.WriteFile(ref, sample.RefServer()); err != nil {
		t.Fatal(err)
	}
	if err := result.WriteFile(kube, sample.KubeAPIServer()); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.json")
	future := filepath.Join(dir, "future.json")
	os.WriteFile(garbage, []byte("{not json"), 0o644)
	os.WriteFile(future, []byte(`{"schemaVersion":"apiconform.io/result/v2"}`), 0o644)

	cases := []struct {
		name     string
		args     []string
		opts     reportOptions
		wantCode int
		wantErr  string
		contains []string // in stdout, or in the --out file
	}{
		{name: "terminal single", args: []string{ref}, opts: reportOptions{format: "terminal"},
			contains: []string{"MUST conformance", "refserver", "Failures (1)"}},
		{name: "md compare", args: []string{ref, kube}, opts: reportOptions{format: "md"},
			contains: []string{"## Changes against refserver", "🔻 **regression**", "| refserver | kube-apiserver |"}},
		{name: "html to file", args: []string{ref, kube}, opts: reportOptions{format: "html", out: filepath.Join(dir, "m.html")},
			contains: []string{"<!DOCTYPE html>", "kube-apiserver"}},
		{name: "terminal verbose", args: []string{ref}, opts: reportOptions{format: "terminal", verbose: true},
			contains: []string{"decisive exchange:", "setup: POST /api/v1/namespaces → 201", "RV-GET-UNSET-MOST-RECENT"}},
		{name: "summary", args: []string{ref}, opts: reportOptions{format: "summary"},
			contains: []string{"## apiconform: ❌ refserver — 1 failed", "`PAGE-CONTINUE-CONSISTENT` — page 2 lists p-7", "Full report: `" + ref + "`"}},
		{name: "junit", args: []string{ref}, opts: reportOptions{format: "junit"}, contains: []string{"<testsuites", `message="PAGE-CONTINUE-CONSISTENT: page 2 lists p-7`}},
		// The real catalogue's map: the sample's requirement IDs are not in it,
		// so every covered section is outside this run.
		{name: "md coverage", args: []string{ref}, opts: reportOptions{format: "md"},
			contains: []string{"## Documentation coverage", "| Document | Sections | Covered | Static | Untestable | Gap | Covered sections in this run |",
				"### <a id=\"coverage-000\"></a>Kubernetes API Concepts", "ResourceVersion 相关参数<br><sub>= resourceVersion parameters in query strings", "⚪ not in this run"}},
		{name: "summary coverage", args: []string{ref}, opts: reportOptions{format: "summary"},
			contains: []string{"Documentation coverage: ", "covered sections in this run: "}},
		{name: "json coverage", args: []string{ref}, opts: reportOptions{format: "json"},
			contains: []string{`"schemaVersion": "apiconform.io/result/v1.3"`, `"coverage": {`, `"outcome": "not-in-run"`}},
		{name: "terminal coverage", args: []string{ref}, opts: reportOptions{format: "terminal"},
			contains: []string{"Documentation coverage", "000 Kubernetes API Concepts", "004 Changing the API (Chinese)"}},
		{name: "json compare", args: []string{ref, kube}, opts: reportOptions{format: "json"}, contains: []string{`"schema": "apiconform.io/matrix/v1"`}},
		{name: "regression gate", args: []string{ref, kube}, opts: reportOptions{format: "md", failOnRegression: true},
			wantCode: exitFailed, wantErr: "1 regression(s) against refserver"},
		{name: "no regression", args: []string{kube, kube}, opts: reportOptions{format: "md", failOnRegression: true}},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.json")}, opts: reportOptions{format: "md"},
			wantCode: exitUsage, wantErr: "no such file"},
		{name: "garbage", args: []string{garbage}, opts: reportOptions{format: "md"}, wantCode: exitUsage, wantErr: "not an apiconform result"},
		{name: "future schema", args: []string{ref, future}, opts: reportOptions{format: "md"}, wantCode: exitUsage, wantErr: "not supported"},
		{name: "bad format", args: []string{ref}, opts: reportOptions{format: "pdf"}, wantCode: exitUsage, wantErr: "--format"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := runReport(&out, tc.args, &tc.opts)
			if code := exitCode(err); code != tc.wantCode {
				t.Fatalf("exit %d (%v), want %d", code, err, tc.wantCode)
			}
			if tc.wantErr != "" {
				if !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %q, want one line containing %q", err, tc.wantErr)
				}
			}
			text := out.String()
			if tc.opts.out != "" {
				b, err := os.ReadFile(tc.opts.out)
				if err != nil {
					t.Fatal(err)
				}
				text = string(b)
			}
			for _, c := range tc.contains {
				if !strings.Contains(text, c) {
					t.Errorf("output lacks %q", c)
				}
			}
		})
	}
}

// run writes out/summary.md naming the full reports and appends the same
// text to $GITHUB_STEP_SUMMARY, after what is already there.
func TestWriteSummary(t *testing.T) {
	dir := t.TempDir()
	step := filepath.Join(dir, "step-summary.md")
	if err := os.WriteFile(step, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", step)
	rep := reports.Build(sample.Catalogue(), sample.RefServer())
	out := filepath.Join(dir, "out")
	written, err := writeSummary(out, []string{filepath.Join(out, "report.html")}, rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 2 || written[1] != filepath.Join(out, "summary.md") {
		t.Fatalf("written = %v", written)
	}
	sum, err := os.ReadFile(written[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "Full report: `"+filepath.Join(out, "report.html")+"`") || !strings.Contains(string(sum), "PAGE-CONTINUE-CONSISTENT") {
		t.Errorf("summary.md:\n%s", sum)
	}
	got, err := os.ReadFile(step)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "earlier step\n"+string(sum)+"\n" {
		t.Errorf("$GITHUB_STEP_SUMMARY is\n%s", got)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(dir, "no", "such", "dir", "f"))
	if _, err := writeSummary("", nil, rep); err == nil || !strings.Contains(err.Error(), "GITHUB_STEP_SUMMARY") {
		t.Errorf("unwritable GITHUB_STEP_SUMMARY: %v", err)
	}
}
