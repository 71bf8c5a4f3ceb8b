package reports

import (
	"testing"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

func spec(outcome result.Outcome, reqs ...string) result.SpecResult {
	return result.SpecResult{Name: "s", Area: "a", Requirements: reqs, Outcome: outcome}
}

func TestJudge(t *testing.T) {
	cases := []struct {
		name     string
		outcomes []result.Outcome
		untest   string
		want     Status
		wantUnt  bool
	}{
		{"no spec", nil, "", NotCovered, false},
		{"no spec, untestable", nil, "cannot observe", NotCovered, true},
		{"all passed", []result.Outcome{result.Passed, result.Passed}, "", Pass, false},
		{"one failed", []result.Outcome{result.Passed, result.Failed, result.Skipped}, "", Fail, false},
		{"all skipped", []result.Outcome{result.Skipped, result.Skipped}, "", Skip, false},
		{"pass and skip", []result.Outcome{result.Skipped, result.Passed}, "", Pass, false},
		{"error beats pass", []result.Outcome{result.Passed, result.Errored}, "", Error, false},
		{"fail beats error", []result.Outcome{result.Errored, result.Failed}, "", Fail, false},
		{"pass and not run", []result.Outcome{result.Passed, result.NotRun}, "", NotRun, false},
		{"not applicable", []result.Outcome{result.NotApplicable}, "", NotApplicable, false},
		{"skip beats not applicable", []result.Outcome{result.NotApplicable, result.Skipped}, "", Skip, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := result.Result{}
			var idx []int
			for i, o := range tc.outcomes {
				s := spec(o, "R")
				s.SkipReason = "why"
				r.Specs = append(r.Specs, s)
				idx = append(idx, i)
			}
			c := judge(r, idx, catalog.Requirement{ID: "R", Untestable: tc.untest})
			if c.Status != tc.want || c.Untestable != tc.wantUnt {
				t.Errorf("status %s untestable %v, want %s %v", c.Status, c.Untestable, tc.want, tc.wantUnt)
			}
			if tc.want == Skip && c.Reason != "why" {
				t.Errorf("skip reason %q", c.Reason)
			}
		})
	}
}

func fixture() Catalogue {
	return Catalogue{
		Areas: []string{"b", "a"},
		Requirements: []catalog.Requirement{
			{ID: "A-1", Area: "a", Level: catalog.Must},
			{ID: "A-2", Area: "a", Level: catalog.Should},
			{ID: "B-1", Area: "b", Level: catalog.Must},
			{ID: "B-2", Area: "b", Level: catalog.Must, Untestable: "no"},
			{ID: "B-3", Area: "b", Level: catalog.May},
		},
		Tables: []DocTable{{ID: "t", Title: "T", Header: []string{"h", "x"}, Rows: [][]DocCell{{{Text: "row"}, {Text: "both", Requirements: []string{"A-1", "B-1"}}, {Text: "uncovered", Requirements: []string{"B-3"}}}}}},
	}
}

func TestBuildMatrixAndTotals(t *testing.T) {
	r1 := result.Result{Target: result.Target{Name: "one"}, Specs: []result.SpecResult{
		spec(result.Passed, "A-1"), spec(result.Failed, "B-1"), spec(result.Skipped, "A-2"), spec(result.Passed, "X-9"),
	}}
	rep := Build(fixture(), r1)
	// X-9 is uncatalogued; its spec's area "a" already exists, so it joins that group.
	var names []string
	for _, g := range rep.Areas {
		names = append(names, g.Name)
	}
	if len(names) != 2 || names[0] != "b" || names[1] != "a" {
		t.Fatalf("areas = %v, want [b a]", names)
	}
	x, ok := rep.Requirement("X-9")
	if !ok || !x.Uncatalogued || x.Cells[0].Status != Pass {
		t.Errorf("uncatalogued row = %+v", x)
	}
	want := map[string]Status{"A-1": Pass, "A-2": Skip, "B-1": Fail, "B-2": NotCovered, "B-3": NotCovered}
	for id, st := range want {
		row, ok := rep.Requirement(id)
		if !ok || row.Cells[0].Status != st {
			t.Errorf("%s = %+v, want %s", id, row.Cells, st)
		}
	}
	must := rep.Columns[0].Must
	if must != (Tally{Pass: 1, Fail: 1, Untestable: 1}) || must.PercentText() != "50%" {
		t.Errorf("MUST tally %+v %s", must, must.PercentText())
	}
	all := rep.Columns[0].All
	if all != (Tally{Pass: 2, Fail: 1, Skip: 1, NotCovered: 1, Untestable: 1}) || all.PercentText() != "40%" {
		t.Errorf("all tally %+v %s", all, all.PercentText())
	}
	if len(rep.Levels) != 3 || rep.Levels[2].Level != catalog.May || rep.Levels[2].Totals[0].NotCovered != 1 {
		t.Errorf("levels %+v", rep.Levels)
	}
	if got := rep.Areas[0].Totals[0]; got != (Tally{Fail: 1, NotCovered: 1, Untestable: 1}) {
		t.Errorf("area b totals %+v", got)
	}
	cells := rep.Tables[0].Rows[0]
	if cells[0].Statuses != nil || cells[1].Statuses[0] != Fail || cells[2].Statuses[0] != NotCovered {
		t.Errorf("table marks %+v", cells)
	}
	if len(rep.Failures) != 1 || rep.Failures[0].Spec.Requirements[0] != "B-1" {
		t.Errorf("failures %+v", rep.Failures)
	}
	if len(rep.Changes) != 0 {
		t.Errorf("single result has changes: %+v", rep.Changes)
	}
}

func TestCompare(t *testing.T) {
	base := result.Result{Target: result.Target{Name: "ref"}, Specs: []result.SpecResult{
		spec(result.Passed, "A-1"), spec(result.Failed, "B-1"), spec(result.Skipped, "A-2"), spec(result.Passed, "B-3"),
	}}
	next := result.Result{Target: result.Target{Name: "ref"}, Specs: []result.SpecResult{
		spec(result.Failed, "A-1"), spec(result.Passed, "B-1"), spec(result.Passed, "A-2"), spec(result.Passed, "B-3"),
	}}
	next.StartedAt = next.StartedAt.AddDate(0, 0, 1)
	rep := Build(fixture(), base, next)
	if rep.Columns[0].Label == rep.Columns[1].Label {
		t.Fatalf("two runs of one target share a label %q", rep.Columns[0].Label)
	}
	var kinds []string
	for _, ch := range rep.Changes {
		kinds = append(kinds, string(ch.Kind)+":"+ch.Requirement)
	}
	want := []string{"regression:A-1", "fix:B-1", "changed:A-2"}
	if len(kinds) != len(want) {
		t.Fatalf("changes %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("changes %v, want %v", kinds, want)
		}
	}
	if rep.Count(Regression) != 1 || rep.Count(Fix) != 1 || rep.Count(Changed) != 1 {
		t.Errorf("counts wrong")
	}
	// Table cell with A-1 (fail in column 2) and B-1 (pass in column 2) is fail there.
	if st := rep.Tables[0].Rows[0][1].Statuses; st[0] != Fail || st[1] != Fail {
		t.Errorf("combined table statuses %v", st)
	}
}

func TestPercentText(t *testing.T) {
	cases := []struct {
		t    Tally
		want string
	}{
		{Tally{}, "n/a"},
		{Tally{Untestable: 3}, "n/a"},
		{Tally{Pass: 1}, "100%"},
		{Tally{Pass: 2, Fail: 1}, "66.7%"},
		{Tally{Pass: 1, NotCovered: 9}, "10%"},
		{Tally{Fail: 1}, "0%"},
	}
	for _, tc := range cases {
		if got := tc.t.PercentText(); got != tc.want {
			t.Errorf("%+v → %s, want %s", tc.t, got, tc.want)
		}
	}
}

func TestFromCatalog(t *testing.T) {
	cat := FromCatalog()
	if len(cat.Requirements) == 0 {
		t.Skip("catalogue is empty")
	}
	ids := map[string]bool{}
	for _, r := range cat.Requirements {
		ids[r.ID] = true
	}
	for _, tb := range cat.Tables {
		for _, row := range tb.Rows {
			if len(row) != len(tb.Header) {
				t.Errorf("table %s: row has %d cells, header %d", tb.ID, len(row), len(tb.Header))
			}
			for _, c := range row {
				for _, id := range c.Requirements {
					if !ids[id] {
						t.Errorf("table %s cell %q names unknown requirement %s", tb.ID, c.Text, id)
					}
				}
			}
		}
	}
}

func TestPlainText(t *testing.T) {
	cases := map[string]string{
		"_unset_":                         "unset",
		"`resourceVersionMatch=Exact`":    "resourceVersionMatch=Exact",
		`limit=\<n\>, continue=\<token\>`: "limit=<n>, continue=<token>",
		"Invalid, HTTP `400 Bad Request`": "Invalid, HTTP 400 Bad Request",
		"_":                               "_",
		"limit=<n>, _continue unset_":     "limit=<n>, continue unset",
		"field_name stays":                "field_name stays",
		"(_a_, b) _c d_ e":                "(a, b) c d e",
	}
	for in, want := range cases {
		if got := plainText(in); got != want {
			t.Errorf("plainText(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestConformanceLeavesOutNotApplicable: MUST conformance is passed ÷
// applicable, testable MUST requirements; error and not run count against it.
func TestConformanceLeavesOutNotApplicable(t *testing.T) {
	cat := Catalogue{Requirements: []catalog.Requirement{
		{ID: "M-1", Area: "a", Level: catalog.Must}, {ID: "M-2", Area: "a", Level: catalog.Must},
		{ID: "M-3", Area: "a", Level: catalog.Must}, {ID: "M-4", Area: "a", Level: catalog.Must},
		{ID: "M-5", Area: "a", Level: catalog.Must, Untestable: "no"},
	}}
	res := result.Result{Target: result.Target{Name: "t"}, Specs: []result.SpecResult{
		spec(result.Passed, "M-1"), spec(result.NotApplicable, "M-2"), spec(result.Errored, "M-3"), spec(result.NotRun, "M-4"),
	}}
	rep := Build(cat, res)
	m := rep.Columns[0].Must
	if m.Pass != 1 || m.NotApplicable != 1 || m.Error != 1 || m.NotRun != 1 || m.Untestable != 1 || m.Testable() != 3 {
		t.Fatalf("must tally = %+v (testable %d)", m, m.Testable())
	}
	if got := m.PercentText(); got != "33.3%" {
		t.Errorf("MUST conformance %s, want 33.3%% (1 of 3 applicable, testable)", got)
	}
	if len(rep.Failures) != 0 || len(rep.Errors) != 1 {
		t.Errorf("failures %d, errors %d; want 0 and 1", len(rep.Failures), len(rep.Errors))
	}
	if err := Gate(cat, res, catalog.Must, false); err != nil {
		t.Errorf("an error is not a conformance failure, gate said %v", err)
	}
}
