package result

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/spec/catalog"
)

// areaLabelPrefix starts the label naming a spec's area (area:watch).
const areaLabelPrefix = "area:"

// FromGinkgo converts a Ginkgo suite report into a Result for target. Specs
// are kept in the order Ginkgo ran them; passing suite-level nodes
// (BeforeSuite, ReportAfterSuite...) are dropped, failing ones are kept under
// area "suite" so a broken setup is never silent. Exchanges arrive redacted
// (the framework records them through Exchange.Redacted); Write and the
// report model sanitise every other field.
func FromGinkgo(report types.Report, target Target) Result {
	r := Result{
		SchemaVersion: SchemaVersion,
		Target:        target,
		StartedAt:     report.StartTime.UTC(),
		Duration:      Duration(report.RunTime),
		Specs:         []SpecResult{},
	}
	for _, sr := range report.SpecReports {
		isSpec := sr.LeafNodeType.Is(types.NodeTypeIt)
		if !isSpec && !sr.Failed() {
			continue
		}
		if notSelected(sr) {
			// A spec the run's filters left out says nothing about the target:
			// its requirements show as not covered, not as skipped.
			continue
		}
		r.Specs = append(r.Specs, specFromGinkgo(sr, isSpec))
	}
	return r
}

// notSelected reports a spec that Ginkgo skipped because the run's focus,
// skip or label filters excluded it: skipped without ever being attempted
// (a spec that calls Skip was attempted once) and not marked NotRun (a
// selected spec the run stopped before, which the runner marks).
func notSelected(sr types.SpecReport) bool {
	if _, marked := markOf(sr); marked {
		return false
	}
	return sr.State.Is(types.SpecStateSkipped) && sr.NumAttempts == 0
}

func specFromGinkgo(sr types.SpecReport, isSpec bool) SpecResult {
	s := SpecResult{
		Name:         sr.FullText(),
		Requirements: []string{},
		Duration:     Duration(sr.RunTime),
	}
	for _, l := range sr.Labels() {
		if id, ok := catalog.IDFromLabel(l); ok {
			if !slices.Contains(s.Requirements, id) {
				s.Requirements = append(s.Requirements, id)
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, areaLabelPrefix) && s.Area == "":
			s.Area = strings.TrimPrefix(l, areaLabelPrefix)
		}
	}
	if !isSpec {
		s.Name = strings.TrimSpace(sr.LeafNodeType.String() + " " + sr.LeafNodeText)
		s.Area = "suite"
	}
	if s.Area == "" {
		s.Area = "unlabelled"
	}
	mark, _ := markOf(sr)
	s.Outcome = OutcomeOf(sr)
	switch s.Outcome {
	case Passed:
	case Skipped, NotApplicable, NotRun:
		s.SkipReason = strings.TrimSpace(sr.Failure.Message)
		if s.Outcome == NotRun {
			s.SkipReason = mark.Reason
		}
		if s.SkipReason == "" {
			switch {
			case s.Outcome == NotRun:
				s.SkipReason = "never started"
			case sr.State.Is(types.SpecStatePending):
				s.SkipReason = "pending"
			default:
				s.SkipReason = "skipped without a reason"
			}
		}
	default: // Failed, Errored
		msg := strings.TrimSpace(sr.Failure.Message)
		if sr.Failure.ForwardedPanic != "" {
			msg = strings.TrimSpace(msg + "\npanic: " + sr.Failure.ForwardedPanic)
		}
		if msg == "" {
			msg = sr.State.String()
		}
		if s.Outcome == Errored && mark.Reason != "" && !strings.Contains(msg, mark.Reason) {
			msg = mark.Reason + "\n" + msg
		}
		if s.Outcome == Errored && sr.State.Is(types.SpecStateInterrupted|types.SpecStateTimedout) && mark.Reason == "" {
			msg = "the harness stopped this spec (" + sr.State.String() + "): " + msg
		}
		f := &Failure{Message: msg}
		if loc := sr.Failure.Location; loc.FileName != "" {
			f.Location = fmt.Sprintf("%s:%d", loc.FileName, loc.LineNumber)
		}
		s.Failure = f
	}
	s.Exchanges = exchangesFromEntries(sr.ReportEntries)
	s.Verdict = verdictFromEntries(sr.ReportEntries)
	s.Observations = observationsFromEntries(sr.ReportEntries)
	return s
}

// ExchangesEntry names the Ginkgo report entry that carries a failed spec's
// recorded exchanges. Its value is the JSON text of a []Exchange
// (ExchangesEntryValue): a string is the same in-process and after Ginkgo's
// JSON round trip between processes.
const ExchangesEntry = "apiconform.exchanges"

// ExchangesEntryValue encodes exchanges as the value of an ExchangesEntry.
func ExchangesEntryValue(xs []Exchange) string {
	b, err := json.MarshalIndent(xs, "", "  ")
	if err != nil {
		panic(err) // Exchange has only strings and ints
	}
	return string(b)
}

// exchangesFromEntries decodes the spec's ExchangesEntry values; an entry
// that does not decode is kept as a note rather than dropped silently.
func exchangesFromEntries(entries types.ReportEntries) []Exchange {
	var out []Exchange
	for _, e := range entries {
		if e.Name != ExchangesEntry {
			continue
		}
		text, _ := e.GetRawValue().(string)
		var xs []Exchange
		if err := json.Unmarshal([]byte(text), &xs); err != nil {
			out = append(out, Exchange{Note: fmt.Sprintf("unreadable %s report entry: %v", ExchangesEntry, err)})
			continue
		}
		out = append(out, xs...)
	}
	return out
}
