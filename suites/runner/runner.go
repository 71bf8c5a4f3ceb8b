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
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/formatter"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"

	"github.com/apiconform/apiconform/suites/framework"
)

// Config selects the specs and the target.
type Config struct {
	Target framework.Target

	Areas            []string // run only these areas (labels area:<name>); empty means all
	Requirements     []string // run only specs labelled with one of these requirement IDs
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
	return final, nil
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
	for _, sel := range []struct {
		prefix string
		names  []string
		negate bool
	}{
		{"area:", cfg.Areas, false},
		{framework.ReqLabel(""), cfg.Requirements, false},
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
