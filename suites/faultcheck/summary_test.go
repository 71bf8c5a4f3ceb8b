package faultcheck_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/suites/faultcheck"
)

func TestSummarize(t *testing.T) {
	it := func(text string, state types.SpecState, attempts int, labels ...string) types.SpecReport {
		return types.SpecReport{LeafNodeType: types.NodeTypeIt, LeafNodeText: text, LeafNodeLabels: labels,
			State: state, NumAttempts: attempts}
	}
	report := types.Report{SuiteSucceeded: false, SpecReports: types.SpecReports{
		it("passes", types.SpecStatePassed, 1, "area:x", "req:A"),
		it("fails", types.SpecStateFailed, 1, "req:B", "req:C"),
		it("times out", types.SpecStateTimedout, 1, "req:D"),
		it("skipped at run time", types.SpecStateSkipped, 1, "req:E"),
		it("not selected", types.SpecStateSkipped, 0, "req:F"),
		{LeafNodeType: types.NodeTypeBeforeSuite, State: types.SpecStateFailed},
	}}
	s := faultcheck.Summarize("some-fault", report)

	var texts []string
	for _, sp := range s.Specs {
		texts = append(texts, sp.Text)
	}
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"selected specs", texts, []string{"passes", "fails", "times out", "skipped at run time"}},
		{"failed requirements", s.FailedReqs(), []string{"B", "C", "D"}},
		{"passed requirements", s.PassedReqs(), []string{"A"}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}

	path := filepath.Join(t.TempDir(), "s.json")
	if err := s.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	back, err := faultcheck.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("round trip: got %+v, want %+v", back, s)
	}
	if _, err := faultcheck.ReadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("reading a missing summary: want an error")
	}
}
