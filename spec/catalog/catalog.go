package catalog

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"
)

// The data: one YAML file per area (data/<area>.yaml, a list of
// requirements) and data/tables.yaml (a list of tables).
//
//go:embed data/*.yaml
var dataFS embed.FS

// tablesFile is the data file holding the documented tables, not an area.
const tablesFile = "tables.yaml"

// KnownAreas are the suite areas a requirement may belong to.
var KnownAreas = []string{
	"apply", "compatibility", "conventions", "dryrun", "fieldvalidation",
	"deletion", "paging", "resources", "resourceversion", "watch", "clients",
}

// KnownDocs are the stored documents (file names under shared/docs) a source may cite.
var KnownDocs = []string{
	"000_3a1b3094088024c1.txt", // Kubernetes API Concepts (English)
	"001_1514b8991cf2916c.txt", // API Conventions (English)
	"002_c4e072c22cec5db1.txt", // Resource Version semantics (Chinese)
	"003_c242e18d62eea135.txt", // API concepts (Chinese)
	"004_e6d3ce6622f9ab07.txt", // Changing the API (Chinese)
}

// labelPrefix marks a Ginkgo label that names a requirement.
const labelPrefix = "req:"

var idPattern = regexp.MustCompile(`^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+$`)

// catalogue is the parsed data; built once, on first use (cat), so that
// commands that never read it (apiconform serve) do not pay for the parse.
type catalogue struct {
	reqs   []Requirement // sorted by area, then ID
	byID   map[string]int
	tables []Table
}

var cat = sync.OnceValue(func() *catalogue { return mustLoad(dataFS) })

func mustLoad(fsys fs.FS) *catalogue {
	c, err := load(fsys)
	if err != nil {
		// The data is embedded at build time; a malformed file is a build defect
		// that TestEmbeddedDataLoads reports before it ships.
		panic(fmt.Sprintf("catalog: embedded data is malformed: %v", err))
	}
	return c
}

// load parses every data file of fsys (a directory "data" of YAML files).
func load(fsys fs.FS) (*catalogue, error) {
	names, err := fs.Glob(fsys, "data/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	c := &catalogue{byID: map[string]int{}}
	for _, name := range names {
		raw, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		base := path.Base(name)
		if base == tablesFile {
			var ts []Table
			if err := yaml.UnmarshalStrict(raw, &ts); err != nil {
				return nil, fmt.Errorf("%s: %w", base, err)
			}
			c.tables = append(c.tables, ts...)
			continue
		}
		var rs []Requirement
		if err := yaml.UnmarshalStrict(raw, &rs); err != nil {
			return nil, fmt.Errorf("%s: %w", base, err)
		}
		area := strings.TrimSuffix(base, ".yaml")
		for i := range rs {
			if rs[i].Area == "" {
				rs[i].Area = area // the file names the area; entries may omit it
			}
			if rs[i].Area != area {
				return nil, fmt.Errorf("%s: %s has area %q, want %q", base, rs[i].ID, rs[i].Area, area)
			}
		}
		c.reqs = append(c.reqs, rs...)
	}
	sort.SliceStable(c.reqs, func(i, j int) bool {
		if c.reqs[i].Area != c.reqs[j].Area {
			return c.reqs[i].Area < c.reqs[j].Area
		}
		return c.reqs[i].ID < c.reqs[j].ID
	})
	for i, r := range c.reqs {
		if _, dup := c.byID[r.ID]; !dup {
			c.byID[r.ID] = i // duplicates are reported by validate
		}
	}
	return c, nil
}

// All returns every requirement, sorted by area then ID.
func All() []Requirement {
	reqs := cat().reqs
	out := make([]Requirement, len(reqs))
	for i, r := range reqs {
		out[i] = r.clone()
	}
	return out
}

// ByID returns the requirement with the given ID.
func ByID(id string) (Requirement, bool) {
	c := cat()
	i, ok := c.byID[id]
	if !ok {
		return Requirement{}, false
	}
	return c.reqs[i].clone(), true
}

// Areas returns the areas that have at least one requirement, sorted.
func Areas() []string {
	var out []string
	for _, r := range cat().reqs {
		if len(out) == 0 || out[len(out)-1] != r.Area {
			out = append(out, r.Area)
		}
	}
	return out
}

// Label returns the Ginkgo label a spec checking requirement id carries.
func Label(id string) string { return labelPrefix + id }

// IDFromLabel returns the requirement ID named by a Ginkgo label, if it is one.
func IDFromLabel(label string) (string, bool) {
	id, ok := strings.CutPrefix(label, labelPrefix)
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

// Tables returns the documented tables (get, list, watch).
func Tables() []Table {
	tables := cat().tables
	out := make([]Table, len(tables))
	for i, t := range tables {
		out[i] = t.clone()
	}
	return out
}

// TableByID returns the documented table with the given ID.
func TableByID(id string) (Table, bool) {
	for _, t := range cat().tables {
		if t.ID == id {
			return t.clone(), true
		}
	}
	return Table{}, false
}

// CellFor returns the documented table cell describing query q (matched on
// every Query field), e.g. for a server deciding how to serve a request.
func CellFor(q Query) (Cell, bool) {
	for _, t := range cat().tables {
		for _, row := range t.Rows {
			for _, c := range row.Cells {
				if c.Query == q {
					return copyCell(c), true
				}
			}
		}
	}
	return Cell{}, false
}

// Validate checks the loaded catalogue: unique well-formed IDs, known levels,
// areas and source documents, complete deviations, and tables whose cells
// name existing requirements with a well-formed query and outcome.
func Validate() error { return cat().validate() }

func (c *catalogue) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	seen := map[string]bool{}
	for _, r := range c.reqs {
		if !idPattern.MatchString(r.ID) {
			bad("requirement %q: ID must be upper-case words joined by '-'", r.ID)
		}
		if seen[r.ID] {
			bad("requirement %s: duplicate ID", r.ID)
		}
		seen[r.ID] = true
		if !slices.Contains(KnownAreas, r.Area) {
			bad("requirement %s: unknown area %q", r.ID, r.Area)
		}
		switch r.Level {
		case Must, Should, May:
		default:
			bad("requirement %s: unknown level %q", r.ID, r.Level)
		}
		if strings.TrimSpace(r.Title) == "" {
			bad("requirement %s: empty title", r.ID)
		}
		errs = append(errs, validateSource("requirement "+r.ID, r.Source)...)
		if d := r.Deviation; d != nil && (d.Observed == "" || d.DocSays == "" || d.Version == "") {
			bad("requirement %s: deviation needs observed, docSays and version", r.ID)
		}
	}

	tableIDs := map[string]bool{}
	type cellAt struct{ table, where string }
	cellOf := map[string]cellAt{}
	for _, t := range c.tables {
		if tableIDs[t.ID] {
			bad("table %q: duplicate ID", t.ID)
		}
		tableIDs[t.ID] = true
		errs = append(errs, validateSource("table "+t.ID, t.Source)...)
		if len(t.Rows) == 0 {
			bad("table %s: no rows", t.ID)
		}
		for i, row := range t.Rows {
			if got := len(row.Headers) + len(row.Cells); got != len(t.Headers) {
				bad("table %s row %d: %d header and %d semantics cells, but %d columns", t.ID, i, len(row.Headers), len(row.Cells), len(t.Headers))
			}
			for j, cell := range row.Cells {
				where := fmt.Sprintf("table %s row %d cell %d (%s)", t.ID, i, j, cell.Requirement)
				if _, ok := c.byID[cell.Requirement]; !ok {
					bad("%s: no requirement %q", where, cell.Requirement)
				}
				if prev, dup := cellOf[cell.Requirement]; dup && (prev.table != t.ID || !sharesRequirements(t.ID)) {
					bad("%s: requirement already checked by %s", where, prev.where)
				}
				cellOf[cell.Requirement] = cellAt{t.ID, where}
				errs = append(errs, validateCell(where, t.ID, cell)...)
			}
		}
	}
	for _, want := range []string{TableGet, TableList, TableWatch, TableStreaming} {
		if !tableIDs[want] {
			bad("table %q is missing", want)
		}
	}
	return errors.Join(errs...)
}

func validateSource(where string, s Source) []error {
	var errs []error
	if !slices.Contains(KnownDocs, s.Doc) {
		errs = append(errs, fmt.Errorf("%s: unknown source doc %q", where, s.Doc))
	}
	if strings.TrimSpace(s.Section) == "" {
		errs = append(errs, fmt.Errorf("%s: source has no section", where))
	}
	return errs
}

func (r Requirement) clone() Requirement {
	if r.Deviation != nil {
		d := *r.Deviation
		r.Deviation = &d
	}
	return r
}
