package reports

import (
	"regexp"
	"strings"

	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/coverage"
)

// plainText drops the document's Markdown (code spans, _emphasis_, escaped
// angle brackets) so every renderer can escape the text its own way.
func plainText(s string) string {
	s = strings.NewReplacer("`", "", `\<`, "<", `\>`, ">").Replace(strings.TrimSpace(s))
	return emphasis.ReplaceAllString(s, "$1$2$3")
}

// emphasis is _text_ between word boundaries (not snake_case identifiers).
var emphasis = regexp.MustCompile(`(^|[\s,(])_([^_\s][^_]*?)_($|[\s,.)])`)

// FromCatalog is the real catalogue: every requirement, its area order,
// the documented resourceVersion tables and the documents' coverage map.
func FromCatalog() Catalogue {
	cat := Catalogue{Requirements: catalog.All(), Areas: catalog.Areas()}
	// A map at odds with the catalogue (its own test fails) still draws
	// every section it could judge; the report says it is incomplete.
	m, err := coverage.Build()
	cat.Coverage = m
	if err != nil {
		cat.CoverageProblem = "the coverage map and the catalogue disagree, so a section may miss requirements (`apiconform spec --coverage` lists why)"
	}
	for _, t := range catalog.Tables() {
		cat.Tables = append(cat.Tables, DocTableFrom(t))
	}
	return cat
}

// DocTableFrom redraws a catalogue table: row-header cells first, then one
// cell per resourceVersion column naming the requirement it is tested under.
func DocTableFrom(t catalog.Table) DocTable {
	title := plainText(t.Caption)
	if title == "" || title == t.ID {
		// The get table has no caption of its own in the document.
		title = "resourceVersion for " + t.ID
	}
	dt := DocTable{ID: t.ID, Title: title, Caption: t.Caption}
	for _, h := range t.Headers {
		dt.Header = append(dt.Header, plainText(h))
	}
	for _, r := range t.Rows {
		var row []DocCell
		for _, h := range r.Headers {
			row = append(row, DocCell{Text: plainText(h)})
		}
		for _, c := range r.Cells {
			cell := DocCell{Text: plainText(c.Text)}
			if c.Requirement != "" {
				cell.Requirements = []string{c.Requirement}
			}
			row = append(row, cell)
		}
		dt.Rows = append(dt.Rows, row)
	}
	return dt
}
