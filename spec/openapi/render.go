package openapi

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Formats Render writes.
var Formats = []string{"text", "markdown", "json", "junit", "exceptions"}

// maxListed caps the kinds and operations a text or Markdown line lists.
const maxListed = 5

// Render writes the report in format.
func Render(w io.Writer, r *Report, format string) error {
	switch format {
	case "text", "":
		return renderText(w, r)
	case "markdown", "md":
		return renderMarkdown(w, r)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		out := *r
		if out.Findings == nil {
			out.Findings = []Finding{}
		}
		return enc.Encode(out)
	case "junit":
		return renderJUnit(w, r)
	case "exceptions":
		for _, f := range r.Findings {
			if _, err := fmt.Fprintf(w, "%s  # %s\n", ExceptionLine(f), oneLine(f.Message)); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats, ", "))
}

func listed(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:maxListed], "; ") + fmt.Sprintf("; +%d more", len(items)-maxListed)
}

func summary(r *Report) string {
	counts := map[Level]int{}
	for _, f := range r.Findings {
		counts[f.Level]++
	}
	s := fmt.Sprintf("%d findings: %d error, %d warning, %d info", len(r.Findings), counts[Breaking], counts[Warning], counts[Info])
	if r.Ignored > 0 {
		s += fmt.Sprintf(" (%d accepted by exceptions)", r.Ignored)
	}
	return s
}

func renderText(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "%-7s %s %s\n        %s\n", f.Level, f.Rule, f.Location(), f.Message)
		if f.Note != "" {
			fmt.Fprintf(&b, "        note: %s\n", f.Note)
		}
		if len(f.Kinds) > 0 {
			fmt.Fprintf(&b, "        kinds: %s\n", listed(f.Kinds))
		}
		if len(f.Operations) > 0 {
			fmt.Fprintf(&b, "        operations (%d): %s\n", len(f.Operations), listed(f.Operations))
		}
	}
	fmt.Fprintf(&b, "%s %s: %s\n", r.Tool, strings.Join(r.Inputs, " -> "), summary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "`", "'").Replace(s)
}

func renderMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## apiconform %s\n\n`%s`: %s\n\n", r.Tool, strings.Join(r.Inputs, "` → `"), summary(r))
	if len(r.Findings) > 0 {
		b.WriteString("| Level | Rule | Location | Finding | Reached by |\n|---|---|---|---|---|\n")
		for _, f := range r.Findings {
			msg := f.Message
			if f.Note != "" {
				msg += " (" + f.Note + ")"
			}
			reach := listed(f.Kinds)
			if reach == "" {
				reach = listed(f.Operations)
			}
			fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s |\n", f.Level, f.Rule, mdEscape(f.Location()), mdEscape(msg), mdEscape(reach))
		}
		b.WriteString("\n")
	}
	used := map[string]bool{}
	for _, f := range r.Findings {
		used[f.Rule] = true
	}
	if len(used) > 0 {
		b.WriteString("### Rules\n\n")
		for _, rule := range r.Rules {
			if used[rule.ID] {
				applies := ""
				if rule.AppliesTo != "" {
					applies = " Applies to " + rule.AppliesTo + "."
				}
				fmt.Fprintf(&b, "- `%s` (%s) — %s: %s%s\n", rule.ID, rule.Level, rule.Source, rule.Statement, applies)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// renderJUnit writes one suite per rule: one failing test case per error or
// warning finding, info findings as passing cases, and a passing case for a clean rule.
func renderJUnit(w io.Writer, r *Report) error {
	byRule := map[string][]Finding{}
	for _, f := range r.Findings {
		byRule[f.Rule] = append(byRule[f.Rule], f)
	}
	out := junitSuites{Name: "apiconform " + r.Tool}
	rules := append([]Rule(nil), r.Rules...)
	sort.Slice(rules, func(i, j int) bool { return rules[i].ID < rules[j].ID })
	for _, rule := range rules {
		s := junitSuite{Name: rule.ID}
		fs := byRule[rule.ID]
		if len(fs) == 0 {
			s.Cases = append(s.Cases, junitCase{Name: rule.ID, Classname: r.Tool, SystemOut: rule.Statement})
		}
		for _, f := range fs {
			c := junitCase{Name: f.Location(), Classname: r.Tool + "." + rule.ID}
			detail := fmt.Sprintf("%s\nrule: %s (%s)\n", f.Message, rule.Statement, rule.Source)
			if f.Note != "" {
				detail += "note: " + f.Note + "\n"
			}
			if len(f.Kinds) > 0 {
				detail += "kinds: " + strings.Join(f.Kinds, "; ") + "\n"
			}
			if f.Level >= Warning {
				c.Failure = &junitFailure{Message: oneLine(f.Message), Type: f.Level.String(), Text: detail}
				s.Failures++
			} else {
				c.SystemOut = detail
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(s.Cases)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }
