// Package catalog is the requirement catalogue: every documented behaviour the
// suites check, with its level and source, and the documented tables as data.
// Suites and reports import it; it imports neither.
package catalog

import (
	"fmt"
	"strings"
)

// Level is the strength of a requirement, taken from the document's own words.
type Level string

const (
	Must   Level = "MUST"
	Should Level = "SHOULD"
	May    Level = "MAY"
)

// rank orders the levels; an unknown level ranks below MAY.
func (l Level) rank() int {
	switch l {
	case Must:
		return 3
	case Should:
		return 2
	case May:
		return 1
	}
	return 0
}

// AtLeast reports whether l is as strong as m or stronger (MUST > SHOULD >
// MAY); an unknown level ranks below MAY.
func (l Level) AtLeast(m Level) bool { return l.rank() >= m.rank() }

// ParseLevel reads must, should or may in any case; empty means MAY, the
// weakest, so that it selects everything.
func ParseLevel(s string) (Level, error) {
	switch l := Level(strings.ToUpper(strings.TrimSpace(s))); l {
	case Must, Should, May:
		return l, nil
	case "":
		return May, nil
	}
	return "", fmt.Errorf("%q: want must, should or may", s)
}

// Source points at the sentence a requirement comes from.
type Source struct {
	Doc     string `json:"doc"`             // file name under shared/docs, e.g. 000_3a1b3094088024c1.txt
	Section string `json:"section"`         // section heading in that document
	Quote   string `json:"quote,omitempty"` // the short phrase that states the rule
	// SectionEn and QuoteEn render a section and quote of a document not in
	// English (002–004 are Chinese) for readers of English reports.
	SectionEn string `json:"sectionEn,omitempty"`
	QuoteEn   string `json:"quoteEn,omitempty"`
	// Ref points at the upstream text (KEP, newer page revision, API reference)
	// for rules newer than the stored documents; Doc/Section then name the
	// stored passage the rule extends or replaces.
	Ref string `json:"ref,omitempty"`
}

// Deviation records where a real kube-apiserver differs from the document,
// with what was observed on the wire. A spec covering a requirement with a
// deviation asserts kube-apiserver's behaviour; reports show the difference.
type Deviation struct {
	Observed string `json:"observed"` // what kube-apiserver answers (status, reason, message)
	DocSays  string `json:"docSays"`  // the document sentence it differs from
	Version  string `json:"version"`  // kube-apiserver release it was observed on
}

// Requirement is one catalogue entry.
type Requirement struct {
	ID            string     `json:"id"`   // stable, e.g. RV-LIST-EXACT-LIMIT
	Area          string     `json:"area"` // suite folder: resourceversion, paging, watch, ...
	Title         string     `json:"title"`
	Level         Level      `json:"level"`
	Source        Source     `json:"source"`
	Since         string     `json:"since,omitempty"`         // Kubernetes release that introduced a newer rule
	KubeAPIServer string     `json:"kubeAPIServer,omitempty"` // how kube-apiserver behaves where the doc is loose
	Deviation     *Deviation `json:"deviation,omitempty"`     // known kube-apiserver deviation from the doc
	Untestable    string     `json:"untestable,omitempty"`    // why no spec can check it from outside a server
}
