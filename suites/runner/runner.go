// Package runner runs the apiconform specs in-process with Ginkgo and hands
// back Ginkgo's report. Import the suites to run (suites/all imports them all)
// before calling Run.
//
// Ginkgo's RunSpecs can run only once per process, so Run can be called only
// once per process as well; a second call returns ErrAlreadyRan.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/suites/framework"
)

// Config selects the specs and the target.
type Config struct {
	Target framework.Target

	// Areas and Requirements are the focus: run the specs of these areas
	// (labels area:<name>) and the specs labelled with one of these
	// requirement IDs (their union); both empty means every spec.
	Areas        []string
	Requirements []string
	// Only keeps, of the focus, the specs labelled with one of these
	// requirement IDs (e.g. those at or above --level); empty keeps all.
	Only             []string
	LabelFilter      string   // extra Ginkgo label filter, ANDed with the above
	Focus            []string // run only specs whose full text matches one of these regexps
	Skip             []string // skip specs whose full text matches one of these regexps
	SkipAreas        []string // skip these areas
	SkipRequirements []string // skip specs labelled with these requirement IDs

	DryRun   bool          // enumerate the selected specs without running them (no target needed)
	FailFast bool          // stop at the first failure
	Timeout  time.Duration // whole run; default 1h
	Seed     int64         // spec order seed; 0 keeps the declared order

	// Output receives Ginkgo's own console report; nil discards it.
	Output  io.Writer
	Verbose bool // Ginkgo verbose console output (to Output)

	// Progress is called after each selected spec finishes (from the spec goroutine).
	Progress func(Progress)
}

// Progress reports one finished spec.
type Progress struct {
	Done  int              // specs finished so far, including this one
	Total int              // specs selected to run
	Spec  types.SpecReport // the spec that just finished (State, Failure, labels)
}

// Failed tells whether the finished spec failed (failed, panicked, timed out, aborted, interrupted).
func (p Progress) Failed() bool { return p.Spec.State.Is(types.SpecStateFailureStates) }

// ErrAlreadyRan is returned by a second Run in the same process.
var ErrAlreadyRan = errors.New("runner: the specs already ran in this process (Ginkgo's RunSpecs runs once per process)")

var (
	runMu    sync.Mutex
	ran      bool
	progress func(Progress)
	total    int
	done     int
	final    types.Report
)

// Ginkgo's reporting nodes, registered once at the top level of the tree.
var _ = ginkgo.ReportBeforeSuite(func(r types.Report) {
	total = r.PreRunStats.SpecsThatWillRun
})

var _ = ginkgo.ReportAfterEach(func(s types.SpecReport) {
	if NotSelected(s) {
		return
	}
	done++
	if progress != nil {
		progress(Progress{Done: done, Total: total, Spec: s})
	}
})

var _ = ginkgo.ReportAfterSuite("apiconform result", func(r types.Report) {
	final = r
})

// NotSelected reports a spec that the run's filters (areas, requirements,
// label filter, focus, skip) left out: Ginkgo marks it skipped without ever
// attempting it. A spec that called Skip at run time has one attempt and a
// message.
func NotSelected(s types.SpecReport) bool {
	return s.State == types.SpecStateSkipped && s.NumAttempts == 0
}

// Run configures the framework with cfg.Target (unless DryRun), runs the
// selected specs and returns Ginkgo's report. The error is about the run
// itself (bad selection, unreachable target); spec failures are in the report.
func Run(ctx context.Context, cfg Config) (types.Report, error) {
	runMu.Lock()
	defer runMu.Unlock()
	if ran {
		return types.Report{}, ErrAlreadyRan
	}
	suiteCfg, reporterCfg, err := ginkgoConfig(cfg)
	if err != nil {
		return types.Report{}, err
	}
	if !cfg.DryRun {
		if err := framework.Configure(ctx, cfg.Target); err != nil {
			return types.Report{}, err
		}
	}
	ran = true
	progress, total, done = cfg.Progress, 0, 0
	out := cfg.Output
	if out == nil {
		out = io.Discard
	}
	formatter.ColorableStdOut = out

	gomega.RegisterFailHandler(ginkgo.Fail)
	t := &testingT{}
	ginkgo.RunSpecs(t, "apiconform", suiteCfg, reporterCfg)
	if !cfg.DryRun {
		markNotRun(&final, selector(cfg, suiteCfg), stopReason(ctx, final, cfg.FailFast))
	}
	return final, nil
}

// Stop says why a run ended before every selected spec finished; the zero
// Stop is a run that was not stopped (fail-fast is not a stop: the run did
// what it was asked).
type Stop struct {
	Cause  result.StopCause
	Detail string
}

// StopOf reads why the run of report stopped early: the target was lost
// (framework.Lost), the run was interrupted (SIGINT/SIGTERM, or ctx
// cancelled), or its timeout elapsed.
func StopOf(ctx context.Context, report types.Report) Stop {
	if err := framework.Lost(); err != nil {
		return Stop{result.TargetLost, err.Error()}
	}
	for _, r := range report.SpecialSuiteFailureReasons {
		switch {
		case strings.Contains(r, "Interrupted"):
			return Stop{Cause: result.Interrupted}
		case strings.Contains(r, "Timeout Elapsed"):
			return Stop{Cause: result.TimedOut}
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Stop{Cause: result.TimedOut}
	case ctx.Err() != nil:
		return Stop{Cause: result.Interrupted}
	}
	return Stop{}
}

// stopReason is what a spec that never started is told.
func stopReason(ctx context.Context, report types.Report, failFast bool) string {
	switch st := StopOf(ctx, report); st.Cause {
	case result.TargetLost:
		return "not started: the target was lost (" + st.Detail + ")"
	case result.Interrupted:
		return "not started: the run was interrupted"
	case result.TimedOut:
		return "not started: the run's timeout elapsed"
	}
	if failFast {
		return "not started: --fail-fast stopped the run at the first failure"
	}
	return "not started"
}

// markNotRun marks every selected spec that was never attempted NotRun
// (result.OutcomeEntry), so that it is not mistaken for one the filters
// left out (Ginkgo reports both as skipped with no attempt).
func markNotRun(report *types.Report, selected func(types.SpecReport) bool, reason string) {
	for i, s := range report.SpecReports {
		if !s.LeafNodeType.Is(types.NodeTypeIt) || s.NumAttempts > 0 || !s.State.Is(types.SpecStateSkipped) || !selected(s) {
			continue
		}
		why := reason
		if m := strings.TrimSpace(s.Failure.Message); m != "" {
			why = "not started: " + m // e.g. an earlier spec of an ordered container failed
		}
		report.SpecReports[i].ReportEntries = append(slices.Clone(s.ReportEntries), types.ReportEntry{
			Name: result.OutcomeEntry, Value: types.WrapEntryValue(result.OutcomeEntryValue(result.NotRun, why))})
	}
}

// selector tells whether the run's selection (label filter, focus and skip
// patterns) takes a spec, the way Ginkgo decides it.
func selector(cfg Config, sc types.SuiteConfig) func(types.SpecReport) bool {
	var match func([]string) bool = func([]string) bool { return true }
	if sc.LabelFilter != "" {
		if f, err := types.ParseLabelFilter(sc.LabelFilter); err == nil {
			match = f
		}
	}
	focus, skip := compileAll(cfg.Focus), compileAll(cfg.Skip)
	return func(s types.SpecReport) bool {
		if !match(s.Labels()) {
			return false
		}
		text := s.FullText()
		if len(focus) > 0 && !slices.ContainsFunc(focus, func(re *regexp.Regexp) bool { return re.MatchString(text) }) {
			return false
		}
		return !slices.ContainsFunc(skip, func(re *regexp.Regexp) bool { return re.MatchString(text) })
	}
}

func compileAll(patterns []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range patterns {
		out = append(out, regexp.MustCompile(p)) // validated by ginkgoConfig
	}
	return out
}

type testingT struct{ failed bool }

func (t *testingT) Fail() { t.failed = true }

// ginkgoConfig turns the selection into Ginkgo's configuration, validating it
// first (Ginkgo exits the process on a bad filter).
func ginkgoConfig(cfg Config) (types.SuiteConfig, types.ReporterConfig, error) {
	sc := types.NewDefaultSuiteConfig()
	rc := types.NewDefaultReporterConfig()
	rc.NoColor = true
	rc.Verbose = cfg.Verbose
	rc.SilenceSkips = !cfg.Verbose
	sc.RandomSeed = cfg.Seed
	sc.RandomizeAllSpecs = false
	sc.DryRun = cfg.DryRun
	sc.FailFast = cfg.FailFast
	if cfg.Timeout > 0 {
		sc.Timeout = cfg.Timeout
	}
	for _, re := range append(append([]string{}, cfg.Focus...), cfg.Skip...) {
		if _, err := regexp.Compile(re); err != nil {
			return sc, rc, fmt.Errorf("runner: bad focus/skip pattern %q: %w", re, err)
		}
	}
	sc.FocusStrings = cfg.Focus
	sc.SkipStrings = cfg.Skip

	filter, err := LabelFilter(cfg)
	if err != nil {
		return sc, rc, err
	}
	sc.LabelFilter = filter
	return sc, rc, nil
}

// LabelFilter builds the Ginkgo label filter for a selection.
func LabelFilter(cfg Config) (string, error) {
	var parts []string
	anyOf := func(prefix string, names []string) (string, error) {
		var alts []string
		for _, n := range names {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if strings.ContainsAny(n, "&|!,()/: ") {
				return "", fmt.Errorf("runner: bad name %q in selection", n)
			}
			alts = append(alts, prefix+n)
		}
		if len(alts) == 0 {
			return "", nil
		}
		return "(" + strings.Join(alts, " || ") + ")", nil
	}
	// The focus is one union: --focus PAGE-CONSTANT-RV,watch runs the watch
	// area and that requirement's specs.
	focusAreas, err := anyOf("area:", cfg.Areas)
	if err != nil {
		return "", err
	}
	focusReqs, err := anyOf(framework.ReqLabel(""), cfg.Requirements)
	if err != nil {
		return "", err
	}
	switch {
	case focusAreas != "" && focusReqs != "":
		parts = append(parts, "("+focusAreas+" || "+focusReqs+")")
	case focusAreas != "" || focusReqs != "":
		parts = append(parts, focusAreas+focusReqs)
	}
	for _, sel := range []struct {
		prefix string
		names  []string
		negate bool
	}{
		{framework.ReqLabel(""), cfg.Only, false},
		{"area:", cfg.SkipAreas, true},
		{framework.ReqLabel(""), cfg.SkipRequirements, true},
	} {
		p, err := anyOf(sel.prefix, sel.names)
		if err != nil {
			return "", err
		}
		if p == "" {
			continue
		}
		if sel.negate {
			p = "!" + p
		}
		parts = append(parts, p)
	}
	if f := strings.TrimSpace(cfg.LabelFilter); f != "" {
		if _, err := types.ParseLabelFilter(f); err != nil {
			return "", fmt.Errorf("runner: bad label filter %q: %w", f, err)
		}
		parts = append(parts, "("+f+")")
	}
	filter := strings.Join(parts, " && ")
	if _, err := types.ParseLabelFilter(filter); err != nil {
		return "", fmt.Errorf("runner: label filter %q: %w", filter, err)
	}
	return filter, nil
}
