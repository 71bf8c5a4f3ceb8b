package render

import (
	"fmt"
	"strings"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

// checkedNames holds each coverage outcome's word, Markdown icon and HTML
// glyph, and the class of the matrix verdict it looks like.
var checkedNames = map[result.Checked]struct{ word, icon, glyph, class string }{
	result.CheckedPassed:        {"passed", "✅", "✓", string(reports.Pass)},
	result.CheckedFailed:        {"failed", "❌", "✗", string(reports.Fail)},
	result.CheckedError:         {"error", "⚠️", "!", string(reports.Error)},
	result.CheckedSkipped:       {"skipped", "⏭️", "↷", string(reports.Skip)},
	result.CheckedNotApplicable: {"not applicable", "➖", "–", string(reports.NotApplicable)},
	result.CheckedNotRun:        {"not run", "⏸️", "‖", string(reports.NotRun)},
	result.CheckedNotInRun:      {"not in this run", "⚪", "○", string(reports.NotCovered)},
	result.CheckedUntestable:    {"untestable", "🚫", "∅", string(reports.NotCovered)},
	result.CheckedPartial:       {"partly checked", "🟡", "◐", string(reports.Skip)},
}

func checkedName(c result.Checked) struct{ word, icon, glyph, class string } {
	if n, ok := checkedNames[c]; ok {
		return n
	}
	return checkedNames[result.CheckedNotInRun]
}

// coverageLegend explains the marks of the coverage tables (Markdown).
const coverageLegend = "✅ passed · ❌ failed · ⚠️ error · ⏭️ skipped · ➖ not applicable · ⏸️ not run (selected, never started) · " +
	"⚪ not in this run (outside --focus, or no spec yet) · 🚫 untestable · 🟡 partly checked (a section some of whose requirements were not checked)"

// coverageIntro says what the coverage section is.
const coverageIntro = "Every section heading of the stored documents and what answers for it: the requirements drawn from it with this run's outcome, " +
	"the lint/compat rules that check it (static), why nothing observable can (untestable), or that it is a known gap. " +
	"`apiconform spec --coverage` prints the map alone."

// coverages is each column's coverage, or nil when the report has none.
func coverages(rep *reports.Report) []*result.Coverage {
	var out []*result.Coverage
	for _, c := range rep.Columns {
		if c.Coverage == nil {
			return nil
		}
		out = append(out, c.Coverage)
	}
	return out
}

// statusCounts is "12 sections: 9 covered · 1 static · 2 untestable · 0 gap".
func statusCounts(t result.CoverageTotals) string {
	return fmt.Sprintf("%s: %d covered · %d static · %d untestable · %d gap", plural(t.Sections, "section"), t.Covered, t.Static, t.Untestable, t.Gap)
}

// statusShort is "6: 5 covered · 1 untestable", only the statuses that occur.
func statusShort(t result.CoverageTotals) string {
	var parts []string
	for _, p := range []struct {
		n    int
		word string
	}{{t.Covered, "covered"}, {t.Static, "static"}, {t.Untestable, "untestable"}, {t.Gap, "gap"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	return fmt.Sprintf("%d: %s", t.Sections, strings.Join(parts, " · "))
}

// outcomeCounts is the covered sections by outcome, gravest first, only
// the outcomes that occur: "3 passed · 1 failed"; icon adds the Markdown mark.
func outcomeCounts(t result.CoverageTotals, icon bool) string {
	var parts []string
	for _, c := range result.CheckedOrder {
		if n := t.Outcomes[c]; n > 0 {
			if icon {
				parts = append(parts, fmt.Sprintf("%d %s %s", n, checkedName(c).icon, checkedName(c).word))
			} else {
				parts = append(parts, fmt.Sprintf("%d %s", n, checkedName(c).word))
			}
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " · ")
}

// sectionHeading is "Resource versions › Semantics for get and list".
func sectionHeading(s result.SectionCoverage) string {
	if s.Parent == "" {
		return s.Title
	}
	return s.Parent + " › " + s.Title
}

// sectionAnswer is what answers for a section that is not covered: its
// rules, why it is untestable, or the gap.
func sectionAnswer(s result.SectionCoverage) string {
	switch {
	case len(s.Static) > 0:
		return "rules " + strings.Join(s.Static, ", ")
	case s.Untestable != "":
		return s.Untestable
	}
	return s.Gap
}

// failingSections names the sections with a failed requirement in cov:
// "000 § Semantics for watch".
func failingSections(cov *result.Coverage) []string {
	var out []string
	for _, d := range cov.Documents {
		for _, s := range d.Sections {
			if s.Outcome == result.CheckedFailed {
				out = append(out, docShort(d.Doc)+" § "+s.Title)
			}
		}
	}
	return out
}

// docShort is a stored document's number ("000" for 000_3a1b….txt).
func docShort(doc string) string {
	if i := strings.IndexByte(doc, '_'); i > 0 {
		return doc[:i]
	}
	return doc
}

// firstFailure maps each requirement to the index of its first failure or
// error in problems(rep), for links from the coverage tables.
func firstFailure(rep *reports.Report) map[string]int {
	out := map[string]int{}
	for i, f := range problems(rep) {
		for _, id := range f.Spec.Requirements {
			if _, ok := out[id]; !ok {
				out[id] = i
			}
		}
	}
	return out
}

// plural is "1 section" or "3 sections".
func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
