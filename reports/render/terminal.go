package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/apiconform/apiconform/reports"
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
	case reports.Skip:
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

// WriteTerminal draws the report as text tables; color adds ANSI colours.
func WriteTerminal(out io.Writer, rep *reports.Report, color bool) error {
	w := bufio.NewWriter(out)
	p := painter(color)

	fmt.Fprintln(w, p.paint(ansiBold, "apiconform conformance report"))
	fmt.Fprintln(w)
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
	line("Started", func(c reports.Column) string { return fmtTime(c.StartedAt) })
	line("Duration", func(c reports.Column) string { return fmtDuration(c.Duration) })
	line("MUST conformance", func(c reports.Column) string { return p.paint(ansiBold, conformanceText(c.Must)) })
	line("All requirements", func(c reports.Column) string { return conformanceText(c.All) })
	line("Specs", func(c reports.Column) string { return specsText(c.Specs) })
	line("Capabilities", func(c reports.Column) string { return capabilitiesText(c.Target.Capabilities) })
	if err := sum.Render(); err != nil {
		return err
	}
	fmt.Fprintln(w, "Conformance = requirements passed ÷ testable requirements; skipped and uncovered ones count against it.")

	if len(rep.Columns) > 1 {
		fmt.Fprintln(w)
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

	fmt.Fprintln(w)
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

	fmt.Fprintln(w)
	fmt.Fprintln(w, p.paint(ansiBold, "Totals"))
	tt := newTable(w)
	th := []any{"Group"}
	for _, c := range rep.Columns {
		th = append(th, c.Label)
	}
	tt.Header(th...)
	for _, g := range rep.Areas {
		r := []string{"area " + g.Name}
		for _, t := range g.Totals {
			r = append(r, tallyText(t)+" ("+t.PercentText()+")")
		}
		_ = tt.Append(r)
	}
	for _, l := range rep.Levels {
		r := []string{"level " + string(l.Level)}
		for _, t := range l.Totals {
			r = append(r, tallyText(t)+" ("+t.PercentText()+")")
		}
		_ = tt.Append(r)
	}
	if err := tt.Render(); err != nil {
		return err
	}

	for _, t := range rep.Tables {
		fmt.Fprintln(w)
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

	if len(rep.Failures) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, p.paint(ansiBold, fmt.Sprintf("Failures (%d)", len(rep.Failures))))
		for i, f := range rep.Failures {
			fmt.Fprintln(w)
			fmt.Fprintf(w, "%d. %s %s\n", i+1, p.paint(ansiBold+ansiRed, "["+f.Label+"]"), f.Spec.Name)
			fmt.Fprintf(w, "   requirements: %s\n", strings.Join(f.Spec.Requirements, ", "))
			if f.Spec.Failure != nil {
				if f.Spec.Failure.Location != "" {
					fmt.Fprintf(w, "   at %s\n", f.Spec.Failure.Location)
				}
				fmt.Fprintln(w, indent(f.Spec.Failure.Message, "   | "))
			}
			for j, x := range f.Spec.Exchanges {
				fmt.Fprintf(w, "   exchange %d:\n", j+1)
				fmt.Fprintln(w, indent(strings.TrimRight(exchangeText(x), "\n"), "     "))
			}
		}
	}
	return w.Flush()
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
