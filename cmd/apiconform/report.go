package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

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

HTML is one self-contained file; its filters live in the URL fragment, e.g.
matrix.html#level=MUST&outcome=fail. JSON is the result itself for one file and
the matrix (schema apiconform.io/matrix/v1) for several.`,
		Example: `  apiconform report out/refserver/result.json
  apiconform report out/refserver/result.json out/oracle/result.json --format html --out out/matrix.html
  apiconform report before.json after.json --fail-on-regression`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReport(cmd.OutOrStdout(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", string(render.Terminal), "output format: terminal, md, html, junit or json")
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

	if o.out == "" || o.out == "-" {
		if err := render.Render(stdout, format, rep); err != nil {
			return withExit(exitUsage, fmt.Errorf("render %s: %w", format, err))
		}
	} else {
		// Render fully before touching the file so a failure leaves no half report.
		var buf bytes.Buffer
		if err := render.Render(&buf, format, rep); err != nil {
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
