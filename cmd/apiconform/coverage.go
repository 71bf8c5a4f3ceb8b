package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/apiconform/apiconform/spec/coverage"
)

// coverageOutput is the JSON shape of `apiconform spec --coverage --format json`.
type coverageOutput struct {
	Totals    map[coverage.Status]int `json:"totals"`
	Documents []coverage.Document     `json:"documents"`
	Sections  []coverage.Section      `json:"sections"`
}

var coverageOrder = []coverage.Status{coverage.Covered, coverage.Static, coverage.Untestable, coverage.Gap}

func runCoverage(w io.Writer, format string) error {
	m, err := coverage.Build()
	if err != nil {
		return err
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(coverageOutput{Totals: m.Totals(), Documents: m.Documents, Sections: m.Sections})
	case "md":
		writeCoverageMarkdown(w, m)
		return nil
	}
	return fmt.Errorf("--format %q: want md or json", format)
}

// coverageSummary is the one-line count of sections per status.
func coverageSummary(m coverage.Map) string {
	totals := m.Totals()
	parts := make([]string, 0, len(coverageOrder))
	for _, st := range coverageOrder {
		parts = append(parts, fmt.Sprintf("%d %s", totals[st], st))
	}
	return fmt.Sprintf("%d sections: %s", len(m.Sections), strings.Join(parts, " · "))
}

func writeCoverageMarkdown(w io.Writer, m coverage.Map) {
	fmt.Fprintf(w, "# Coverage of the documents\n\n%s\n", coverageSummary(m))
	titles := map[string]string{}
	for _, d := range m.Documents {
		titles[d.Doc] = d.Title
	}
	doc := ""
	for _, s := range m.Sections {
		if s.Doc != doc {
			doc = s.Doc
			fmt.Fprintf(w, "\n## %s — %s\n\n| Section | Status | Requirements, rules or reason |\n|---|---|---|\n", doc, mdCell(titles[doc]))
		}
		title := s.Heading()
		var answer string
		switch s.Status {
		case coverage.Covered:
			answer = strings.Join(s.Requirements, ", ")
		case coverage.Static:
			answer = "rules " + strings.Join(s.Static, ", ")
		case coverage.Untestable:
			answer = s.Untestable
		case coverage.Gap:
			answer = s.Gap
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", mdCell(title), s.Status, mdCell(answer))
	}
}
