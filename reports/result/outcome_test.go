package result

import (
	"strings"
	"testing"

	"github.com/onsi/ginkgo/v2/types"
)

func markEntry(o Outcome, reason string) types.ReportEntry {
	return types.ReportEntry{Name: OutcomeEntry, Value: types.WrapEntryValue(OutcomeEntryValue(o, reason))}
}

func TestOutcomeOf(t *testing.T) {
	tests := []struct {
		name string
		sr   types.SpecReport
		want Outcome
	}{
		{"passed", types.SpecReport{State: types.SpecStatePassed, NumAttempts: 1}, Passed},
		{"failed", types.SpecReport{State: types.SpecStateFailed, NumAttempts: 1}, Failed},
		{"panicked", types.SpecReport{State: types.SpecStatePanicked, NumAttempts: 1}, Failed},
		{"skipped", types.SpecReport{State: types.SpecStateSkipped, NumAttempts: 1}, Skipped},
		{"interrupted", types.SpecReport{State: types.SpecStateInterrupted, NumAttempts: 1}, Errored},
		{"timed out", types.SpecReport{State: types.SpecStateTimedout, NumAttempts: 1}, Errored},
		{"aborted", types.SpecReport{State: types.SpecStateAborted, NumAttempts: 1}, Errored},
		{"transport error", types.SpecReport{State: types.SpecStateFailed, NumAttempts: 1,
			ReportEntries: types.ReportEntries{markEntry(Errored, "connection refused")}}, Errored},
		{"not applicable", types.SpecReport{State: types.SpecStateSkipped, NumAttempts: 1,
			ReportEntries: types.ReportEntries{markEntry(NotApplicable, "no Frobbers")}}, NotApplicable},
		{"not run", types.SpecReport{State: types.SpecStateSkipped,
			ReportEntries: types.ReportEntries{markEntry(NotRun, "interrupted")}}, NotRun},
		// A mark that does not fit the state is ignored: a passed spec is not an error.
		{"error mark on a pass", types.SpecReport{State: types.SpecStatePassed, NumAttempts: 1,
			ReportEntries: types.ReportEntries{markEntry(Errored, "x")}}, Passed},
		{"n/a mark on a failure", types.SpecReport{State: types.SpecStateFailed, NumAttempts: 1,
			ReportEntries: types.ReportEntries{markEntry(NotApplicable, "x")}}, Failed},
		{"unreadable mark", types.SpecReport{State: types.SpecStateFailed, NumAttempts: 1,
			ReportEntries: types.ReportEntries{{Name: OutcomeEntry, Value: types.WrapEntryValue("{")}}}, Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OutcomeOf(tt.sr); got != tt.want {
				t.Errorf("OutcomeOf = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestFromGinkgoNewOutcomes(t *testing.T) {
	report := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "transport", State: types.SpecStateFailed, NumAttempts: 1,
			Failure:       types.Failure{Message: "harness error, not a conformance failure: GET /x: connection refused"},
			ReportEntries: types.ReportEntries{markEntry(Errored, "harness error, not a conformance failure: GET /x: connection refused")}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "frobbers", State: types.SpecStateSkipped, NumAttempts: 1,
			Failure: types.Failure{Message: "discovery does not list the group"}, ReportEntries: types.ReportEntries{markEntry(NotApplicable, "discovery does not list the group")}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "later", State: types.SpecStateSkipped,
			ReportEntries: types.ReportEntries{markEntry(NotRun, "not started: the run was interrupted")}},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "cut short", State: types.SpecStateInterrupted, NumAttempts: 1,
			Failure: types.Failure{Message: "interrupted by user"}},
	}}
	r := FromGinkgo(report, Target{})
	if len(r.Specs) != 4 {
		t.Fatalf("specs = %+v", r.Specs)
	}
	if s := r.Specs[0]; s.Outcome != Errored || s.Failure == nil || strings.Count(s.Failure.Message, "connection refused") != 1 {
		t.Errorf("transport error spec: %+v", s)
	}
	if s := r.Specs[1]; s.Outcome != NotApplicable || s.SkipReason != "discovery does not list the group" {
		t.Errorf("not applicable spec: %+v", s)
	}
	if s := r.Specs[2]; s.Outcome != NotRun || s.SkipReason != "not started: the run was interrupted" {
		t.Errorf("not run spec: %+v", s)
	}
	if s := r.Specs[3]; s.Outcome != Errored || !strings.Contains(s.Failure.Message, "the harness stopped this spec") {
		t.Errorf("interrupted spec: %+v", s)
	}
	want := Counts{Errors: 2, NotApplicable: 1, NotRun: 1}
	if c := r.Counts(); c != want {
		t.Errorf("counts = %+v, want %+v", c, want)
	}
}

func TestReadsV1AndNewOutcomes(t *testing.T) {
	v1 := `{"schemaVersion":"apiconform.io/result/v1","target":{"name":"old"},"specs":[{"name":"a","outcome":"passed"},{"name":"b","outcome":"skipped","skipReason":"no CRDs"}]}`
	r, err := Read(strings.NewReader(v1))
	if err != nil || r.Counts() != (Counts{Passed: 1, Skipped: 1}) || r.Incomplete != nil {
		t.Fatalf("v1 file: %+v, %v", r, err)
	}
	v11 := `{"schemaVersion":"apiconform.io/result/v1.1","specs":[{"name":"a","outcome":"error"},{"name":"b","outcome":"not-applicable"},{"name":"c","outcome":"not-run"}],
	"incomplete":{"cause":"interrupted","done":2,"total":3}}`
	r, err = Read(strings.NewReader(v11))
	if err != nil || r.Counts() != (Counts{Errors: 1, NotApplicable: 1, NotRun: 1}) {
		t.Fatalf("v1.1 file: %+v, %v", r, err)
	}
	if h := r.Incomplete.Headline(); h != "INCOMPLETE — interrupted after 2 of 3 specs" {
		t.Errorf("headline = %q", h)
	}
}

func TestMergeIncomplete(t *testing.T) {
	whole := Result{Target: Target{Name: "t"}, Specs: []SpecResult{{Name: "a", Outcome: Passed}, {Name: "b", Outcome: Passed}}}
	cut := Result{Target: Target{Name: "t"}, Specs: []SpecResult{{Name: "c", Outcome: Passed}, {Name: "d", Outcome: NotRun}},
		Incomplete: &Incomplete{Cause: Interrupted, Done: 1, Total: 2}}
	lost := Result{Incomplete: &Incomplete{Cause: TargetLost, Detail: "connection refused", Done: 3, Total: 5}}
	if m := Merge(whole, whole); m.Incomplete != nil {
		t.Errorf("two whole parts: incomplete %+v", m.Incomplete)
	}
	m := Merge(whole, cut)
	if m.Incomplete == nil || *m.Incomplete != (Incomplete{Cause: Interrupted, Done: 3, Total: 4}) {
		t.Errorf("whole+cut: %+v", m.Incomplete)
	}
	m = Merge(cut, lost, whole)
	if m.Incomplete == nil || *m.Incomplete != (Incomplete{Cause: TargetLost, Detail: "connection refused", Done: 6, Total: 9}) {
		t.Errorf("cut+lost+whole: %+v", m.Incomplete)
	}
	if cut.Incomplete.Done != 1 {
		t.Errorf("Merge changed a part")
	}
}

func TestSectionOutcome(t *testing.T) {
	const (
		pass, fail, errd, skip = CheckedPassed, CheckedFailed, CheckedError, CheckedSkipped
		na, notRun, out, unt   = CheckedNotApplicable, CheckedNotRun, CheckedNotInRun, CheckedUntestable
	)
	cases := []struct {
		name string
		reqs []Checked
		want Checked
	}{
		{"all passed", []Checked{pass, pass}, pass},
		{"a failure beats everything", []Checked{pass, errd, fail, out}, fail},
		{"an error beats the rest", []Checked{pass, errd, notRun}, errd},
		{"passed, with n/a and untestable aside", []Checked{pass, na, unt}, pass},
		{"only skipped", []Checked{skip, skip}, skip},
		{"outside the run", []Checked{out, out}, out},
		{"selected, never started", []Checked{notRun, out}, notRun},
		{"some passed, some outside the run", []Checked{pass, out}, CheckedPartial},
		{"passed and skipped", []Checked{pass, skip}, CheckedPartial},
		{"none applies", []Checked{na, unt}, na},
		{"only untestable", []Checked{unt}, unt},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := SectionOutcome(tc.reqs); got != tc.want {
				t.Errorf("SectionOutcome(%v) = %s, want %s", tc.reqs, got, tc.want)
			}
		})
	}
}

// v1.2's coverage field reads back; a reader may ignore it.
func TestReadsV12Coverage(t *testing.T) {
	doc := `{"schemaVersion":"apiconform.io/result/v1.2","specs":[],"coverage":{"totals":{"sections":1,"covered":1,"static":0,"untestable":0,"gap":0,"outcomes":{"passed":1}},
	"documents":[{"doc":"d","title":"T","totals":{"sections":1,"covered":1,"static":0,"untestable":0,"gap":0,"outcomes":{"passed":1}},
	"sections":[{"title":"S","status":"covered","outcome":"passed","requirements":[{"id":"A-B","outcome":"passed"}]}]}]}}`
	r, err := Read(strings.NewReader(doc))
	if err != nil || r.Coverage == nil || r.Coverage.Documents[0].Sections[0].Requirements[0].Outcome != CheckedPassed {
		t.Fatalf("v1.2 file: %+v, %v", r.Coverage, err)
	}
}
