package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

type painter bool

func (p painter) paint(code, s string) string {
	if !p || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (p painter) status(s reports.Status) string {
	switch s {
	case reports.Pass:
		return p.paint(ansiGreen, statusWord(s))
	case reports.Fail:
		return p.paint(ansiBold+ansiRed, statusWord(s))
	case reports.Error:
		return p.paint(ansiBold+ansiYellow, statusWord(s))
	case reports.Skip, reports.NotRun:
		return p.paint(ansiYellow, statusWord(s))
	}
	return p.paint(ansiDim, statusWord(s))
}

func newTable(w io.Writer) *tablewriter.Table {
	return tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
}

// TerminalOptions shape the terminal report.
type TerminalOptions struct {
	Color bool
	// Verbose adds the requirement-by-requirement matrix, the documented
	// tables and every failure's HTTP exchanges.
	Verbose bool
	// Reports are the paths of the full reports, named at the end.
	Reports []string
}

// WriteTerminal draws the short terminal report (see WriteTerminalWith); color adds ANSI colours.
func WriteTerminal(out io.Writer, rep *reports.Report, color bool) error {
	return WriteTerminalWith(out, rep, TerminalOptions{Color: color})
}

// WriteTerminalWith draws the report as text: the summary, the matrix of
// areas and levels, one line per failure or error, and where the full
// reports are; Verbose adds the rest.
func WriteTerminalWith(out io.Writer, rep *reports.Report, o TerminalOptions) error {
	w := bufio.NewWriter(out)
	p := painter(o.Color)

	fmt.Fprintln(w, p.paint(ansiBold, "apiconform conformance report"))
	for _, c := range rep.Columns {
		if h := incompleteText(rep, c); h != "" {
			fmt.Fprintln(w, p.paint(ansiBold+ansiRed, h))
		}
	}
	sum := newTable(w)
	header := []any{""}
	for _, c := range rep.Columns {
		header = append(header, c.Label)
	}
	sum.Header(header...)
	line := func(name string, f func(reports.Column) string) {
		row := []string{name}
		for _, c := range rep.Columns {
			row = append(row, f(c))
		}
		_ = sum.Append(row)
	}
	line("Server", func(c reports.Column) string { return c.Target.Server })
	line("Version", func(c reports.Column) string { return c.Target.Version })
	line("Started", func(c reports.Column) string { return fmtTime(c.StartedAt) + ", " + fmtDuration(c.Duration) })
	line("MUST conformance", func(c reports.Column) string { return p.paint(ansiBold, conformanceText(c.Must)) })
	line("All requirements", func(c reports.Column) string { return conformanceText(c.All) })
	line("Specs", func(c reports.Column) string { return specsText(c.Specs) })
	line("Capabilities", func(c reports.Column) string { return capabilitiesText(c.Target.Capabilities) })
	if err := sum.Render(); err != nil {
		return err
	}

	if len(rep.Columns) > 1 {
		fmt.Fprintf(w, "%s — %d regressions, %d fixes, %d other changes against %s\n", p.paint(ansiBold, "Changes"),
			rep.Count(reports.Regression), rep.Count(reports.Fix), rep.Count(reports.Changed), rep.Columns[0].Label)
		if len(rep.Changes) > 0 {
			t := newTable(w)
			t.Header("Change", "Requirement", "Level", "Between", "From", "To")
			for _, ch := range rep.Changes {
				kind := string(ch.Kind)
				switch ch.Kind {
				case reports.Regression:
					kind = p.paint(ansiBold+ansiRed, "REGRESSION")
				case reports.Fix:
					kind = p.paint(ansiGreen, "fix")
				}
				_ = t.Append([]string{kind, ch.Requirement, string(ch.Level), ch.Baseline + " → " + ch.Other, p.status(ch.From), p.status(ch.To)})
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
	}

	fmt.Fprintln(w, p.paint(ansiBold, "Requirements by area and level")+" (passed of testable; skipped, not run and uncovered count against conformance)")
	tt := newTable(w)
	th := []any{"Group"}
	for _, c := range rep.Columns {
		th = append(th, c.Label)
	}
	tt.Header(th...)
	for _, g := range rep.Areas {
		r := []string{"area " + g.Name}
		for _, t := range g.Totals {
			r = append(r, paintTally(p, t))
		}
		_ = tt.Append(r)
	}
	for _, l := range rep.Levels {
		r := []string{"level " + string(l.Level)}
		for _, t := range l.Totals {
			r = append(r, paintTally(p, t))
		}
		_ = tt.Append(r)
	}
	if err := tt.Render(); err != nil {
		return err
	}

	if err := terminalCoverage(w, rep, p, o.Reports); err != nil {
		return err
	}

	if o.Verbose {
		if err := terminalMatrix(w, rep, p); err != nil {
			return err
		}
	}

	probs := problems(rep)
	if len(probs) > 0 {
		fmt.Fprintln(w, p.paint(ansiBold, problemsTitle(rep)))
		for _, f := range probs {
			mark := p.paint(ansiBold+ansiRed, "✗")
			if f.Spec.Outcome == result.Errored {
				mark = p.paint(ansiBold+ansiYellow, "!")
			}
			label := ""
			if len(rep.Columns) > 1 {
				label = "[" + f.Label + "] "
			}
			fmt.Fprintf(w, "  %s %s%s\n", mark, label, verdictLine(f.Spec))
		}
	}
	if o.Verbose {
		terminalDetails(w, rep, probs)
	}
	var more []string
	if len(probs) > 0 && !o.Verbose {
		more = append(more, "-v prints each failure's HTTP exchanges")
	}
	if len(o.Reports) > 0 {
		more = append(more, "full reports: "+strings.Join(o.Reports, ", "))
	}
	if len(more) > 0 {
		fmt.Fprintln(w, strings.Join(more, "; "))
	}
	return w.Flush()
}

// problemsTitle is "Failures (3)", "Failures (3) and errors (1)" or "Errors (1)".
func problemsTitle(rep *reports.Report) string {
	switch {
	case len(rep.Errors) == 0:
		return fmt.Sprintf("Failures (%d)", len(rep.Failures))
	case len(rep.Failures) == 0:
		return fmt.Sprintf("Errors (%d) — the harness could not finish these checks; not conformance failures", len(rep.Errors))
	}
	return fmt.Sprintf("Failures (%d) and errors (%d)", len(rep.Failures), len(rep.Errors))
}

func paintTally(p painter, t reports.Tally) string {
	s := t.PercentText() + "  " + shortTally(t)
	if t.Fail > 0 {
		return p.paint(ansiRed, s)
	}
	return s
}

// terminalCoverage is one line per document: its sections by what answers
// for them, and the covered ones by each result's outcome. The
// section-by-section map is in the Markdown and HTML reports.
func terminalCoverage(w io.Writer, rep *reports.Report, p painter, paths []string) error {
	covs := coverages(rep)
	if covs == nil {
		return nil
	}
	where := "report.md or report.html (`apiconform report RESULT.json --format md`)"
	for _, path := range paths {
		if strings.HasSuffix(path, ".md") && !strings.HasSuffix(path, summaryFile) {
			where = path
		}
	}
	fmt.Fprintf(w, "%s (covered sections by this run's outcome; section by section in %s)\n", p.paint(ansiBold, "Documentation coverage"), where)
	if covs[0].Note != "" {
		fmt.Fprintln(w, p.paint(ansiYellow, covs[0].Note))
	}
	t := newTable(w)
	h := []any{"Document", "Sections"}
	for _, c := range rep.Columns {
		h = append(h, c.Label)
	}
	t.Header(h...)
	row := func(name string, tot func(*result.Coverage) result.CoverageTotals) {
		r := []string{name, statusShort(tot(covs[0]))}
		for _, c := range covs {
			s := outcomeCounts(tot(c), false)
			if tot(c).Outcomes[result.CheckedFailed] > 0 {
				s = p.paint(ansiRed, s)
			}
			r = append(r, s)
		}
		_ = t.Append(r)
	}
	for di, d := range covs[0].Documents {
		row(docShort(d.Doc)+" "+d.Title, func(c *result.Coverage) result.CoverageTotals { return c.Documents[di].Totals })
	}
	row("all documents", func(c *result.Coverage) result.CoverageTotals { return c.Totals })
	return t.Render()
}

// summaryFile names the short summary among the reports (not the full map).
const summaryFile = "summary.md"

// terminalMatrix is the requirement-by-requirement matrix and the documented tables (-v).
func terminalMatrix(w io.Writer, rep *reports.Report, p painter) error {
	fmt.Fprintln(w, p.paint(ansiBold, "Requirements"))
	m := newTable(w)
	mh := []any{"Area", "Requirement", "Level"}
	for _, c := range rep.Columns {
		mh = append(mh, c.Label)
	}
	m.Header(mh...)
	var notes []string
	for _, g := range rep.Areas {
		for _, row := range g.Rows {
			id := row.Requirement.ID
			if row.Requirement.Deviation != nil {
				notes = append(notes, fmt.Sprintf("  %s: %s", id, deviationText(row)))
				id += " †"
			}
			r := []string{g.Name, id, levelText(row)}
			for _, cell := range row.Cells {
				if cell.Untestable {
					r = append(r, p.paint(ansiDim, cellWord(cell)))
					continue
				}
				r = append(r, p.status(cell.Status))
			}
			_ = m.Append(r)
		}
	}
	if err := m.Render(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "† known kube-apiserver deviation:")
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	for _, t := range rep.Tables {
		fmt.Fprintf(w, "%s  %s\n", p.paint(ansiBold, "Table: "+t.Title), markLegend(rep))
		dt := newTable(w)
		h := make([]any, len(t.Header))
		for i, s := range t.Header {
			h[i] = s
		}
		dt.Header(h...)
		for _, row := range t.Rows {
			var r []string
			for _, cell := range row {
				s := cell.Text
				if len(cell.Statuses) > 0 {
					var marks []string
					for _, st := range cell.Statuses {
						marks = append(marks, p.status(st))
					}
					s += " [" + strings.Join(marks, "/") + "]"
				}
				r = append(r, s)
			}
			_ = dt.Append(r)
		}
		if err := dt.Render(); err != nil {
			return err
		}
	}
	return nil
}

// terminalDetails prints each failure's location, message, what it
// observed and its exchanges (decisive first; setup and teardown as one
// line each) (-v).
func terminalDetails(w io.Writer, rep *reports.Report, probs []reports.SpecEntry) {
	for i, f := range probs {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%d. [%s] %s\n", i+1, f.Label, f.Spec.Name)
		if f.Spec.Failure != nil {
			if f.Spec.Failure.Location != "" {
				fmt.Fprintf(w, "   at %s\n", f.Spec.Failure.Location)
			}
			fmt.Fprintln(w, indent(strings.TrimSpace(f.Spec.Failure.Message), "   | "))
		}
		for _, o := range f.Spec.Observations {
			fmt.Fprintf(w, "   observed %s\n", observationLine(o, maxShownObservation))
		}
		main, aside := exchangeGroups(f.Spec.Exchanges)
		keep := keepsManagedFields(f.Spec)
		for _, x := range main {
			fmt.Fprintf(w, "   %s exchange:\n", roleLabel(x.Role))
			fmt.Fprintln(w, indent(strings.TrimRight(exchangeText(x, keep, maxShownBody), "\n"), "     "))
		}
		for _, x := range aside {
			fmt.Fprintf(w, "   %s: %s\n", roleLabel(x.Role), exchangeHead(x))
		}
	}
}

// markLegend says which column each mark in a table cell belongs to.
func markLegend(rep *reports.Report) string {
	labels := make([]string, len(rep.Columns))
	for i, c := range rep.Columns {
		labels[i] = c.Label
	}
	return "(marks: " + strings.Join(labels, " / ") + ")"
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(prefix+l, " ")
	}
	return strings.Join(lines, "\n")
}
