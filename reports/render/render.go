// Package render draws a reports.Report in each output format. Every
// renderer reads the same model and never re-judges a result.
package render

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

// Format names an output format.
type Format string

const (
	Terminal Format = "terminal"
	Markdown Format = "md"
	HTML     Format = "html"
	JUnit    Format = "junit"
	JSON     Format = "json"
	// Summary is short Markdown for PR comments and CI job summaries:
	// headline, counts per area and level, one line per failure.
	Summary Format = "summary"
)

// Formats lists every format in the order the CLI documents them.
func Formats() []Format { return []Format{Terminal, Markdown, HTML, JUnit, JSON, Summary} }

// ParseFormat accepts a format name (and "markdown" for md).
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case Terminal, Markdown, HTML, JUnit, JSON, Summary:
		return f, nil
	case "markdown":
		return Markdown, nil
	}
	names := make([]string, 0, 6)
	for _, f := range Formats() {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown format %q (want one of %s)", s, strings.Join(names, ", "))
}

// Render writes rep to w in format f. Terminal output is coloured only when
// w is a terminal and NO_COLOR is unset.
func Render(w io.Writer, f Format, rep *reports.Report) error {
	switch f {
	case Terminal:
		return WriteTerminal(w, rep, ColorFor(w))
	case Markdown:
		return WriteMarkdown(w, rep)
	case HTML:
		return WriteHTML(w, rep)
	case JUnit:
		return WriteJUnit(w, rep)
	case JSON:
		return WriteJSON(w, rep)
	case Summary:
		return WriteSummary(w, rep, SummaryOptions{})
	}
	return fmt.Errorf("unknown format %q", f)
}

// ColorFor reports whether w is a terminal that should get ANSI colours.
func ColorFor(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// statusNames holds each verdict's plain word, its Markdown icon and its
// HTML glyph (HTML uses glyphs every system font has; emoji fonts are often missing).
var statusNames = map[reports.Status]struct{ word, icon, glyph string }{
	reports.Pass:          {"pass", "✅", "✓"},
	reports.Fail:          {"FAIL", "❌", "✗"},
	reports.Error:         {"ERROR", "⚠️", "!"},
	reports.Skip:          {"skip", "⏭️", "↷"},
	reports.NotApplicable: {"n/a", "➖", "–"},
	reports.NotRun:        {"not run", "⏸️", "‖"},
	reports.NotCovered:    {"not covered", "⚪", "○"},
}

func statusName(s reports.Status) struct{ word, icon, glyph string } {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return statusNames[reports.NotCovered]
}

// statusWord is the plain-text name of a verdict.
func statusWord(s reports.Status) string { return statusName(s).word }

// cellWord is statusWord, except that an uncovered requirement the
// catalogue calls untestable reads "untestable".
func cellWord(c reports.Cell) string {
	if c.Status == reports.NotCovered && c.Untestable {
		return "untestable"
	}
	return statusWord(c.Status)
}

// statusIcon is a one-glyph verdict for Markdown.
func statusIcon(s reports.Status) string { return statusName(s).icon }

func levelText(r reports.Row) string {
	if r.Requirement.Level == "" {
		return "?"
	}
	return string(r.Requirement.Level)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func fmtDuration(d result.Duration) string {
	return d.Std().Round(100 * time.Millisecond).String()
}

// tallyText is "6 pass · 1 fail · 0 skip · 0 not covered".
func tallyText(t reports.Tally) string {
	parts := []string{fmt.Sprintf("%d pass", t.Pass), fmt.Sprintf("%d fail", t.Fail)}
	if t.Error > 0 {
		parts = append(parts, fmt.Sprintf("%d error", t.Error))
	}
	parts = append(parts, fmt.Sprintf("%d skip", t.Skip))
	if t.NotApplicable > 0 {
		parts = append(parts, fmt.Sprintf("%d n/a", t.NotApplicable))
	}
	if t.NotRun > 0 {
		parts = append(parts, fmt.Sprintf("%d not run", t.NotRun))
	}
	parts = append(parts, fmt.Sprintf("%d not covered", t.NotCovered))
	if t.Untestable > 0 {
		parts = append(parts, fmt.Sprintf("%d untestable", t.Untestable))
	}
	return strings.Join(parts, " · ")
}

// shortTally is "5/6 pass · 1 fail": passed of testable, then only the
// states that occur.
func shortTally(t reports.Tally) string {
	parts := []string{fmt.Sprintf("%d/%d pass", t.Pass, t.Testable())}
	for _, p := range []struct {
		n    int
		word string
	}{{t.Fail, "fail"}, {t.Error, "error"}, {t.Skip, "skip"}, {t.NotRun, "not run"}, {t.NotApplicable, "n/a"}, {t.NotCovered, "not covered"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.word))
		}
	}
	return strings.Join(parts, " · ")
}

// incompleteText is the column's INCOMPLETE headline, with its label when
// the report has several columns; "" for a complete run.
func incompleteText(rep *reports.Report, c reports.Column) string {
	h := c.Incomplete.Headline()
	if h == "" || len(rep.Columns) < 2 {
		return h
	}
	return c.Label + ": " + h
}

// conformanceText is "85.7% (6 of 7)".
func conformanceText(t reports.Tally) string {
	return fmt.Sprintf("%s (%d of %d)", t.PercentText(), t.Pass, t.Testable())
}

func specsText(c result.Counts) string {
	s := fmt.Sprintf("%d passed · %d failed", c.Passed, c.Failed)
	if c.Errors > 0 {
		s += fmt.Sprintf(" · %d error", c.Errors)
	}
	s += fmt.Sprintf(" · %d skipped", c.Skipped)
	if c.NotApplicable > 0 {
		s += fmt.Sprintf(" · %d not applicable", c.NotApplicable)
	}
	if c.NotRun > 0 {
		s += fmt.Sprintf(" · %d not run", c.NotRun)
	}
	return s
}

func capabilitiesText(caps map[string]bool) string {
	if len(caps) == 0 {
		return "none detected"
	}
	names := sortedKeys(caps)
	parts := make([]string, len(names))
	for i, n := range names {
		mark := "no"
		if caps[n] {
			mark = "yes"
		}
		parts[i] = n + ": " + mark
	}
	return strings.Join(parts, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// firstLine is the first non-empty line of s.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			return t
		}
	}
	return ""
}

// deviationText describes a known kube-apiserver deviation in one sentence.
func deviationText(r reports.Row) string {
	d := r.Requirement.Deviation
	if d == nil {
		return ""
	}
	v := ""
	if d.Version != "" {
		v = " " + d.Version
	}
	return fmt.Sprintf("kube-apiserver%s deviates: observed %s; the document says “%s”", v, d.Observed, d.DocSays)
}

// exchangeText is a plain HTTP-style dump of one exchange, its bodies
// trimmed by shownBody (keep: managedFields stay; limit 0: no cut).
func exchangeText(x result.Exchange, keep bool, limit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n", x.Method, x.URL)
	for _, h := range x.RequestHeaders {
		fmt.Fprintf(&b, "%s: %s\n", h.Name, h.Value)
	}
	if x.RequestBody != "" {
		fmt.Fprintf(&b, "\n%s\n", shownBody(x.RequestBody, keep, limit))
	}
	fmt.Fprintf(&b, "\n→ %d\n", x.Status)
	for _, h := range x.ResponseHeaders {
		fmt.Fprintf(&b, "%s: %s\n", h.Name, h.Value)
	}
	if x.ResponseBody != "" {
		fmt.Fprintf(&b, "\n%s\n", shownBody(x.ResponseBody, keep, limit))
	}
	if x.Note != "" {
		fmt.Fprintf(&b, "(%s)\n", x.Note)
	}
	return b.String()
}

// source is a requirement's source as reports show it: in English, with
// the original words of a translated document and the upstream page.
type source struct {
	Section, Quote string // English where the catalogue has a rendering
	Original       string // the quote in the document's own language, when not English
	Lang           string // that language (BCP 47)
	URL            string // upstream page (and section), "" when unknown
}

func sourceOf(rq catalog.Requirement) source {
	s := rq.Source
	out := source{Section: s.Section, Quote: s.Quote, URL: catalog.SourceURL(s)}
	if s.SectionEn != "" {
		out.Section = s.SectionEn
	}
	if !catalog.IsEnglish(s.Quote) {
		out.Lang = "zh"
		if u, ok := catalog.UpstreamOf(s.Doc); ok && u.Lang != "en" {
			out.Lang = u.Lang
		}
		out.Original = s.Quote
		out.Quote = s.QuoteEn
	}
	return out
}

// outcomeWord is a spec outcome for people.
func outcomeWord(o result.Outcome) string {
	switch o {
	case result.NotApplicable:
		return "not applicable"
	case result.NotRun:
		return "not run"
	case result.Errored:
		return "error"
	}
	return string(o)
}
