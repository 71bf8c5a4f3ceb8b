package result

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// OutcomeEntry names the Ginkgo report entry that states a spec's outcome
// when Ginkgo's own state cannot: a failure that was the harness's, not the
// target's (Errored), a Skip because the requirement does not apply to the
// target (NotApplicable), or a selected spec that never started (NotRun).
// Its value is the JSON text of an OutcomeMark (OutcomeEntryValue).
const OutcomeEntry = "apiconform.outcome"

// OutcomeMark is the value of an OutcomeEntry.
type OutcomeMark struct {
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
}

// OutcomeEntryValue encodes a mark as the value of an OutcomeEntry.
func OutcomeEntryValue(o Outcome, reason string) string {
	b, err := json.Marshal(OutcomeMark{Outcome: o, Reason: reason})
	if err != nil {
		panic(err) // two strings
	}
	return string(b)
}

// markOf is the last outcome mark the spec carries that fits its Ginkgo
// state: Errored only on a failed spec, NotApplicable only on a skipped one,
// NotRun only on one never attempted. Anything else is ignored.
func markOf(sr types.SpecReport) (OutcomeMark, bool) {
	var mark OutcomeMark
	found := false
	for _, e := range sr.ReportEntries {
		if e.Name != OutcomeEntry {
			continue
		}
		text, _ := e.GetRawValue().(string)
		var m OutcomeMark
		if json.Unmarshal([]byte(text), &m) != nil {
			continue
		}
		var fits bool
		switch m.Outcome {
		case Errored:
			fits = sr.State.Is(types.SpecStateFailureStates)
		case NotApplicable:
			fits = sr.State.Is(types.SpecStateSkipped) && sr.NumAttempts > 0
		case NotRun:
			fits = sr.NumAttempts == 0
		}
		if fits {
			mark, found = m, true
		}
	}
	return mark, found
}

// OutcomeOf is the outcome of one Ginkgo spec report: its outcome mark when
// it carries one that fits, else from Ginkgo's state. An interrupted, timed
// out or aborted spec is Errored: the harness stopped it, the target did not
// fail it.
func OutcomeOf(sr types.SpecReport) Outcome {
	if m, ok := markOf(sr); ok {
		return m.Outcome
	}
	switch {
	case sr.State.Is(types.SpecStatePassed):
		return Passed
	case sr.State.Is(types.SpecStateSkipped | types.SpecStatePending):
		return Skipped
	case sr.State.Is(types.SpecStateInterrupted | types.SpecStateTimedout | types.SpecStateAborted):
		return Errored
	}
	return Failed
}

// Incomplete says why a run stopped before every selected spec finished.
type Incomplete struct {
	Cause  StopCause `json:"cause"`
	Detail string    `json:"detail,omitempty"` // e.g. the lost target's last error
	Done   int       `json:"done"`             // specs that finished
	Total  int       `json:"total"`            // specs selected
}

// StopCause is why a run stopped early.
type StopCause string

const (
	Interrupted  StopCause = "interrupted"   // SIGINT or SIGTERM
	TimedOut     StopCause = "timed-out"     // --timeout
	TargetLost   StopCause = "target-lost"   // the target stopped answering
	WorkerFailed StopCause = "worker-failed" // a -p worker ended without a result
)

// Headline is the line every report puts first:
// "INCOMPLETE — interrupted after 12 of 157 specs".
func (i *Incomplete) Headline() string {
	if i == nil {
		return ""
	}
	what := map[StopCause]string{Interrupted: "interrupted", TimedOut: "the run's --timeout elapsed",
		TargetLost: "the target was lost", WorkerFailed: "a worker process failed"}[i.Cause]
	if what == "" {
		what = "stopped (" + string(i.Cause) + ")"
	}
	s := fmt.Sprintf("INCOMPLETE — %s after %d of %d specs", what, i.Done, i.Total)
	if d := strings.TrimSpace(i.Detail); d != "" {
		s += ": " + d
	}
	return s
}

// causeRank orders causes when parts of one run disagree: a lost target
// explains the others.
var causeRank = map[StopCause]int{TargetLost: 4, WorkerFailed: 3, TimedOut: 2, Interrupted: 1}
