package result

// Coverage is the documentation coverage map joined with one run's
// outcomes (added in v1.2): every section heading of every stored document,
// what answers for it and, for a section requirements are drawn from, how
// each of them fared in this run. It is derived data: reports.Build
// computes it from the catalogue and Specs, and re-rendering a saved result
// (`apiconform report`) computes it again from the catalogue of the build
// that reads the file, as it does the requirement matrix. A file without
// it renders the same report.
type Coverage struct {
	Totals    CoverageTotals `json:"totals"`
	Documents []DocCoverage  `json:"documents"`
	// Note is set when the coverage map and the catalogue disagree (a
	// requirement citing a section the map does not list…): the map may
	// then miss requirements. `apiconform spec --coverage` says which.
	Note string `json:"note,omitempty"`
}

// DocCoverage is one stored document.
type DocCoverage struct {
	Doc      string            `json:"doc"`            // file name under the stored documents
	Title    string            `json:"title"`          // in English
	Lang     string            `json:"lang,omitempty"` // BCP 47 tag of the stored text (en, zh)
	URL      string            `json:"url,omitempty"`  // the upstream page
	Totals   CoverageTotals    `json:"totals"`
	Sections []SectionCoverage `json:"sections"`
}

// CoverageTotals count sections by what answers for them and, of the
// covered ones, by this run's outcome.
type CoverageTotals struct {
	Sections   int `json:"sections"`
	Covered    int `json:"covered"`
	Static     int `json:"static"`
	Untestable int `json:"untestable"`
	Gap        int `json:"gap"`
	// Outcomes counts the covered sections by their Outcome; absent
	// outcomes are left out.
	Outcomes map[Checked]int `json:"outcomes"`
}

// SectionCoverage is one section heading.
type SectionCoverage struct {
	Title  string `json:"title"`
	Parent string `json:"parent,omitempty"`
	// SameAs names the sections of the English API concepts document that
	// a Chinese rendering's section renders; their requirements are its own.
	SameAs []string `json:"sameAs,omitempty"`
	// Status is covered (requirements are drawn from it), static (guidance
	// for API authors, checked by lint/compat rules), untestable or gap.
	Status     string   `json:"status"`
	Static     []string `json:"static,omitempty"`     // lint or compat rule IDs
	Untestable string   `json:"untestable,omitempty"` // why nothing observable can check it
	Gap        string   `json:"gap,omitempty"`        // what is missing, and where it is tracked
	// Outcome combines the requirements' outcomes; covered sections only.
	Outcome      Checked              `json:"outcome,omitempty"`
	Requirements []RequirementChecked `json:"requirements,omitempty"`
}

// RequirementChecked is one requirement of a covered section and how it fared.
type RequirementChecked struct {
	ID      string  `json:"id"`
	Outcome Checked `json:"outcome"`
}

// Checked is how a requirement fared in a run, or how a covered section's
// requirements fared together: a spec Outcome's words, plus the states only
// a requirement or a section can be in (not in the run, untestable, partial).
type Checked string

const (
	CheckedPassed        = Checked(Passed)
	CheckedFailed        = Checked(Failed)
	CheckedError         = Checked(Errored)
	CheckedSkipped       = Checked(Skipped)
	CheckedNotApplicable = Checked(NotApplicable)
	// CheckedNotRun: a requirement's spec was selected but never started
	// (interrupt, fail-fast, lost target); for a section, none of its
	// requirements was checked and one of them was selected.
	CheckedNotRun = Checked(NotRun)
	// CheckedNotInRun: no spec of the requirement is in this run (outside
	// --focus or --level, or no spec yet); for a section, none of its
	// requirements is.
	CheckedNotInRun Checked = "not-in-run"
	// CheckedUntestable: the catalogue says no spec can check the requirement.
	CheckedUntestable Checked = "untestable"
	// CheckedPartial: some of a section's requirements passed, others were
	// not checked by this run. Sections only.
	CheckedPartial Checked = "partial"
)

// CheckedOrder lists the outcomes in report order, gravest first.
var CheckedOrder = []Checked{CheckedFailed, CheckedError, CheckedPassed, CheckedPartial, CheckedSkipped,
	CheckedNotRun, CheckedNotInRun, CheckedNotApplicable, CheckedUntestable}

// SectionOutcome combines the outcomes of a covered section's requirements:
// failed if one failed, else error if one ended in error; then, of the
// requirements that apply (not-applicable and untestable ones aside),
// passed if all passed, skipped if all were skipped, not in this run if
// none is in the run, not run if none was checked, partial otherwise. A
// section none of whose requirements applies is not applicable (or
// untestable, when all are).
func SectionOutcome(reqs []Checked) Checked {
	n := map[Checked]int{}
	for _, c := range reqs {
		n[c]++
	}
	switch {
	case n[CheckedFailed] > 0:
		return CheckedFailed
	case n[CheckedError] > 0:
		return CheckedError
	}
	applicable := len(reqs) - n[CheckedNotApplicable] - n[CheckedUntestable]
	switch {
	case applicable == 0 && n[CheckedNotApplicable] > 0:
		return CheckedNotApplicable
	case applicable == 0:
		return CheckedUntestable
	case n[CheckedPassed] == applicable:
		return CheckedPassed
	case n[CheckedSkipped] == applicable:
		return CheckedSkipped
	case n[CheckedNotInRun] == applicable:
		return CheckedNotInRun
	case n[CheckedPassed]+n[CheckedSkipped] == 0:
		return CheckedNotRun
	}
	return CheckedPartial
}

// Add counts one section with status (covered, static, untestable, gap) and,
// when covered, outcome.
func (t *CoverageTotals) Add(status string, outcome Checked) {
	t.Sections++
	switch status {
	case "covered":
		t.Covered++
		if t.Outcomes == nil {
			t.Outcomes = map[Checked]int{}
		}
		t.Outcomes[outcome]++
	case "static":
		t.Static++
	case "untestable":
		t.Untestable++
	case "gap":
		t.Gap++
	}
}
