package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/render"
	"github.com/apiconform/apiconform/reports/result"
)

// reportOptions are the flags of `apiconform report`.
type reportOptions struct {
	format           string
	out              string
	failOnRegression bool
	verbose          bool
}

func newReportCmd() *cobra.Command {
	o := &reportOptions{}
	cmd := &cobra.Command{
		Use:   "report RESULT.json...",
		Short: "Render one result, or compare several, as terminal text, Markdown, HTML, JUnit or JSON",
		Long: `Render a result file written by "apiconform run": a summary (target, version,
MUST conformance), the requirement matrix grouped by area with levels and known
kube-apiserver deviations, the documented resourceVersion tables marked with the
outcome, and every failure with its HTTP exchanges (credentials redacted).

With several result files (several targets, or two runs of one target) the matrix
gets one column per result and regressions (pass → fail) and fixes (fail → pass)
against the first file are listed first.

Every failure is one line naming its requirements and the verdict ("RV-LIST-EXACT:
expected 410 Gone, got 200 OK (GET …)"); the request that broke the rule comes
first, setup and teardown requests last. Terminal output is the summary, the
matrix of areas and levels and those lines (-v adds every requirement, the
documented tables and the exchanges). The summary format is short Markdown for
a PR comment or a CI job summary, under 60 KB whatever the number of failures.

HTML is one self-contained file, failures first; its filters live in the URL
fragment, e.g. matrix.html#level=MUST&outcome=fail. JSON is the result itself
for one file and the matrix (schema apiconform.io/matrix/v1) for several.`,
		Example: `  apiconform report out/refserver/result.json -v
  apiconform report out/result.json --format summary >> "$GITHUB_STEP_SUMMARY"
  apiconform report out/refserver/result.json out/oracle/result.json --format html --out out/matrix.html
  apiconform report before.json after.json --fail-on-regression`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.OutOrStdout(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", string(render.Terminal), "output format: terminal, md, html, junit, json or summary (short Markdown for PR comments and CI job summaries)")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "terminal: add the requirement matrix, the documented tables and each failure's HTTP exchanges")
	f.StringVarP(&o.out, "out", "o", "", "write to this file instead of standard output")
	f.BoolVar(&o.failOnRegression, "fail-on-regression", false, "exit 1 when a requirement passing in the first result fails in a later one")
	return cmd
}

func init() { rootCmd.AddCommand(newReportCmd()) }

func runReport(stdout io.Writer, paths []string, o *reportOptions) error {
	format, err := render.ParseFormat(o.format)
	if err != nil {
		return withExit(exitUsage, fmt.Errorf("--format: %w", err))
	}
	results := make([]result.Result, 0, len(paths))
	for _, p := range paths {
		r, err := result.ReadFile(p)
		if err != nil {
			return withExit(exitUsage, fmt.Errorf("read result: %w", err))
		}
		results = append(results, r)
	}
	rep := reports.Build(reports.FromCatalog(), results...)
	draw := func(w io.Writer) error {
		switch format {
		case render.Terminal:
			return render.WriteTerminalWith(w, rep, render.TerminalOptions{Color: render.ColorFor(w), Verbose: o.verbose})
		case render.Summary:
			return render.WriteSummary(w, rep, render.SummaryOptions{Reports: paths})
		}
		return render.Render(w, format, rep)
	}

	if o.out == "" || o.out == "-" {
		if err := draw(stdout); err != nil {
			return withExit(exitUsage, fmt.Errorf("render %s: %w", format, err))
		}
	} else {
		// Render fully before touching the file so a failure leaves no half report.
		var buf bytes.Buffer
		if err := draw(&buf); err != nil {
			return withExit(exitUsage, fmt.Errorf("render %s: %w", format, err))
		}
		if err := os.WriteFile(o.out, buf.Bytes(), 0o644); err != nil {
			return withExit(exitUsage, fmt.Errorf("write report: %w", err))
		}
	}
	if o.failOnRegression {
		if n := rep.Count(reports.Regression); n > 0 {
			return withExit(exitFailed, fmt.Errorf("%d regression(s) against %s", n, rep.Columns[0].Label))
		}
	}
	return nil
}

// summaryFile is the summary `run` writes next to the full reports.
const summaryFile = "summary.md"

// writeSummary writes the short Markdown summary to dir/summary.md (when
// dir is set), naming the full reports in written, and appends it to the
// file $GITHUB_STEP_SUMMARY names when that is set (GitHub Actions shows it
// on the run's page). It returns written plus the summary's path.
func writeSummary(dir string, written []string, rep *reports.Report) ([]string, error) {
	var buf bytes.Buffer
	if err := render.WriteSummary(&buf, rep, render.SummaryOptions{Reports: written}); err != nil {
		return written, err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return written, fmt.Errorf("--out: %w", err)
		}
		path := filepath.Join(dir, summaryFile)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			return written, fmt.Errorf("write %s: %w", path, err)
		}
		written = append(written, path)
	}
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return written, fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
		}
		_, werr := f.Write(append(buf.Bytes(), '\n'))
		if err := f.Close(); werr == nil {
			werr = err
		}
		if werr != nil {
			return written, fmt.Errorf("GITHUB_STEP_SUMMARY %s: %w", p, werr)
		}
	}
	return written, nil
}
