package sample_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/render"
	"github.com/apiconform/apiconform/reports/result"
	_ "github.com/apiconform/apiconform/suites/all"
	"github.com/apiconform/apiconform/suites/framework"
	"github.com/apiconform/apiconform/suites/runner"
)

// deviations are the reference server's fault switches the reader
// met: three deviations, about fifteen failed specs.
var deviations = []string{faults.NoWarningHeader, faults.DryRunPersists, faults.IgnoreRVMatchExact}

// TestFailingRunReports runs every suite against an embedded reference
// server with three deviations switched on and checks that each format
// stays readable: a one-line verdict naming the requirement for every
// failure, the decisive exchange marked, the terminal under 100 lines and
// the summary under 60 KB. With APICONFORM_SAMPLE_OUT set it also writes
// every format there (the README's examples come from it).
//
// It is the only runner.Run of this test binary (RunSpecs runs once per process).
func TestFailingRunReports(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every suite against the reference server")
	}
	set, err := faults.Parse(deviations...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	srv, err := refserver.StartEmbedded(ctx, func(c *refserver.Config) { c.Faults = set })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	url := srv.URL()
	if url == "" {
		url = srv.InsecureURL()
	}
	report, err := runner.Run(ctx, runner.Config{
		Target:  framework.Target{Server: url, Token: srv.Token(), Name: "refserver+3-deviations"},
		Timeout: 3 * time.Minute,
		// The clients area runs kubectl and client machinery: not what this test is about, and environment-dependent.
		SkipAreas: []string{"clients"},
	})
	if err != nil {
		t.Fatal(err)
	}
	res := result.FromGinkgo(report, result.Target{Name: "refserver+3-deviations", Server: url, Version: framework.Caps().GitVersion,
		Capabilities: framework.Caps().CapabilityMap()})
	c := res.Counts()
	t.Logf("%d specs: %d passed, %d failed, %d error, %d skipped", c.Total(), c.Passed, c.Failed, c.Errors, c.Skipped)
	if c.Failed < 10 {
		t.Fatalf("only %d failed specs; the three deviations should fail about fifteen", c.Failed)
	}

	for _, s := range res.Specs {
		if s.Outcome != result.Failed {
			continue
		}
		if s.Verdict == "" || strings.Contains(s.Verdict, "\n") {
			t.Errorf("%s: verdict %q is not one line", s.Name, s.Verdict)
		}
		decisive := 0
		for _, x := range s.Exchanges {
			if x.Role == result.Decisive {
				decisive++
			}
		}
		if len(s.Exchanges) > 0 && decisive != 1 {
			t.Errorf("%s: %d decisive exchanges among %d", s.Name, decisive, len(s.Exchanges))
		}
		if len(s.Exchanges) > 0 && s.Exchanges[0].Role != result.Setup {
			t.Errorf("%s: the first exchange (the spec's namespace) is %q, want setup", s.Name, s.Exchanges[0].Role)
		}
	}

	rep := reports.Build(reports.FromCatalog(), res)
	out := map[string][]byte{}
	for _, f := range render.Formats() {
		var buf bytes.Buffer
		if err := render.Render(&buf, f, rep); err != nil {
			t.Fatalf("render %s: %v", f, err)
		}
		out[string(f)] = buf.Bytes()
	}
	var verbose bytes.Buffer
	if err := render.WriteTerminalWith(&verbose, rep, render.TerminalOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	out["verbose"] = verbose.Bytes()
	for _, name := range []string{"terminal", "verbose", "summary", "md", "junit", "html", "json"} {
		t.Logf("%-8s %7d bytes %5d lines", name, len(out[name]), bytes.Count(out[name], []byte("\n")))
	}
	if n := bytes.Count(out["terminal"], []byte("\n")); n >= 100 {
		t.Errorf("terminal output has %d lines for %d failures, want under 100", n, c.Failed)
	}
	if n := len(out["summary"]); n >= render.MaxSummaryBytes {
		t.Errorf("summary is %d bytes, want under %d", n, render.MaxSummaryBytes)
	}
	var doc struct {
		Cases []struct {
			Name    string `xml:"name,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
			} `xml:"failure"`
		} `xml:"testsuite>testcase"`
	}
	if err := xml.Unmarshal(out["junit"], &doc); err != nil {
		t.Fatal(err)
	}
	failures := 0
	for _, tc := range doc.Cases {
		if tc.Failure == nil {
			continue
		}
		failures++
		id, _, _ := strings.Cut(tc.Name, ":")
		if m := tc.Failure.Message; strings.Contains(m, "\n") || !strings.HasPrefix(m, id+": ") || len(m) <= len(id)+2 {
			t.Errorf("testcase %q: message %q is not a one-line verdict naming %s", tc.Name, m, id)
		}
	}
	if failures != c.Failed {
		t.Errorf("%d JUnit failures, want %d", failures, c.Failed)
	}

	if dir := os.Getenv("APICONFORM_SAMPLE_OUT"); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		names := map[string]string{"terminal": "terminal.txt", "verbose": "terminal-v.txt", "summary": "summary.md", "md": "report.md",
			"junit": "junit.xml", "html": "report.html", "json": "result.json"}
		for k, file := range names {
			if err := os.WriteFile(filepath.Join(dir, file), out[k], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
