package reports

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/coverage"
)

const (
	enDoc = "000_3a1b3094088024c1.txt"
	zhDoc = "003_c242e18d62eea135.txt"
)

// coverageFixture is a catalogue of six requirements and a map over them.
func coverageFixture() Catalogue {
	req := func(id, untestable string) catalog.Requirement {
		return catalog.Requirement{ID: id, Area: "a", Level: catalog.Must, Untestable: untestable}
	}
	cov := func(title string, ids ...string) coverage.Section {
		return coverage.Section{Doc: enDoc, Title: title, Status: coverage.Covered, Requirements: ids}
	}
	zh := cov("资源版本", "P-1", "F-1")
	zh.Doc, zh.SameAs = zhDoc, []string{"Failing", "Mixed"}
	return Catalogue{
		Requirements: []catalog.Requirement{req("P-1", ""), req("F-1", ""), req("U-1", ""), req("R-1", ""), req("N-1", ""), req("X-1", "cannot be seen")},
		Coverage: coverage.Map{
			Documents: []coverage.Document{{Doc: enDoc, Title: "Concepts"}, {Doc: zhDoc, Title: "Concepts (Chinese)"}},
			Sections: []coverage.Section{
				cov("Failing", "F-1", "P-1"),
				cov("Unrun", "U-1", "R-1"),
				cov("Outside the run", "U-1"),
				cov("Mixed", "P-1", "U-1"),
				cov("Untestable only", "X-1"),
				cov("Not applicable", "N-1", "X-1"),
				{Doc: enDoc, Title: "Static", Status: coverage.Static, Static: []string{"list-kind"}},
				{Doc: enDoc, Title: "Why not", Status: coverage.Untestable, Untestable: "nothing to see"},
				{Doc: enDoc, Title: "Later", Status: coverage.Gap, Gap: "issue #1"},
				zh,
			},
		},
	}
}

// coverageRun passes P-1, fails F-1, has R-1 selected but never started,
// N-1 not applicable, and no spec of U-1 or X-1 (outside the focus).
func coverageRun(name string) result.Result {
	return result.Result{Target: result.Target{Name: name}, Specs: []result.SpecResult{
		spec(result.Passed, "P-1"), spec(result.Failed, "F-1"), spec(result.NotRun, "R-1"), spec(result.NotApplicable, "N-1"),
	}}
}

func TestCoverageJoin(t *testing.T) {
	rep := Build(coverageFixture(), coverageRun("one"))
	cov := rep.Columns[0].Coverage
	if cov == nil || rep.Results[0].Coverage != cov {
		t.Fatalf("coverage %p, result's %p: want the same, set", cov, rep.Results[0].Coverage)
	}
	type reqOut = map[string]result.Checked
	cases := []struct {
		doc, title string
		status     string
		outcome    result.Checked
		reqs       reqOut
	}{
		{enDoc, "Failing", "covered", result.CheckedFailed, reqOut{"F-1": result.CheckedFailed, "P-1": result.CheckedPassed}},
		{enDoc, "Unrun", "covered", result.CheckedNotRun, reqOut{"U-1": result.CheckedNotInRun, "R-1": result.CheckedNotRun}},
		{enDoc, "Outside the run", "covered", result.CheckedNotInRun, reqOut{"U-1": result.CheckedNotInRun}},
		{enDoc, "Mixed", "covered", result.CheckedPartial, reqOut{"P-1": result.CheckedPassed, "U-1": result.CheckedNotInRun}},
		{enDoc, "Untestable only", "covered", result.CheckedUntestable, reqOut{"X-1": result.CheckedUntestable}},
		{enDoc, "Not applicable", "covered", result.CheckedNotApplicable, reqOut{"N-1": result.CheckedNotApplicable, "X-1": result.CheckedUntestable}},
		{enDoc, "Static", "static", "", nil},
		{enDoc, "Why not", "untestable", "", nil},
		{enDoc, "Later", "gap", "", nil},
		{zhDoc, "资源版本", "covered", result.CheckedFailed, reqOut{"P-1": result.CheckedPassed, "F-1": result.CheckedFailed}},
	}
	find := func(doc, title string) (result.SectionCoverage, bool) {
		for _, d := range cov.Documents {
			for _, s := range d.Sections {
				if d.Doc == doc && s.Title == title {
					return s, true
				}
			}
		}
		return result.SectionCoverage{}, false
	}
	for _, tc := range cases {
		t.Run(tc.title, func(t *testing.T) {
			s, ok := find(tc.doc, tc.title)
			if !ok {
				t.Fatalf("section %s § %s missing", tc.doc, tc.title)
			}
			got := reqOut{}
			for _, r := range s.Requirements {
				got[r.ID] = r.Outcome
			}
			if s.Status != tc.status || s.Outcome != tc.outcome || (len(tc.reqs) > 0 && !maps.Equal(got, tc.reqs)) || (len(tc.reqs) == 0 && len(got) > 0) {
				t.Errorf("status %s outcome %q requirements %v; want %s %q %v", s.Status, s.Outcome, got, tc.status, tc.outcome, tc.reqs)
			}
		})
	}
	if s, _ := find(enDoc, "Static"); !slices.Equal(s.Static, []string{"list-kind"}) {
		t.Errorf("static rules %v", s.Static)
	}
	if s, _ := find(enDoc, "Why not"); s.Untestable != "nothing to see" {
		t.Errorf("untestable reason %q", s.Untestable)
	}
	if s, _ := find(zhDoc, "资源版本"); !slices.Equal(s.SameAs, []string{"Failing", "Mixed"}) {
		t.Errorf("sameAs %v", s.SameAs)
	}

	en := cov.Documents[0]
	if en.Title != "Concepts" || en.Lang != "en" || en.URL == "" {
		t.Errorf("document %s: title %q lang %q url %q", en.Doc, en.Title, en.Lang, en.URL)
	}
	want := result.CoverageTotals{Sections: 9, Covered: 6, Static: 1, Untestable: 1, Gap: 1, Outcomes: map[result.Checked]int{
		result.CheckedFailed: 1, result.CheckedNotRun: 1, result.CheckedNotInRun: 1, result.CheckedPartial: 1,
		result.CheckedUntestable: 1, result.CheckedNotApplicable: 1}}
	if !totalsEqual(en.Totals, want) {
		t.Errorf("%s totals %+v, want %+v", en.Doc, en.Totals, want)
	}
	want.Sections, want.Covered = 10, 7
	want.Outcomes[result.CheckedFailed] = 2
	if !totalsEqual(cov.Totals, want) {
		t.Errorf("all totals %+v, want %+v", cov.Totals, want)
	}
}

func totalsEqual(a, b result.CoverageTotals) bool {
	return a.Sections == b.Sections && a.Covered == b.Covered && a.Static == b.Static && a.Untestable == b.Untestable &&
		a.Gap == b.Gap && maps.Equal(a.Outcomes, b.Outcomes)
}

// Each column of a comparison has its own outcomes over the same map.
func TestCoveragePerColumn(t *testing.T) {
	fixed := coverageRun("two")
	fixed.Specs[1].Outcome = result.Passed
	rep := Build(coverageFixture(), coverageRun("one"), fixed)
	a, b := rep.Columns[0].Coverage, rep.Columns[1].Coverage
	if a.Documents[0].Sections[0].Outcome != result.CheckedFailed || b.Documents[0].Sections[0].Outcome != result.CheckedPassed {
		t.Errorf("section Failing: %s then %s, want failed then passed", a.Documents[0].Sections[0].Outcome, b.Documents[0].Sections[0].Outcome)
	}
	if len(a.Documents) != len(b.Documents) || len(a.Documents[0].Sections) != len(b.Documents[0].Sections) {
		t.Error("the columns' maps differ in shape")
	}
}

// No map, no coverage: fixture catalogues without one draw no section.
func TestCoverageAbsentWithoutMap(t *testing.T) {
	rep := Build(fixture(), coverageRun("one"))
	if rep.Columns[0].Coverage != nil || rep.Results[0].Coverage != nil {
		t.Error("coverage without a map")
	}
}

// A saved result's coverage is derived: re-rendering computes it again from
// the catalogue, whatever the file says, and a file without it (v1.1) gets
// the same.
func TestCoverageRecomputedFromSavedResult(t *testing.T) {
	cat := coverageFixture()
	var buf bytes.Buffer
	if err := result.Write(&buf, Build(cat, coverageRun("one")).Results[0]); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte(`"coverage": {`)) || !bytes.Contains(buf.Bytes(), []byte(result.SchemaVersion)) {
		t.Fatalf("written result lacks coverage or %s", result.SchemaVersion)
	}
	saved, err := result.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	saved.Coverage.Documents[0].Sections[0].Outcome = result.CheckedPassed // tampered with
	old := saved
	old.SchemaVersion, old.Coverage = "apiconform.io/result/v1.1", nil
	for name, r := range map[string]result.Result{"v1.2 file": saved, "v1.1 file": old} {
		got := Build(cat, r).Columns[0].Coverage
		if got.Documents[0].Sections[0].Outcome != result.CheckedFailed {
			t.Errorf("%s: section Failing is %s, want failed (recomputed)", name, got.Documents[0].Sections[0].Outcome)
		}
	}
}

// The real catalogue's map: every requirement a section names is
// catalogued, and a run with no specs leaves every covered section outside
// the run (or untestable). No count is fixed: the catalogue grows.
func TestCoverageOfTheRealCatalogue(t *testing.T) {
	cat := FromCatalog()
	if cat.CoverageProblem != "" {
		// spec/coverage's own test says which; here the join must still hold.
		t.Logf("coverage problem: %s", cat.CoverageProblem)
	}
	ids := map[string]bool{}
	for _, r := range cat.Requirements {
		ids[r.ID] = true
	}
	rep := Build(cat, result.Result{Target: result.Target{Name: "empty"}})
	cov := rep.Columns[0].Coverage
	totals := cat.Coverage.Totals()
	if cov.Totals.Sections != len(cat.Coverage.Sections) || cov.Totals.Covered != totals[coverage.Covered] ||
		cov.Totals.Static != totals[coverage.Static] || cov.Totals.Untestable != totals[coverage.Untestable] || cov.Totals.Gap != totals[coverage.Gap] {
		t.Errorf("totals %+v, map %v over %d sections", cov.Totals, totals, len(cat.Coverage.Sections))
	}
	if len(cov.Documents) != len(catalog.KnownDocs) {
		t.Errorf("%d documents, want %d", len(cov.Documents), len(catalog.KnownDocs))
	}
	for _, d := range cov.Documents {
		for _, s := range d.Sections {
			for _, r := range s.Requirements {
				if !ids[r.ID] {
					t.Errorf("%s § %s names %s, not in the catalogue", d.Doc, s.Title, r.ID)
				}
			}
			if s.Status == "covered" && s.Outcome != result.CheckedNotInRun && s.Outcome != result.CheckedUntestable {
				t.Errorf("%s § %s: %s in a run without specs", d.Doc, s.Title, s.Outcome)
			}
		}
	}
}
