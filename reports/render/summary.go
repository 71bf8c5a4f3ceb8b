package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

// MaxSummaryBytes bounds the summary: a GitHub PR comment holds 65,536
// characters and a job summary 1 MiB; the summary stays well under both
// however many specs fail.
const MaxSummaryBytes = 60_000

// SummaryOptions shape the summary.
type SummaryOptions struct {
	// Reports are the paths of the full reports, named at the end.
	Reports []string
	// MaxBytes overrides MaxSummaryBytes when > 0.
	MaxBytes int
}

// WriteSummary writes short GitHub-flavoured Markdown for a PR comment or a
// CI job summary: a headline per result, per-area and per-level counts, one
// line per failure or error, and where the full report is. Failure lines
// stop, with a count of the rest, before the output would exceed the limit.
func WriteSummary(w io.Writer, rep *reports.Report, o SummaryOptions) error {
	limit := o.MaxBytes
	if limit <= 0 {
		limit = MaxSummaryBytes
	}
	var b strings.Builder
	heads := make([]string, len(rep.Columns))
	for i, c := range rep.Columns {
		heads[i] = summaryHeadline(c)
	}
	fmt.Fprintf(&b, "## apiconform: %s\n\n", strings.Join(heads, " · "))
	for _, c := range rep.Columns {
		if h := incompleteText(rep, c); h != "" {
			fmt.Fprintf(&b, "> [!WARNING]\n> **%s**\n\n", mdCell(h))
		}
	}

	labels := make([]string, len(rep.Columns))
	for i, c := range rep.Columns {
		labels[i] = mdCell(c.Label)
	}
	fmt.Fprintf(&b, "| | %s |\n|---|%s\n", strings.Join(labels, " | "), strings.Repeat("---|", len(labels)))
	row := func(name string, f func(reports.Column) string) {
		cells := make([]string, len(rep.Columns))
		for i, c := range rep.Columns {
			cells[i] = f(c)
		}
		fmt.Fprintf(&b, "| %s | %s |\n", name, strings.Join(cells, " | "))
	}
	row("Server", func(c reports.Column) string { return mdCode(c.Target.Server) })
	row("Version", func(c reports.Column) string { return mdCode(c.Target.Version) })
	row("**MUST conformance**", func(c reports.Column) string {
		return fmt.Sprintf("**%s** (%d of %d)", c.Must.PercentText(), c.Must.Pass, c.Must.Testable())
	})
	row("All requirements", func(c reports.Column) string { return conformanceText(c.All) })
	row("Specs", func(c reports.Column) string { return specsText(c.Specs) + " in " + fmtDuration(c.Duration) })
	for _, g := range rep.Areas {
		row("area `"+mdCell(g.Name)+"`", func(c reports.Column) string { return shortTally(g.Totals[indexOf(rep, c)]) })
	}
	for _, l := range rep.Levels {
		row("level **"+string(l.Level)+"**", func(c reports.Column) string { return shortTally(l.Totals[indexOf(rep, c)]) })
	}
	if line := summaryCoverage(rep); line != "" {
		fmt.Fprintf(&b, "\n%s\n", line)
	}
	if len(rep.Columns) > 1 {
		fmt.Fprintf(&b, "\n%d regressions · %d fixes · %d other changes against %s.\n", rep.Count(reports.Regression),
			rep.Count(reports.Fix), rep.Count(reports.Changed), labels[0])
	}

	footer := "\n" + summaryFooter(rep, o.Reports)
	probs := problems(rep)
	if len(probs) > 0 {
		fmt.Fprintf(&b, "\n### %s\n\n", problemsTitle(rep))
		for i, f := range probs {
			line := summaryLine(rep, f) + "\n"
			rest := fmt.Sprintf("- … and %d more: see the full report.\n", len(probs)-i)
			if b.Len()+len(line)+len(rest)+len(footer) > limit {
				b.WriteString(rest)
				break
			}
			b.WriteString(line)
		}
	}
	b.WriteString(footer)
	out := b.String()
	if len(out) > limit { // only a pathological header (thousands of areas) gets here
		out = clipBytes(out, limit-len(footer)) + footer
	}
	_, err := io.WriteString(w, out)
	return err
}

// maxFailingSections bounds the failing sections the summary names per result.
const maxFailingSections = 5

// summaryCoverage is the one coverage line: the sections by what answers
// for them, the covered ones by outcome and the failing ones by name.
func summaryCoverage(rep *reports.Report) string {
	covs := coverages(rep)
	if covs == nil {
		return ""
	}
	t := covs[0].Totals
	line := fmt.Sprintf("Documentation coverage: %d sections (%d covered · %d static · %d untestable · %d gap)", t.Sections, t.Covered, t.Static, t.Untestable, t.Gap)
	var outs, failing []string
	for i, c := range covs {
		label := ""
		if len(covs) > 1 {
			label = mdCell(rep.Columns[i].Label) + ": "
		}
		outs = append(outs, label+outcomeCounts(c.Totals, false))
		if names := failingSections(c); len(names) > 0 {
			if len(names) > maxFailingSections {
				names = append(names[:maxFailingSections:maxFailingSections], fmt.Sprintf("and %d more", len(names)-maxFailingSections))
			}
			for j := range names {
				names[j] = mdText(names[j])
			}
			failing = append(failing, label+strings.Join(names, ", "))
		}
	}
	line += "; covered sections in this run: " + strings.Join(outs, "; ")
	if len(failing) > 0 {
		line += "; failing sections: " + strings.Join(failing, "; ")
	}
	return line + "."
}

func indexOf(rep *reports.Report, c reports.Column) int {
	for i := range rep.Columns {
		if rep.Columns[i].Label == c.Label {
			return i
		}
	}
	return 0
}

// summaryHeadline is "❌ refserver: 15 failed, MUST 88.2%".
func summaryHeadline(c reports.Column) string {
	icon, what := "✅", "all passed"
	switch {
	case c.Specs.Failed > 0:
		icon, what = "❌", fmt.Sprintf("%d failed", c.Specs.Failed)
		if c.Specs.Errors > 0 {
			what += fmt.Sprintf(", %d error", c.Specs.Errors)
		}
	case c.Specs.Errors > 0:
		icon, what = "⚠️", fmt.Sprintf("%d error", c.Specs.Errors)
	case c.Specs.Passed == 0:
		icon, what = "⚪", "nothing passed"
	}
	if c.Incomplete != nil {
		icon, what = "⚠️", "INCOMPLETE, "+what
	}
	return fmt.Sprintf("%s %s — %s, MUST conformance %s", icon, mdCell(c.Label), what, c.Must.PercentText())
}

// summaryLine is one failure: icon, requirement IDs with their strongest
// level, the verdict, and the result's label when several are compared.
func summaryLine(rep *reports.Report, f reports.SpecEntry) string {
	icon := "❌"
	if f.Spec.Outcome == result.Errored {
		icon = "⚠️"
	}
	ids := make([]string, len(f.Spec.Requirements))
	for i, id := range f.Spec.Requirements {
		ids[i] = "`" + id + "`"
	}
	head := strings.Join(ids, ", ")
	if head == "" {
		head = "`" + mdCell(f.Spec.Area) + "`"
	}
	if l := strongestLevel(rep, f.Spec.Requirements); l != "" {
		head += " " + string(l)
	}
	if len(rep.Columns) > 1 {
		head = mdCell(f.Label) + ": " + head
	}
	v := verdictText(f.Spec)
	if f.Spec.Outcome == result.Errored {
		v = "error: " + v
	}
	return fmt.Sprintf("- %s %s — %s", icon, head, mdText(v))
}

func strongestLevel(rep *reports.Report, ids []string) catalog.Level {
	var best catalog.Level
	for _, id := range ids {
		if row, ok := rep.Requirement(id); ok && row.Requirement.Level != "" {
			if best == "" || !best.AtLeast(row.Requirement.Level) {
				best = row.Requirement.Level
			}
		}
	}
	return best
}

func summaryFooter(rep *reports.Report, paths []string) string {
	var skipped, na, notRun int
	for _, c := range rep.Columns {
		skipped += c.Specs.Skipped
		na += c.Specs.NotApplicable
		notRun += c.Specs.NotRun
	}
	var b strings.Builder
	if skipped+na+notRun > 0 {
		fmt.Fprintf(&b, "%d skipped (each with its documented allowance), %d not applicable, %d not run: listed in the full report.\n\n",
			skipped, na, notRun)
	}
	if len(paths) == 0 {
		b.WriteString("Full report: `apiconform report RESULT.json --format html` (or `md`, `junit`, `terminal -v`).\n")
		return b.String()
	}
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = "`" + p + "`"
	}
	fmt.Fprintf(&b, "Full report: %s.\n", strings.Join(quoted, " · "))
	return b.String()
}

// mdText escapes Markdown in running text (not a table cell).
func mdText(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "<", "&lt;", ">", "&gt;", "|", `\|`, "\n", " ")
	return r.Replace(s)
}

func clipBytes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}
