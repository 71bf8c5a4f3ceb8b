package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/onsi/ginkgo/v2/types"
	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/render"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	_ "github.com/apiconform/apiconform/suites/all" // registers every suite's specs
	"github.com/apiconform/apiconform/suites/framework"
	"github.com/apiconform/apiconform/suites/runner"
)

// runOptions are the flags of `apiconform run`.
type runOptions struct {
	target     targetFlags
	targetName string

	focus, skip []string // areas or requirement IDs
	level       string
	labelFilter string
	parallel    int

	out     string
	formats []string
	failOn  string

	allowKnownDeviations bool
	dryRun, failFast     bool
	verbose, quiet       bool

	timeout, requestTimeout, watchTimeout, compactionWait time.Duration

	// workerResult is set when this process is one of `-p N`'s workers: it
	// writes its result there and renders nothing.
	workerResult string
}

func newRunOptions() *runOptions {
	return &runOptions{level: "may", parallel: 1, out: "out", formats: []string{"json", "junit", "md", "html"},
		failOn: "must", timeout: time.Hour, requestTimeout: framework.DefaultRequestTimeout,
		watchTimeout: framework.DefaultWatchTimeout, compactionWait: framework.DefaultCompactionWait}
}

func newRunCmd() *cobra.Command {
	o := newRunOptions()
	cmd := &cobra.Command{
		Use:   "run [flags]",
		Short: "Run the conformance suites against a target (default: the embedded reference server)",
		Long: `Run the conformance suites against a server that speaks the Kubernetes API.

With no --kubeconfig and no --server, the embedded reference server is started
on 127.0.0.1 and tested, so one command shows a full report. The target comes
from a kubeconfig (exec plugins, client certificates and tokens all work) or
from --server with --token (default $APICONFORM_TOKEN).

Each spec works in its own namespace ac-<area>-<random> and deletes it after;
it never touches objects it did not create. Specs that need a capability the
target lacks (CRDs, watch lists, the reference server's hooks) are skipped
with the reason. The matrix is printed; OUT gets result.json (re-render it with
"apiconform report"), junit.xml, report.md, report.html and summary.md
(also appended to $GITHUB_STEP_SUMMARY when set).

Each spec ends passed, failed (the target broke the requirement), error (the
harness could not finish the check: transport failure, deadline, interrupt —
never a conformance failure), skipped (a documented allowance was taken), not
applicable (the requirement does not apply to the target) or not run.

Exit codes: 0 when no spec at or above --fail-on failed; 1 when one did; 2 for
bad usage, or when the target cannot be reached (refused, TLS, 401/403, no
answer within --request-timeout) or is lost mid-run; 3 when the run is
incomplete (interrupted, --timeout elapsed, a worker failed) or a spec ended in
error — the reports are written and say INCOMPLETE first.`,
		Example: `  apiconform run
  apiconform run --kubeconfig ~/.kube/config --out out/cluster
  apiconform run --server https://127.0.0.1:6443 --token "$TOKEN" --certificate-authority ca.crt --focus dryrun
  apiconform run --kubeconfig kc --focus APPLY-CONFLICT,FV-WARN --level must -p 4
  apiconform run --dry-run --focus fieldvalidation`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runRun(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	o.target.register(f)
	f.StringVar(&o.targetName, "target-name", "", "how reports name the target (default: refserver, the kubeconfig context, or the server host)")
	f.StringSliceVar(&o.focus, "focus", nil, "run only these areas or requirement IDs (repeatable, comma-separated): "+strings.Join(catalog.KnownAreas, ", ")+", or an ID from `apiconform spec`")
	f.StringSliceVar(&o.skip, "skip", nil, "skip these areas or requirement IDs")
	f.StringVar(&o.level, "level", o.level, "run only specs of requirements at or above this level: must, should or may")
	f.StringVar(&o.labelFilter, "label-filter", "", "extra Ginkgo label filter, e.g. 'area:apply && !req:APPLY-FORCE'")
	f.IntVarP(&o.parallel, "parallel", "p", o.parallel, "run the areas in N worker processes")
	f.StringVarP(&o.out, "out", "o", o.out, "directory for the report files (\"\" writes none)")
	f.StringSliceVar(&o.formats, "format", o.formats, "report files to write into --out: json, junit, md, html")
	f.StringVar(&o.failOn, "fail-on", o.failOn, "exit 1 when a spec of this level or above failed: must, should, may or none")
	f.BoolVar(&o.allowKnownDeviations, "allow-known-deviations", false, "do not fail the run for specs whose every requirement has a catalogued kube-apiserver deviation")
	f.BoolVar(&o.dryRun, "dry-run", false, "list the selected specs and their requirements without running them")
	f.BoolVar(&o.failFast, "fail-fast", false, "stop at the first failure")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every requirement and each failure's HTTP exchanges, and Ginkgo's own output")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "no progress and no matrix, only the summary line")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "deadline of the whole run")
	f.DurationVar(&o.requestTimeout, "request-timeout", o.requestTimeout, "deadline of each request")
	f.DurationVar(&o.watchTimeout, "watch-timeout", o.watchTimeout, "upper bound of each watch stream")
	f.DurationVar(&o.compactionWait, "compaction-wait", o.compactionWait, "how long a target without a compaction hook may take to drop the history the 410 specs wrote (counted from when it was written) before they skip")
	f.StringVar(&o.workerResult, "worker-result", "", "")
	_ = f.MarkHidden("worker-result")
	return cmd
}

func init() { rootCmd.AddCommand(newRunCmd()) }

var errNoSpecs = errors.New("no spec matched the selection (see `apiconform run --dry-run`)")

func runRun(ctx context.Context, stdout, stderr io.Writer, o *runOptions) error {
	sigCtx := ctx
	sel, err := resolveSelection(o.focus, o.skip, o.level)
	if err != nil {
		return withExit(exitUsage, err)
	}
	failOn, err := reports.ParseFailOn(o.failOn)
	if err != nil {
		return withExit(exitUsage, fmt.Errorf("--fail-on %w", err))
	}
	formats, err := parseFileFormats(o.formats)
	if err != nil {
		return withExit(exitUsage, err)
	}
	if o.parallel < 1 {
		return withExit(exitUsage, fmt.Errorf("--parallel must be at least 1, got %d", o.parallel))
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout+time.Minute)
	defer cancel()

	cfg := runner.Config{
		Areas: sel.areas, Requirements: sel.requirements, Only: sel.only, SkipAreas: sel.skipAreas, SkipRequirements: sel.skipRequirements,
		LabelFilter: o.labelFilter, DryRun: o.dryRun, FailFast: o.failFast, Timeout: o.timeout,
		Verbose: o.verbose,
	}
	if o.verbose {
		cfg.Output = stderr // Ginkgo's own console output
	}
	if o.dryRun {
		report, err := runner.Run(ctx, cfg)
		if err != nil {
			return withExit(exitUsage, err)
		}
		if listSpecs(stdout, report) == 0 {
			return withExit(exitUsage, errNoSpecs)
		}
		return nil
	}

	// The embedded server lives until the run has ended (cleanup), not
	// until the interrupt: stopped at the signal, it refused the requests
	// the workers still had in flight, and the run blamed a lost target
	// (exit 2) for what was the user's interrupt (exit 3).
	target, cleanup, err := o.target.resolve(context.WithoutCancel(ctx), stderr)
	if err != nil {
		return withExit(exitUsage, err)
	}
	defer cleanup()
	if o.targetName != "" {
		target.Name = o.targetName
	}
	target.RequestTimeout, target.WatchTimeout, target.CompactionWait = o.requestTimeout, o.watchTimeout, o.compactionWait
	version, err := preflight(ctx, target)
	if err != nil {
		return withExit(exitUsage, err)
	}

	var res result.Result
	if o.parallel > 1 && o.workerResult == "" {
		res, err = runWorkers(ctx, sigCtx, o, sel, target, stderr)
	} else {
		res, err = runInProcess(ctx, o, cfg, target, version, stderr)
	}
	if err != nil {
		return withExit(exitUsage, err)
	}
	if sigCtx.Err() != nil && res.Incomplete == nil {
		// The signal came after the last spec: the run is still not whole.
		res.Incomplete = incompleteOf(res, runner.Stop{Cause: result.Interrupted})
	}
	if o.workerResult != "" {
		// A worker always leaves its result, even an interrupted one; the
		// parent merges it and decides the exit code.
		return result.WriteFile(o.workerResult, res)
	}
	if len(res.Specs) == 0 && res.Incomplete == nil {
		return withExit(exitUsage, errNoSpecs)
	}

	cat := reports.FromCatalog()
	rep := reports.Build(cat, res)
	written, err := writeReportFiles(o.out, formats, res, rep)
	if err == nil {
		written, err = writeSummary(o.out, written, rep) // out/summary.md and $GITHUB_STEP_SUMMARY (report.go)
	}
	if err != nil {
		return withExit(exitUsage, err)
	}
	if !o.quiet {
		if err := render.WriteTerminalWith(stdout, rep, render.TerminalOptions{Color: isTerminal(stdout), Verbose: o.verbose}); err != nil {
			return withExit(exitUsage, err)
		}
	}
	c := res.Counts()
	where := ""
	if len(written) > 0 {
		where = "; reports: " + strings.Join(written, ", ")
	}
	if res.Incomplete != nil {
		fmt.Fprintln(stdout, res.Incomplete.Headline())
	}
	fmt.Fprintf(stdout, "%s: %s in %s%s\n", res.Target.Name, c.Summary(),
		time.Duration(res.Duration).Round(time.Second), where)
	return exitFor(res, reports.Gate(cat, res, failOn, o.allowKnownDeviations), o.failOn)
}

// exitFor is the run's exit: a lost target is 2 (like an unreachable one);
// an incomplete run or a spec in error is 3, because the failures found may
// be only part of the story; then failures at the gate are 1.
func exitFor(res result.Result, gateErr error, failOn string) error {
	inc := res.Incomplete
	switch {
	case inc != nil && inc.Cause == result.TargetLost:
		return withExit(exitUsage, fmt.Errorf("target lost after %d of %d specs: %s", inc.Done, inc.Total, inc.Detail))
	case inc != nil:
		return withExit(exitIncomplete, errors.New(inc.Headline()))
	case res.Counts().Errors > 0:
		return withExit(exitIncomplete, fmt.Errorf("%d spec(s) ended in error (the harness could not finish them; not conformance failures)", res.Counts().Errors))
	case gateErr != nil:
		return withExit(exitFailed, fmt.Errorf("--fail-on=%s: %w", failOn, gateErr))
	}
	return nil
}

// incompleteOf describes a stopped run from its specs: done are those that
// finished (anything but not run), total every selected one.
func incompleteOf(res result.Result, stop runner.Stop) *result.Incomplete {
	c := res.Counts()
	return &result.Incomplete{Cause: stop.Cause, Detail: stop.Detail, Done: c.Total() - c.NotRun, Total: c.Total()}
}

// runInProcess runs the selected specs in this process with live progress.
func runInProcess(ctx context.Context, o *runOptions, cfg runner.Config, target framework.Target, version string, stderr io.Writer) (result.Result, error) {
	cfg.Target = target
	progress := newProgressPrinter(stderr, o.quiet)
	cfg.Progress = progress.update
	if o.workerResult != "" {
		cfg.Progress = progress.workerLine
	}
	report, err := runner.Run(ctx, cfg)
	progress.finish()
	if err == nil && !cfg.DryRun {
		framework.DropUnusedHistory() // histories written early for specs that never ran
	}
	if err != nil {
		return result.Result{}, err
	}
	caps := framework.Caps()
	if version == "" {
		version = caps.GitVersion
	}
	res := result.FromGinkgo(report, result.Target{Name: target.Name, Server: framework.ServerURL(), Version: version,
		Capabilities: caps.CapabilityMap()})
	if stop := runner.StopOf(ctx, report); stop.Cause != "" {
		res.Incomplete = incompleteOf(res, stop)
	}
	return res, nil
}

// selection is what --focus, --skip and --level select, in runner terms.
type selection struct {
	areas, requirements         []string // the focus: their union
	only                        []string // requirements at or above --level (nil: every level)
	skipAreas, skipRequirements []string
}

// resolveSelection sorts each name into an area or a requirement ID and
// applies the level: focused requirement IDs below it are dropped, and the
// level becomes the list of requirements at or above it that every selected
// spec must name one of.
func resolveSelection(focus, skip []string, level string) (selection, error) {
	var sel selection
	min, err := catalog.ParseLevel(level)
	if err != nil {
		return sel, fmt.Errorf("--level %w", err)
	}
	classify := func(names []string, flag string, toAreas, toReqs *[]string) error {
		for _, n := range names {
			n = strings.TrimSpace(n)
			switch {
			case n == "":
			case slices.Contains(catalog.KnownAreas, n):
				*toAreas = append(*toAreas, n)
			default:
				if _, ok := catalog.ByID(n); !ok {
					return fmt.Errorf("%s %q is neither an area (%s) nor a requirement ID (see `apiconform spec`)",
						flag, n, strings.Join(catalog.KnownAreas, ", "))
				}
				*toReqs = append(*toReqs, n)
			}
		}
		return nil
	}
	if err := classify(focus, "--focus", &sel.areas, &sel.requirements); err != nil {
		return sel, err
	}
	if err := classify(skip, "--skip", &sel.skipAreas, &sel.skipRequirements); err != nil {
		return sel, err
	}
	if min == catalog.May {
		return sel, nil
	}
	atLevel := func(id string) bool {
		r, _ := catalog.ByID(id)
		return r.Level.AtLeast(min)
	}
	if len(sel.requirements) > 0 {
		sel.requirements = slices.DeleteFunc(sel.requirements, func(id string) bool { return !atLevel(id) })
		if len(sel.requirements) == 0 && len(sel.areas) == 0 {
			return sel, fmt.Errorf("no focused requirement is at level %s or above", min)
		}
	}
	for _, r := range catalog.All() {
		if atLevel(r.ID) {
			sel.only = append(sel.only, r.ID)
		}
	}
	return sel, nil
}

// fileFormats maps --format names to renderers and file names.
var fileFormats = map[string]struct {
	format render.Format
	file   string
}{
	"json":  {render.JSON, "result.json"},
	"junit": {render.JUnit, "junit.xml"},
	"md":    {render.Markdown, "report.md"},
	"html":  {render.HTML, "report.html"},
}

func parseFileFormats(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "markdown" {
			n = "md"
		}
		if _, ok := fileFormats[n]; !ok {
			return nil, fmt.Errorf("--format %q: want json, junit, md or html", n)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// writeReportFiles writes each format into dir. The JSON file is the result
// itself (re-renderable with `apiconform report`), not the matrix.
func writeReportFiles(dir string, formats []string, res result.Result, rep *reports.Report) ([]string, error) {
	if dir == "" || len(formats) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var written []string
	for _, name := range formats {
		path := filepath.Join(dir, fileFormats[name].file)
		var err error
		if name == "json" {
			err = result.WriteFile(path, rep.Results[0]) // res with its coverage map (reports.Build)
		} else {
			err = writeRendered(path, fileFormats[name].format, rep)
		}
		if err != nil {
			return written, fmt.Errorf("write %s: %w", path, err)
		}
		written = append(written, path)
	}
	return written, nil
}

func writeRendered(path string, f render.Format, rep *reports.Report) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render.Render(file, f, rep); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// listSpecs prints the specs a dry run selected (area, requirements, text)
// and returns how many.
func listSpecs(w io.Writer, report types.Report) int {
	type row struct{ area, reqs, text string }
	var rows []row
	for _, s := range report.SpecReports {
		if s.LeafNodeType != types.NodeTypeIt || runner.NotSelected(s) {
			continue
		}
		area := ""
		for _, l := range s.Labels() {
			if a, ok := strings.CutPrefix(l, "area:"); ok {
				area = a
			}
		}
		rows = append(rows, row{area, strings.Join(framework.ReqIDs(s.Labels()), ","), s.FullText()})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].area < rows[j].area })
	for _, r := range rows {
		fmt.Fprintf(w, "%-16s %-40s %s\n", r.area, r.reqs, r.text)
	}
	fmt.Fprintf(w, "%d specs selected\n", len(rows))
	return len(rows)
}
