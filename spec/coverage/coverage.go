// Package coverage maps every section of the stored documents to what
// answers for it: the catalogue's requirements drawn from it, the static
// rules that check it, or the reason nothing can. It is the answer to "is
// every documented behaviour covered?", and its test keeps that answer
// honest: a section with neither requirements nor a reason, or with both,
// fails it.
package coverage

import (
	_ "embed"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/compat"
	"github.com/apiconform/apiconform/spec/lint"
)

//go:embed sections.yaml
var sectionsYAML []byte

// Status says how a section is answered for.
type Status string

const (
	Covered    Status = "covered"    // catalogue requirements cite it (or, for a rendering, its English sections)
	Static     Status = "static"     // guidance for API authors, checked by lint/compat rules
	Untestable Status = "untestable" // nothing observable from outside a server
	Gap        Status = "gap"        // testable, not yet catalogued
)

// Section is one heading of one document and its answer.
type Section struct {
	Doc    string `json:"doc"`
	Title  string `json:"title"`
	Parent string `json:"parent,omitempty"`
	// SameAs names the sections of the English API concepts document that a
	// Chinese rendering's section renders.
	SameAs     []string `json:"sameAs,omitempty"`
	Static     []string `json:"static,omitempty"`     // lint or compat rule IDs
	Untestable string   `json:"untestable,omitempty"` // why it cannot be observed
	Gap        string   `json:"gap,omitempty"`        // what is missing, and where it is tracked

	Status       Status   `json:"status"`
	Requirements []string `json:"requirements,omitempty"` // computed from the catalogue
}

// Heading is the section's title after its parent's ("Resource versions ›
// Semantics for get and list").
func (s Section) Heading() string {
	if s.Parent == "" {
		return s.Title
	}
	return s.Parent + " › " + s.Title
}

// Document is one stored document as reports name it.
type Document struct {
	Doc   string `json:"doc"`   // file name under the stored documents
	Title string `json:"title"` // in English
}

// Map is the coverage of every stored document, in document order.
type Map struct {
	Documents []Document `json:"documents"`
	Sections  []Section  `json:"sections"`
}

// Totals counts sections by status.
func (m Map) Totals() map[Status]int {
	out := map[Status]int{}
	for _, s := range m.Sections {
		out[s.Status]++
	}
	return out
}

// conceptsDoc is the English API concepts document the Chinese renderings map onto.
const conceptsDoc = "000_3a1b3094088024c1.txt"

type docSections struct {
	Doc      string    `json:"doc"`
	Title    string    `json:"title"`
	Sections []Section `json:"sections"`
}

// Build reads the map and fills each section's requirements and status from
// the catalogue. An error means the map itself is malformed: a section with
// both requirements and a reason, with neither, with a rule that does not
// exist, or a requirement citing a section the map does not list.
func Build() (Map, error) {
	var docs []docSections
	if err := yaml.UnmarshalStrict(sectionsYAML, &docs); err != nil {
		return Map{}, fmt.Errorf("coverage map: %w", err)
	}
	cited := map[[2]string][]string{} // (doc, section) → requirement IDs
	for _, r := range catalog.All() {
		k := [2]string{r.Source.Doc, r.Source.Section}
		cited[k] = append(cited[k], r.ID)
	}
	rules := knownRules()
	var m Map
	var errs []string
	listed := map[[2]string]bool{}
	byTitle := map[[2]string]Section{} // sections already read (the English document comes first)
	for _, d := range docs {
		if strings.TrimSpace(d.Title) == "" {
			errs = append(errs, fmt.Sprintf("%s: no title", d.Doc))
		}
		m.Documents = append(m.Documents, Document{Doc: d.Doc, Title: d.Title})
		for _, s := range d.Sections {
			s.Doc = d.Doc
			k := [2]string{s.Doc, s.Title}
			if listed[k] {
				errs = append(errs, fmt.Sprintf("%s § %s: listed twice", s.Doc, s.Title))
			}
			listed[k] = true
			s.Requirements = slices.Clone(cited[k])
			for _, en := range s.SameAs {
				s.Requirements = append(s.Requirements, cited[[2]string{conceptsDoc, en}]...)
			}
			sort.Strings(s.Requirements)
			s.Requirements = slices.Compact(s.Requirements)
			if len(s.Requirements) == 0 && len(s.SameAs) > 0 {
				// A rendering of uncovered English sections shares their answer.
				if en, ok := byTitle[[2]string{conceptsDoc, s.SameAs[0]}]; ok {
					s.Static, s.Untestable, s.Gap = en.Static, en.Untestable, en.Gap
				}
			}
			for _, id := range s.Static {
				if !rules[id] {
					errs = append(errs, fmt.Sprintf("%s § %s: no lint or compat rule %q", s.Doc, s.Title, id))
				}
			}
			status, err := judge(s)
			if err != "" {
				errs = append(errs, fmt.Sprintf("%s § %s: %s", s.Doc, s.Title, err))
			}
			s.Status = status
			byTitle[k] = s
			m.Sections = append(m.Sections, s)
		}
	}
	for _, d := range docs {
		for _, s := range d.Sections {
			for _, en := range s.SameAs {
				if !listed[[2]string{conceptsDoc, en}] {
					errs = append(errs, fmt.Sprintf("%s § %s: sameAs %q is not a section of %s", d.Doc, s.Title, en, conceptsDoc))
				}
			}
		}
	}
	for k, ids := range cited {
		if !listed[k] {
			errs = append(errs, fmt.Sprintf("%s cite %s § %s, which the coverage map does not list", strings.Join(ids, ", "), k[0], k[1]))
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return m, fmt.Errorf("coverage map:\n  %s", strings.Join(errs, "\n  "))
	}
	return m, nil
}

// judge gives a section its status; the message is non-empty when the
// section says too much or too little.
func judge(s Section) (Status, string) {
	var reasons []Status
	if len(s.Static) > 0 {
		reasons = append(reasons, Static)
	}
	if s.Untestable != "" {
		reasons = append(reasons, Untestable)
	}
	if s.Gap != "" {
		reasons = append(reasons, Gap)
	}
	switch {
	case len(s.Requirements) > 0 && len(reasons) > 0:
		return Covered, fmt.Sprintf("has requirements (%s) and also says %s", strings.Join(s.Requirements, ", "), reasons[0])
	case len(s.Requirements) > 0:
		return Covered, ""
	case len(reasons) == 0:
		return Gap, "has neither requirements nor a reason"
	case len(reasons) > 1:
		return reasons[0], fmt.Sprintf("gives more than one kind of reason (%v)", reasons)
	}
	return reasons[0], ""
}

func knownRules() map[string]bool {
	out := map[string]bool{}
	for _, r := range lint.Rules() {
		out[r.ID] = true
	}
	for _, r := range compat.Rules() {
		out[r.ID] = true
	}
	return out
}
