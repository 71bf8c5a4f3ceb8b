// Package faultcheck proves that the suites catch broken servers: its test
// runs selected specs against the embedded reference server with one
// deliberately broken behaviour switched on (refserver/faults) and asserts
// that the specs covering that behaviour fail, while a run without faults
// passes the same specs.
//
// Ginkgo runs its specs once per process, so every run happens in a child
// process (the test binary re-executed) that writes a Summary as JSON; this
// file holds that Summary and how it is built from Ginkgo's report.
package faultcheck

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/suites/framework"
	"github.com/apiconform/apiconform/suites/runner"
)

// Spec is one selected spec of a run and how it ended.
type Spec struct {
	Text    string   `json:"text"`
	Reqs    []string `json:"reqs"`
	State   string   `json:"state"` // Ginkgo's state: passed, failed, skipped, panicked, timedout, ...
	Failed  bool     `json:"failed"`
	Message string   `json:"message,omitempty"` // failure or skip message
}

// Summary is what a child run hands back to the parent test.
type Summary struct {
	Fault          string   `json:"fault"` // "" for the control run
	Specs          []Spec   `json:"specs"`
	SuiteSucceeded bool     `json:"suiteSucceeded"`
	SuiteProblems  []string `json:"suiteProblems,omitempty"` // Ginkgo's special suite failure reasons
	// Caps and WatchListProblem are what capability detection concluded.
	Caps             map[string]bool `json:"caps,omitempty"`
	WatchListProblem string          `json:"watchListProblem,omitempty"`
}

// Summarize keeps the selected It specs of a Ginkgo report (setup nodes and
// specs the filters left out are dropped).
func Summarize(fault string, r types.Report) Summary {
	s := Summary{Fault: fault, SuiteSucceeded: r.SuiteSucceeded, SuiteProblems: r.SpecialSuiteFailureReasons}
	for _, sr := range r.SpecReports {
		if sr.LeafNodeType != types.NodeTypeIt || runner.NotSelected(sr) {
			continue
		}
		s.Specs = append(s.Specs, Spec{
			Text:    sr.FullText(),
			Reqs:    framework.ReqIDs(sr.Labels()),
			State:   sr.State.String(),
			Failed:  sr.State.Is(types.SpecStateFailureStates),
			Message: sr.Failure.Message,
		})
	}
	return s
}

// ReqsWhere lists, sorted, the requirement IDs labelling at least one spec
// for which keep is true.
func (s Summary) ReqsWhere(keep func(Spec) bool) []string {
	seen := map[string]bool{}
	for _, sp := range s.Specs {
		if !keep(sp) {
			continue
		}
		for _, id := range sp.Reqs {
			seen[id] = true
		}
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// FailedReqs lists the requirement IDs with at least one failed spec.
func (s Summary) FailedReqs() []string { return s.ReqsWhere(func(sp Spec) bool { return sp.Failed }) }

// PassedReqs lists the requirement IDs with at least one passed spec.
func (s Summary) PassedReqs() []string {
	return s.ReqsWhere(func(sp Spec) bool { return sp.State == types.SpecStatePassed.String() })
}

// WriteFile stores s as JSON at path.
func (s Summary) WriteFile(path string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// ReadFile loads a Summary written by WriteFile.
func ReadFile(path string) (Summary, error) {
	var s Summary
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("read summary: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("decode summary %s: %w", path, err)
	}
	return s, nil
}
