package catalog

import (
	"cmp"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

func TestEmbeddedDataLoads(t *testing.T) {
	c, err := load(dataFS)
	if err != nil {
		t.Fatalf("embedded data does not parse: %v", err)
	}
	if len(c.reqs) == 0 || len(c.tables) == 0 {
		t.Fatalf("embedded data is empty: %d requirements, %d tables", len(c.reqs), len(c.tables))
	}
}

func TestValidateEmbedded(t *testing.T) {
	if err := Validate(); err != nil {
		t.Fatalf("catalogue is invalid:\n%v", err)
	}
}

func TestAllSortedByAreaThenID(t *testing.T) {
	all := All()
	ok := sort.SliceIsSorted(all, func(i, j int) bool {
		if all[i].Area != all[j].Area {
			return all[i].Area < all[j].Area
		}
		return all[i].ID < all[j].ID
	})
	if !ok {
		t.Fatal("All() is not sorted by area, then ID")
	}
}

func TestAllReturnsCopies(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("no requirements")
	}
	for i := range all {
		all[i].Title = "changed"
		if all[i].Deviation != nil {
			all[i].Deviation.Observed = "changed"
		}
	}
	for _, r := range All() {
		if r.Title == "changed" || (r.Deviation != nil && r.Deviation.Observed == "changed") {
			t.Fatalf("%s: mutating All()'s result changed the catalogue", r.ID)
		}
	}
}

func TestByID(t *testing.T) {
	tests := []struct {
		id        string
		wantOK    bool
		wantArea  string
		wantLevel Level
	}{
		{"RV-LIST-UNSET-LIMIT-RV0", true, "resourceversion", Must},
		{"RV-GONE-410", true, "resourceversion", May},
		{"RV-TOO-LARGE-MESSAGE", true, "resourceversion", Should},
		{"PAGE-CONSTANT-RV", true, "paging", Must},
		{"WATCH-BOOKMARK-OPTIONAL", true, "watch", May},
		{"RV-WATCH-RVN", true, "watch", Must},
		{"NO-SUCH-REQUIREMENT", false, "", ""},
		{"", false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			r, ok := ByID(tt.id)
			if ok != tt.wantOK {
				t.Fatalf("ByID(%q) ok = %v, want %v", tt.id, ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if r.ID != tt.id || r.Area != tt.wantArea || r.Level != tt.wantLevel {
				t.Fatalf("ByID(%q) = {%s %s %s}, want {%s %s %s}", tt.id, r.ID, r.Area, r.Level, tt.id, tt.wantArea, tt.wantLevel)
			}
		})
	}
}

func TestAreasListsEachAreaOnce(t *testing.T) {
	areas := Areas()
	seen := map[string]bool{}
	for _, a := range areas {
		if seen[a] {
			t.Fatalf("area %q listed twice in %v", a, areas)
		}
		seen[a] = true
	}
	for _, want := range []string{"paging", "resourceversion", "watch"} {
		if !seen[want] {
			t.Errorf("Areas() = %v, missing %q", areas, want)
		}
	}
	if !sort.StringsAreSorted(areas) {
		t.Errorf("Areas() = %v, not sorted", areas)
	}
}

func TestLabelRoundTrip(t *testing.T) {
	tests := []struct {
		label  string
		wantID string
		wantOK bool
	}{
		{Label("RV-GET-NORV"), "RV-GET-NORV", true},
		{"req:PAGE-LIMIT", "PAGE-LIMIT", true},
		{"req:", "", false},
		{"area:watch", "", false},
		{"PAGE-LIMIT", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			id, ok := IDFromLabel(tt.label)
			if id != tt.wantID || ok != tt.wantOK {
				t.Fatalf("IDFromLabel(%q) = %q, %v; want %q, %v", tt.label, id, ok, tt.wantID, tt.wantOK)
			}
		})
	}
	if got := Label("X-Y"); got != "req:X-Y" {
		t.Fatalf(`Label("X-Y") = %q, want "req:X-Y"`, got)
	}
}

func TestTablesShape(t *testing.T) {
	tests := []struct {
		id        string
		rows      int
		cols      int
		rowHeader int
	}{
		{TableGet, 1, 3, 0},
		{TableList, 7, 5, 2},
		{TableWatch, 1, 3, 0},
		{TableStreaming, 11, 6, 3},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			tab, ok := TableByID(tt.id)
			if !ok {
				t.Fatalf("no table %q", tt.id)
			}
			if len(tab.Rows) != tt.rows || len(tab.Headers) != tt.cols {
				t.Fatalf("table %s: %d rows × %d columns, want %d × %d", tt.id, len(tab.Rows), len(tab.Headers), tt.rows, tt.cols)
			}
			for i, r := range tab.Rows {
				if len(r.Headers) != tt.rowHeader || len(r.Cells) != 3 {
					t.Fatalf("table %s row %d: %d headers, %d cells", tt.id, i, len(r.Headers), len(r.Cells))
				}
				for j, c := range r.Cells {
					want := []RVParam{RVUnset, RVZero, RVValue}[j]
					if c.Query.ResourceVersion != want {
						t.Errorf("table %s row %d cell %d: resourceVersion %q, want %q (column order)", tt.id, i, j, c.Query.ResourceVersion, want)
					}
					if _, ok := ByID(c.Requirement); !ok {
						t.Errorf("cell names unknown requirement %s", c.Requirement)
					}
				}
			}
		})
	}
	if _, ok := TableByID("nope"); ok {
		t.Fatal(`TableByID("nope") found a table`)
	}
}

// The list table as documented: each cell's text and semantics, row by row.
func TestListTableMatchesDocument(t *testing.T) {
	want := [][]struct {
		text string
		sem  Semantics
		code int
	}{
		{{"Most Recent", MostRecent, 0}, {"Any", Any, 0}, {"Not older than", NotOlderThan, 0}},
		{{"Most Recent", MostRecent, 0}, {"Any", Any, 0}, {"Exact", Exact, 0}},
		{{"Continue Token, Exact", ContinueTokenExact, 0}, {"Invalid, treated as Continue Token, Exact", ContinueTokenExact, 0}, {"Invalid, HTTP `400 Bad Request`", Invalid, 400}},
		{{"Invalid", Invalid, 422}, {"Invalid", Invalid, 422}, {"Exact", Exact, 0}},
		{{"Invalid", Invalid, 422}, {"Invalid", Invalid, 422}, {"Exact", Exact, 0}},
		{{"Invalid", Invalid, 422}, {"Any", Any, 0}, {"Not older than", NotOlderThan, 0}},
		{{"Invalid", Invalid, 422}, {"Any", Any, 0}, {"Not older than", NotOlderThan, 0}},
	}
	tab, _ := TableByID(TableList)
	for i, row := range want {
		for j, w := range row {
			c := tab.Rows[i].Cells[j]
			if c.Text != w.text || c.Expect.Semantics != w.sem || c.Expect.Code != w.code {
				t.Errorf("list row %d col %d = {%q %s %d}, want {%q %s %d}", i, j, c.Text, c.Expect.Semantics, c.Expect.Code, w.text, w.sem, w.code)
			}
		}
	}
}

func TestTablesReturnCopies(t *testing.T) {
	tabs := Tables()
	tabs[0].Rows[0].Cells[0].Text = "changed"
	tabs[0].Headers[0] = "changed"
	again, _ := TableByID(tabs[0].ID)
	if again.Rows[0].Cells[0].Text == "changed" || again.Headers[0] == "changed" {
		t.Fatal("mutating Tables()'s result changed the catalogue")
	}
}

// A requirement names cells of one table only; in the get, list and watch
// tables one cell each (the streaming table groups its cells by rule).
func TestEveryCellRequirementIsUnique(t *testing.T) {
	tableOf := map[string]string{}
	n := 0
	for _, tab := range Tables() {
		for _, c := range tab.Cells() {
			n++
			prev, seen := tableOf[c.Requirement]
			if seen && (prev != tab.ID || tab.ID != TableStreaming) {
				t.Errorf("requirement %s checked by two cells (tables %s and %s)", c.Requirement, prev, tab.ID)
			}
			tableOf[c.Requirement] = tab.ID
		}
	}
	if n != 3+21+3+33 {
		t.Fatalf("%d cells, want 60 (get 3, list 21, watch 3, streaming 33)", n)
	}
}

// Broken data must be caught: each case corrupts a minimal valid catalogue.
func TestValidateRejects(t *testing.T) {
	const goodReq = `
- id: RV-A-ONE
  title: t
  level: MUST
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
`
	goodTables := func(cell, streamCell string) string {
		return `
- id: get
  caption: get
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
  headers: [a]
  rows:
  - cells:
    - ` + cell + `
- id: list
  caption: list
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
  headers: [a]
  rows:
  - cells:
    - {requirement: RV-A-TWO, text: x, query: {verb: list, resourceVersion: unset}, expect: {semantics: MostRecent}}
- id: watch
  caption: watch
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
  headers: [a]
  rows:
  - cells:
    - {requirement: RV-A-THREE, text: x, query: {verb: watch, resourceVersion: unset}, expect: {semantics: GetStateAndStartAtMostRecent}}
- id: streaming
  caption: streaming
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
  headers: [a, b]
  rows:
  - headers: [x]
    cells:
    - ` + streamCell + `
  - headers: [y]
    cells:
    - {requirement: RV-A-FOUR, text: x, query: {verb: list, resourceVersion: unset, sendInitialEvents: "true"}, expect: {semantics: Invalid, code: 422, reason: Invalid, message: m}}
`
	}
	const okCell = `{requirement: RV-A-ONE, text: x, query: {verb: get, resourceVersion: unset}, expect: {semantics: MostRecent}}`
	const okStream = `{requirement: RV-A-FOUR, text: x, query: {verb: watch, resourceVersion: '0', sendInitialEvents: "true", resourceVersionMatch: NotOlderThan, allowWatchBookmarks: true}, expect: {semantics: GetStateAndStartAtAny, initialEventsEnd: true}}`
	const others = `
- id: RV-A-TWO
  title: t
  level: MUST
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
- id: RV-A-THREE
  title: t
  level: MUST
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
- id: RV-A-FOUR
  title: t
  level: MUST
  source: {doc: 000_3a1b3094088024c1.txt, section: S}
`
	tests := []struct {
		name    string
		reqs    string
		cell    string
		stream  string // the streaming table's first cell; okStream when empty
		wantErr string // "" means valid
	}{
		{"valid", goodReq + others, okCell, "", ""},
		{"duplicate id", goodReq + goodReq + others, okCell, "", "duplicate ID"},
		{"bad level", strings.Replace(goodReq, "MUST", "OUGHT", 1) + others, okCell, "", "unknown level"},
		{"bad doc", strings.Replace(goodReq, "000_3a1b3094088024c1.txt", "nope.txt", 1) + others, okCell, "", "unknown source doc"},
		{"bad id", strings.Replace(goodReq, "RV-A-ONE", "lower-case", 1) + others, `{requirement: lower-case, text: x, query: {verb: get, resourceVersion: unset}, expect: {semantics: MostRecent}}`, "", "ID must be"},
		{"cell names missing requirement", goodReq + others, strings.Replace(okCell, "RV-A-ONE", "RV-A-NONE", 1), "", `no requirement "RV-A-NONE"`},
		{"unknown semantics", goodReq + others, strings.Replace(okCell, "MostRecent", "Whatever", 1), "", "unknown semantics"},
		{"invalid without status", goodReq + others, strings.Replace(okCell, "MostRecent", "Invalid", 1), "", "needs the observed 4xx"},
		{"wrong verb", goodReq + others, strings.Replace(okCell, "verb: get", "verb: list", 1), "", "query verb"},
		{"bad rv kind", goodReq + others, strings.Replace(okCell, "resourceVersion: unset", "resourceVersion: latest", 1), "", "unknown resourceVersion kind"},
		{"watch semantics in get", goodReq + others, strings.Replace(okCell, "MostRecent", "StartAtExact", 1), "", "watch semantics"},
		{"sendInitialEvents outside the streaming table", goodReq + others, strings.Replace(okCell, "unset}", `unset, sendInitialEvents: "true"}`, 1), "", "only streaming cells"},
		{"requirement shared across tables", goodReq + others, okCell, strings.Replace(okStream, "RV-A-FOUR", "RV-A-ONE", 1), "already checked by"},
		{"list semantics in the streaming table", goodReq + others, okCell, strings.Replace(okStream, "GetStateAndStartAtAny, initialEventsEnd: true", "Any", 1), "in the streaming table"},
		{"initial-events-end bookmark not asked for", goodReq + others, okCell, strings.Replace(okStream, ", allowWatchBookmarks: true", "", 1), "allow bookmarks"},
		{"unknown sendInitialEvents", goodReq + others, okCell, strings.Replace(okStream, `"true"`, `"yes"`, 1), "unknown sendInitialEvents"},
		{"streaming get", goodReq + others, okCell, strings.Replace(okStream, "verb: watch", "verb: get", 1), "want watch or list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"data/resourceversion.yaml": {Data: []byte(tt.reqs)},
				"data/tables.yaml":          {Data: []byte(goodTables(tt.cell, cmp.Or(tt.stream, okStream)))},
			}
			c, err := load(fsys)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			err = c.validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestLoadRejectsMalformed(t *testing.T) {
	tests := []struct {
		name, file, data, wantErr string
	}{
		{"not yaml", "data/watch.yaml", "- id: [", "watch.yaml"},
		{"unknown field", "data/watch.yaml", "- id: WATCH-X\n  titel: typo\n", "unknown field"},
		{"area mismatch", "data/watch.yaml", "- id: WATCH-X\n  area: paging\n", `want "watch"`},
		{"tables not a list", "data/tables.yaml", "id: get\n", "tables.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(fstest.MapFS{tt.file: {Data: []byte(tt.data)}})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("load() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestAreaDefaultsToFileName(t *testing.T) {
	c, err := load(fstest.MapFS{"data/paging.yaml": {Data: []byte("- id: PAGE-X\n  title: t\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if c.reqs[0].Area != "paging" {
		t.Fatalf("area = %q, want paging", c.reqs[0].Area)
	}
}

func TestMustLoadPanicsOnMalformedData(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("mustLoad did not panic on malformed data")
		}
	}()
	mustLoad(fstest.MapFS{"data/watch.yaml": {Data: []byte("- id: [")}})
}

func TestCellFor(t *testing.T) {
	tests := []struct {
		q      Query
		wantID string
		wantOK bool
	}{
		{Query{Verb: "get", ResourceVersion: RVZero}, "RV-GET-RV0", true},
		{Query{Verb: "list", ResourceVersion: RVValue, ResourceVersionMatch: "Exact", Limit: true}, "RV-LIST-EXACT-LIMIT-RVN", true},
		{Query{Verb: "list", ResourceVersion: RVZero, Limit: true, Continue: true}, "RV-LIST-UNSET-CONTINUE-RV0", true},
		{Query{Verb: "list", ResourceVersion: RVUnset, ResourceVersionMatch: "NotOlderThan"}, "RV-LIST-NOTOLDERTHAN-NOLIMIT-NORV", true},
		{Query{Verb: "watch", ResourceVersion: RVValue}, "RV-WATCH-RVN", true},
		{Query{Verb: "watch", ResourceVersion: RVValue, AllowWatchBookmarks: true}, "WATCH-SEND-INITIAL-EVENTS-DEFAULT", true},
		{Query{Verb: "watch", ResourceVersion: RVZero, ResourceVersionMatch: "NotOlderThan", SendInitialEvents: "true", AllowWatchBookmarks: true}, "WATCH-SEND-INITIAL-EVENTS", true},
		{Query{Verb: "list", ResourceVersion: RVUnset, SendInitialEvents: "false"}, "WATCH-SEND-INITIAL-EVENTS-NOT-FOR-LIST", true},
		// Not a documented combination: continue with resourceVersionMatch.
		{Query{Verb: "list", ResourceVersion: RVValue, ResourceVersionMatch: "Exact", Limit: true, Continue: true}, "", false},
		{Query{Verb: "delete", ResourceVersion: RVUnset}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.wantID, func(t *testing.T) {
			c, ok := CellFor(tt.q)
			if ok != tt.wantOK || c.Requirement != tt.wantID {
				t.Fatalf("CellFor(%+v) = %s, %v; want %s, %v", tt.q, c.Requirement, ok, tt.wantID, tt.wantOK)
			}
		})
	}
	c, _ := CellFor(Query{Verb: "list", ResourceVersion: RVZero, ResourceVersionMatch: "Exact"})
	if c.Expect.Code != 422 || c.Expect.Cause == nil || c.Expect.Cause.Field != "resourceVersionMatch" {
		t.Fatalf("Exact with resourceVersion=0: %+v, want the recorded 422 on field resourceVersionMatch", c.Expect)
	}
	c.Expect.Cause.Field = "changed"
	again, _ := CellFor(c.Query)
	if again.Expect.Cause.Field != "resourceVersionMatch" {
		t.Fatal("mutating CellFor's result changed the catalogue")
	}
}

// Every rejected cell records what kube-apiserver answered, both in the cell
// (machine-readable) and in its requirement (for readers of the catalogue).
func TestInvalidCellsRecordTheObservedAnswer(t *testing.T) {
	for _, tab := range Tables() {
		for _, c := range tab.Cells() {
			if c.Expect.Semantics != Invalid {
				continue
			}
			r, _ := ByID(c.Requirement)
			note := r.KubeAPIServer
			if r.Deviation != nil {
				note += " " + r.Deviation.Observed
			}
			if !strings.Contains(note, c.Expect.Message) {
				t.Errorf("%s: the requirement's notes do not quote the cell's observed message %q", c.Requirement, c.Expect.Message)
			}
			if !strings.Contains(note, fmt.Sprint(c.Expect.Code)) {
				t.Errorf("%s: the requirement's notes do not name the observed code %d", c.Requirement, c.Expect.Code)
			}
		}
	}
}
