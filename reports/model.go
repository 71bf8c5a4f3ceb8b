// Package reports turns one or more results into the report model — the
// requirement matrix, the documented tables marked with outcomes, the
// comparison and the failure list — that every renderer in reports/render
// draws. Judging happens here once; renderers only lay it out.
package reports

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/coverage"
)

// MatrixSchema names the JSON form of a Report.
const MatrixSchema = "apiconform.io/matrix/v1"

// Catalogue is what a report needs from spec/catalog. Tests build small
// fixture catalogues so golden files do not change when the real one grows.
type Catalogue struct {
	Requirements []catalog.Requirement
	Areas        []string // display order; areas not listed follow in first-seen order
	Tables       []DocTable
	// Coverage is the documentation coverage map (spec/coverage); without
	// sections the report has no coverage section.
	Coverage coverage.Map
	// CoverageProblem is set when the map and the catalogue disagree.
	CoverageProblem string
}

// DocTable is one documented table (e.g. resourceVersion semantics for list).
type DocTable struct {
	ID      string      `json:"id"`
	Title   string      `json:"title"`
	Caption string      `json:"caption,omitempty"`
	Header  []string    `json:"header"`
	Rows    [][]DocCell `json:"rows"`
}

// DocCell is a table cell; Requirements names the catalogue entries that
// check the behaviour it documents (none for row-heading cells).
type DocCell struct {
	Text         string   `json:"text"`
	Requirements []string `json:"requirements,omitempty"`
}

// Status is a requirement's verdict for one result.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Error: a spec of the requirement ended in error (the harness could not
	// finish the check); neither pass nor a conformance failure.
	Error Status = "error"
	Skip  Status = "skip"
	// NotApplicable: the requirement does not apply to the target; left out
	// of the conformance percentage.
	NotApplicable Status = "not-applicable"
	// NotRun: a spec of the requirement was selected but never started.
	NotRun     Status = "not-run"
	NotCovered Status = "not-covered"
)

// Report is the whole model a renderer draws.
type Report struct {
	Schema   string        `json:"schema"`
	Columns  []Column      `json:"columns"`
	Areas    []AreaGroup   `json:"areas"`
	Levels   []LevelTotals `json:"levels"`
	Tables   []MarkedTable `json:"tables"`
	Changes  []Change      `json:"changes"`
	Failures []SpecEntry   `json:"failures"`
	// Errors are the specs that ended in error, apart from the failures.
	Errors []SpecEntry `json:"errors"`
	// Observed are the specs that recorded what they saw (result.Observation),
	// whatever their outcome, in column and run order: where the documents
	// allow a choice, which one the target made.
	Observed []SpecEntry `json:"observed"`

	// Results are the sanitised inputs, one per column.
	Results []result.Result `json:"-"`
}

// Column is one result: a target, or one run of a target.
type Column struct {
	Label     string          `json:"label"`
	Target    result.Target   `json:"target"`
	StartedAt time.Time       `json:"startedAt"`
	Duration  result.Duration `json:"duration"`
	Specs     result.Counts   `json:"specs"`
	// Incomplete is set when the run stopped early; renderers put its
	// Headline first.
	Incomplete *result.Incomplete `json:"incomplete,omitempty"`
	// Coverage is the documentation coverage map with this column's
	// outcomes (also the result's coverage field); nil without a map.
	Coverage *result.Coverage `json:"coverage,omitempty"`
	Must     Tally            `json:"must"` // MUST requirements
	All      Tally            `json:"all"`  // every requirement
}

// Tally counts requirement verdicts.
type Tally struct {
	Pass          int `json:"pass"`
	Fail          int `json:"fail"`
	Error         int `json:"error"`
	Skip          int `json:"skip"`
	NotApplicable int `json:"notApplicable"`
	NotRun        int `json:"notRun"`
	NotCovered    int `json:"notCovered"`
	Untestable    int `json:"untestable"` // uncovered and marked untestable in the catalogue
}

func (t *Tally) add(s Status, untestable bool) {
	switch s {
	case Pass:
		t.Pass++
	case Fail:
		t.Fail++
	case Error:
		t.Error++
	case Skip:
		t.Skip++
	case NotApplicable:
		t.NotApplicable++
	case NotRun:
		t.NotRun++
	default:
		if untestable {
			t.Untestable++
		} else {
			t.NotCovered++
		}
	}
}

// Total is every requirement counted.
func (t Tally) Total() int {
	return t.Pass + t.Fail + t.Error + t.Skip + t.NotApplicable + t.NotRun + t.NotCovered + t.Untestable
}

// Testable is the conformance denominator: the applicable, testable
// requirements (everything but not-applicable ones and uncovered untestable ones).
func (t Tally) Testable() int { return t.Total() - t.Untestable - t.NotApplicable }

// Percent is passed ÷ testable × 100, or -1 when nothing is testable.
// Failed, errored, skipped, not-run and uncovered requirements count against
// conformance; not-applicable ones are left out.
func (t Tally) Percent() float64 {
	if t.Testable() == 0 {
		return -1
	}
	return float64(t.Pass) * 100 / float64(t.Testable())
}

// PercentText is Percent formatted for people: "93.3%" or "n/a".
func (t Tally) PercentText() string {
	p := t.Percent()
	if p < 0 {
		return "n/a"
	}
	return strings.TrimSuffix(strings.TrimSuffix(formatFloat(p), "0"), ".") + "%"
}

// AreaGroup is the matrix rows of one area with per-column totals.
type AreaGroup struct {
	Name   string  `json:"name"`
	Rows   []Row   `json:"rows"`
	Totals []Tally `json:"totals"`
}

// Row is one requirement across all columns.
type Row struct {
	Requirement  catalog.Requirement `json:"requirement"`
	Uncatalogued bool                `json:"uncatalogued,omitempty"` // named by a spec but absent from the catalogue
	Cells        []Cell              `json:"cells"`
}

// Cell is one requirement's verdict for one column.
type Cell struct {
	Status        Status `json:"status"`
	Passed        int    `json:"passed"`
	Failed        int    `json:"failed"`
	Errors        int    `json:"errors,omitempty"`
	Skipped       int    `json:"skipped"`
	NotApplicable int    `json:"notApplicable,omitempty"`
	NotRun        int    `json:"notRun,omitempty"`
	Specs         []int  `json:"specs,omitempty"`  // indices into that result's Specs
	Reason        string `json:"reason,omitempty"` // why skipped, not applicable, not run or errored, or why untestable
	// Untestable marks an uncovered requirement the catalogue says no spec can check.
	Untestable bool `json:"untestable,omitempty"`
}

// LevelTotals are per-column totals for one requirement level.
type LevelTotals struct {
	Level  catalog.Level `json:"level"`
	Totals []Tally       `json:"totals"`
}

// MarkedTable is a documented table with each cell's verdict per column.
type MarkedTable struct {
	ID      string         `json:"id"`
	Title   string         `json:"title"`
	Caption string         `json:"caption,omitempty"`
	Header  []string       `json:"header"`
	Rows    [][]MarkedCell `json:"rows"`
}

// MarkedCell is a table cell and, when it names requirements, one status per column.
type MarkedCell struct {
	Text         string   `json:"text"`
	Requirements []string `json:"requirements,omitempty"`
	Statuses     []Status `json:"statuses,omitempty"`
}

// ChangeKind classifies a difference between the baseline column and another.
type ChangeKind string

const (
	Regression ChangeKind = "regression" // pass → fail
	Fix        ChangeKind = "fix"        // fail → pass (a change to or from error, not run… is "changed")
	Changed    ChangeKind = "changed"    // any other difference
)

// Change is one requirement whose verdict differs from the baseline (first) column.
type Change struct {
	Kind        ChangeKind    `json:"kind"`
	Requirement string        `json:"requirement"`
	Title       string        `json:"title"`
	Level       catalog.Level `json:"level"`
	Area        string        `json:"area"`
	Baseline    string        `json:"baseline"` // column label
	Other       string        `json:"other"`    // column label
	From        Status        `json:"from"`
	To          Status        `json:"to"`
}

// SpecEntry is one spec of a result, with the column it belongs to.
type SpecEntry struct {
	Column int               `json:"column"`
	Label  string            `json:"label"`
	Spec   result.SpecResult `json:"spec"`
}

// Build judges each result against the catalogue once. Results are
// sanitised first, so nothing a renderer draws can carry a credential.
func Build(cat Catalogue, results ...result.Result) *Report {
	rep := &Report{Schema: MatrixSchema, Columns: []Column{}, Areas: []AreaGroup{}, Levels: []LevelTotals{},
		Tables: []MarkedTable{}, Changes: []Change{}, Failures: []SpecEntry{}, Errors: []SpecEntry{},
		Observed: []SpecEntry{}}
	for _, r := range results {
		rep.Results = append(rep.Results, result.Sanitize(r))
	}
	rep.Columns = columns(rep.Results)
	n := len(rep.Results)

	// Requirement → spec indices, per column.
	bySpec := make([]map[string][]int, n)
	var extra []string // requirement IDs named by specs but not catalogued
	extraArea := map[string]string{}
	known := map[string]bool{}
	for _, rq := range cat.Requirements {
		known[rq.ID] = true
	}
	for c, r := range rep.Results {
		bySpec[c] = map[string][]int{}
		for i, s := range r.Specs {
			for _, id := range s.Requirements {
				bySpec[c][id] = append(bySpec[c][id], i)
				if !known[id] {
					known[id] = true
					extra = append(extra, id)
					extraArea[id] = s.Area
				}
			}
		}
	}
	slices.Sort(extra)

	rows := make([]Row, 0, len(cat.Requirements)+len(extra))
	for _, rq := range cat.Requirements {
		rows = append(rows, Row{Requirement: rq})
	}
	for _, id := range extra {
		rows = append(rows, Row{Requirement: catalog.Requirement{ID: id, Area: extraArea[id], Title: "(not in the catalogue)"}, Uncatalogued: true})
	}
	verdicts := map[string][]Status{}
	for i := range rows {
		rq := rows[i].Requirement
		for c, r := range rep.Results {
			cell := judge(r, bySpec[c][rq.ID], rq)
			rows[i].Cells = append(rows[i].Cells, cell)
			verdicts[rq.ID] = append(verdicts[rq.ID], cell.Status)
		}
	}

	rep.Areas = groupByArea(rows, cat.Areas, n)
	rep.Levels = levelTotals(rows, n)
	for c := range rep.Columns {
		for _, row := range rows {
			unt := row.Requirement.Untestable != ""
			rep.Columns[c].All.add(row.Cells[c].Status, unt)
			if row.Requirement.Level == catalog.Must {
				rep.Columns[c].Must.add(row.Cells[c].Status, unt)
			}
		}
	}
	rep.Tables = markTables(cat.Tables, verdicts, n)
	for c := range rep.Columns {
		rep.Columns[c].Coverage = joinCoverage(cat, rows, c)
		rep.Results[c].Coverage = rep.Columns[c].Coverage
	}
	rep.Changes = compare(rep.Areas, rep.Columns)
	for c, r := range rep.Results {
		for _, s := range r.Specs {
			e := SpecEntry{Column: c, Label: rep.Columns[c].Label, Spec: s}
			switch s.Outcome {
			case result.Failed:
				rep.Failures = append(rep.Failures, e)
			case result.Errored:
				rep.Errors = append(rep.Errors, e)
			}
			if len(s.Observations) > 0 {
				rep.Observed = append(rep.Observed, e)
			}
		}
	}
	return rep
}

// judge combines the specs naming one requirement: fail if any failed, else
// error if any ended in error, else not run if any never started (the
// requirement was only partly checked), else pass if one passed, else skip,
// else not applicable, else not covered.
func judge(r result.Result, specs []int, rq catalog.Requirement) Cell {
	cell := Cell{Status: NotCovered, Specs: specs}
	reasons := map[result.Outcome]string{}
	for _, i := range specs {
		s := r.Specs[i]
		switch s.Outcome {
		case result.Passed:
			cell.Passed++
		case result.Failed:
			cell.Failed++
		case result.Errored:
			cell.Errors++
		case result.Skipped:
			cell.Skipped++
		case result.NotApplicable:
			cell.NotApplicable++
		case result.NotRun:
			cell.NotRun++
		}
		if _, ok := reasons[s.Outcome]; !ok {
			reasons[s.Outcome] = s.SkipReason
			if s.Failure != nil && s.Outcome == result.Errored {
				reasons[s.Outcome] = firstLineOf(s.Failure.Message)
			}
		}
	}
	switch {
	case cell.Failed > 0:
		cell.Status = Fail
	case cell.Errors > 0:
		cell.Status, cell.Reason = Error, reasons[result.Errored]
	case cell.NotRun > 0:
		cell.Status, cell.Reason = NotRun, reasons[result.NotRun]
	case cell.Passed > 0:
		cell.Status = Pass
	case cell.Skipped > 0:
		cell.Status, cell.Reason = Skip, reasons[result.Skipped]
	case cell.NotApplicable > 0:
		cell.Status, cell.Reason = NotApplicable, reasons[result.NotApplicable]
	default:
		cell.Reason = rq.Untestable
		cell.Untestable = rq.Untestable != ""
	}
	return cell
}

func firstLineOf(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func columns(results []result.Result) []Column {
	cols := make([]Column, len(results))
	names := map[string]int{}
	for _, r := range results {
		names[r.Target.Name]++
	}
	for i, r := range results {
		label := cmp.Or(r.Target.Name, "target")
		if names[r.Target.Name] > 1 {
			// Two runs of one target: tell them apart by start time.
			label += " @ " + r.StartedAt.UTC().Format("2006-01-02 15:04")
		}
		cols[i] = Column{Label: label, Target: r.Target, StartedAt: r.StartedAt, Duration: r.Duration, Specs: r.Counts(),
			Incomplete: r.Incomplete}
	}
	// Still identical (same name and minute): number them.
	seen := map[string]int{}
	for i := range cols {
		seen[cols[i].Label]++
		if seen[cols[i].Label] > 1 {
			cols[i].Label += " #" + itoa(seen[cols[i].Label])
		}
	}
	return cols
}

func groupByArea(rows []Row, order []string, n int) []AreaGroup {
	idx := map[string]int{}
	var groups []AreaGroup
	addArea := func(a string) {
		if _, ok := idx[a]; !ok {
			idx[a] = len(groups)
			groups = append(groups, AreaGroup{Name: a, Rows: []Row{}, Totals: make([]Tally, n)})
		}
	}
	for _, a := range order {
		addArea(a)
	}
	for _, row := range rows {
		if !row.Uncatalogued {
			addArea(row.Requirement.Area)
		}
	}
	for _, row := range rows {
		addArea(row.Requirement.Area)
		g := &groups[idx[row.Requirement.Area]]
		g.Rows = append(g.Rows, row)
		for c, cell := range row.Cells {
			g.Totals[c].add(cell.Status, row.Requirement.Untestable != "")
		}
	}
	// Drop areas the order named but no requirement uses.
	return slices.DeleteFunc(groups, func(g AreaGroup) bool { return len(g.Rows) == 0 })
}

func levelTotals(rows []Row, n int) []LevelTotals {
	var out []LevelTotals
	for _, lvl := range []catalog.Level{catalog.Must, catalog.Should, catalog.May} {
		lt := LevelTotals{Level: lvl, Totals: make([]Tally, n)}
		any := false
		for _, row := range rows {
			if row.Requirement.Level != lvl {
				continue
			}
			any = true
			for c, cell := range row.Cells {
				lt.Totals[c].add(cell.Status, row.Requirement.Untestable != "")
			}
		}
		if any {
			out = append(out, lt)
		}
	}
	if out == nil {
		out = []LevelTotals{}
	}
	return out
}

// markTables marks each table cell per column with the combined verdict of
// the requirements it names (fail beats error beats not run beats pass beats
// skip beats not applicable beats not covered).
func markTables(tables []DocTable, verdicts map[string][]Status, n int) []MarkedTable {
	out := make([]MarkedTable, 0, len(tables))
	for _, t := range tables {
		mt := MarkedTable{ID: t.ID, Title: t.Title, Caption: t.Caption, Header: t.Header}
		for _, row := range t.Rows {
			var mr []MarkedCell
			for _, cell := range row {
				mc := MarkedCell{Text: cell.Text, Requirements: cell.Requirements}
				if len(cell.Requirements) > 0 {
					mc.Statuses = make([]Status, n)
					for c := 0; c < n; c++ {
						var sts []Status
						for _, id := range cell.Requirements {
							if v, ok := verdicts[id]; ok {
								sts = append(sts, v[c])
							}
						}
						mc.Statuses[c] = combine(sts)
					}
				}
				mr = append(mr, mc)
			}
			mt.Rows = append(mt.Rows, mr)
		}
		out = append(out, mt)
	}
	return out
}

func combine(sts []Status) Status {
	rank := map[Status]int{Fail: 7, Error: 6, NotRun: 5, Pass: 4, Skip: 3, NotApplicable: 2, NotCovered: 1}
	best := NotCovered
	for _, s := range sts {
		if s == Fail {
			return Fail
		}
		if rank[s] > rank[best] {
			best = s
		}
	}
	// A cell whose requirements are partly uncovered is not a full pass.
	if best == Pass && slices.Contains(sts, NotCovered) {
		return NotCovered
	}
	return best
}

// compare lists every requirement whose verdict in a later column differs
// from the first column: regressions first, then fixes, then other changes.
func compare(areas []AreaGroup, cols []Column) []Change {
	out := []Change{}
	for c := 1; c < len(cols); c++ {
		for _, g := range areas {
			for _, row := range g.Rows {
				from, to := row.Cells[0].Status, row.Cells[c].Status
				if from == to {
					continue
				}
				kind := Changed
				switch {
				case from == Pass && to == Fail:
					kind = Regression
				case from == Fail && to == Pass:
					kind = Fix
				}
				out = append(out, Change{Kind: kind, Requirement: row.Requirement.ID, Title: row.Requirement.Title,
					Level: row.Requirement.Level, Area: g.Name, Baseline: cols[0].Label, Other: cols[c].Label, From: from, To: to})
			}
		}
	}
	order := map[ChangeKind]int{Regression: 0, Fix: 1, Changed: 2}
	slices.SortStableFunc(out, func(a, b Change) int { return order[a.Kind] - order[b.Kind] })
	return out
}

// Count returns how many changes are of kind k.
func (r *Report) Count(k ChangeKind) int {
	n := 0
	for _, ch := range r.Changes {
		if ch.Kind == k {
			n++
		}
	}
	return n
}

// Requirement finds a matrix row by requirement ID.
func (r *Report) Requirement(id string) (Row, bool) {
	for _, g := range r.Areas {
		for _, row := range g.Rows {
			if row.Requirement.ID == id {
				return row, true
			}
		}
	}
	return Row{}, false
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func itoa(i int) string { return strconv.Itoa(i) }
