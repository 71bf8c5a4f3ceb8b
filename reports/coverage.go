package reports

import (
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/coverage"
)

// checkedOf is a matrix cell's verdict in the coverage map's words: an
// uncovered requirement is untestable when the catalogue says so, and
// otherwise simply not in this run (outside --focus, or no spec yet).
func checkedOf(c Cell) result.Checked {
	switch c.Status {
	case Pass:
		return result.CheckedPassed
	case Fail:
		return result.CheckedFailed
	case Error:
		return result.CheckedError
	case Skip:
		return result.CheckedSkipped
	case NotApplicable:
		return result.CheckedNotApplicable
	case NotRun:
		return result.CheckedNotRun
	}
	if c.Untestable {
		return result.CheckedUntestable
	}
	return result.CheckedNotInRun
}

// joinCoverage is the coverage map with column c's verdicts: each covered
// section's requirements take their matrix verdict, the section their
// combination, and every document its totals. nil when the catalogue has
// no map.
func joinCoverage(cat Catalogue, rows []Row, c int) *result.Coverage {
	m := cat.Coverage
	if len(m.Sections) == 0 {
		return nil
	}
	verdict := make(map[string]result.Checked, len(rows))
	for _, r := range rows {
		verdict[r.Requirement.ID] = checkedOf(r.Cells[c])
	}
	out := &result.Coverage{Documents: []result.DocCoverage{}, Note: cat.CoverageProblem,
		Totals: result.CoverageTotals{Outcomes: map[result.Checked]int{}}}
	docIndex := map[string]int{}
	addDoc := func(doc, title string) int {
		if i, ok := docIndex[doc]; ok {
			return i
		}
		d := result.DocCoverage{Doc: doc, Title: title, Sections: []result.SectionCoverage{},
			Totals: result.CoverageTotals{Outcomes: map[result.Checked]int{}}}
		if u, ok := catalog.UpstreamOf(doc); ok {
			d.Lang, d.URL = u.Lang, u.URL
		}
		docIndex[doc] = len(out.Documents)
		out.Documents = append(out.Documents, d)
		return docIndex[doc]
	}
	for _, d := range m.Documents {
		addDoc(d.Doc, d.Title)
	}
	for _, s := range m.Sections {
		d := &out.Documents[addDoc(s.Doc, s.Doc)]
		sc := result.SectionCoverage{Title: s.Title, Parent: s.Parent, SameAs: s.SameAs, Status: string(s.Status)}
		if s.Status == coverage.Covered {
			outs := make([]result.Checked, 0, len(s.Requirements))
			for _, id := range s.Requirements {
				v, ok := verdict[id]
				if !ok {
					v = result.CheckedNotInRun // a map built from another catalogue
				}
				sc.Requirements = append(sc.Requirements, result.RequirementChecked{ID: id, Outcome: v})
				outs = append(outs, v)
			}
			sc.Outcome = result.SectionOutcome(outs)
		} else {
			sc.Static, sc.Untestable, sc.Gap = s.Static, s.Untestable, s.Gap
		}
		d.Sections = append(d.Sections, sc)
		d.Totals.Add(sc.Status, sc.Outcome)
		out.Totals.Add(sc.Status, sc.Outcome)
	}
	return out
}
