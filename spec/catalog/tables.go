package catalog

import (
	"fmt"
	"slices"
	"strings"
)

// The documented resourceVersion tables as data.
//
// A Table is drawn exactly as the document draws it: Headers holds every
// column header (row-header columns first), and each Row holds its own
// header cells (Row.Headers, empty for the one-row get and watch tables)
// followed by one Cell per resourceVersion column. A report can redraw the
// table from Headers, Row.Headers and Cell.Text alone.
//
// Each Cell is self-contained for machines: Query says which request the cell
// describes (verb, resourceVersionMatch, limit, continue, which kind of
// resourceVersion), and Expect says what a server does with it — the
// documented semantics, and for Invalid cells the status code, reason,
// message and first cause kube-apiserver answers with (observed on the wire,
// recorded in the data, never guessed). Cell.Requirement names the catalogue
// entry the cell is tested under; its spec carries the label req:<ID>.
// CellFor finds the cell of a query, so a server can look its answer up.
//
// The streaming table is not drawn in the stored documents: it is the
// watch and list requests × sendInitialEvents × resourceVersionMatch ×
// resourceVersion, as kube-apiserver answers them (streaming lists,
// KEP-3157). Its cells are grouped by the rule that decides them, so
// several of its cells may name one requirement; the get, list and watch
// tables name one requirement per cell.

// Table IDs.
const (
	TableGet       = "get"
	TableList      = "list"
	TableWatch     = "watch"
	TableStreaming = "streaming"
)

// Semantics is the documented meaning of a table cell.
type Semantics string

// Semantics for get and list cells.
const (
	MostRecent         Semantics = "MostRecent"         // "Most Recent": consistent (quorum) read
	Any                Semantics = "Any"                // "Any": data at any resource version
	NotOlderThan       Semantics = "NotOlderThan"       // "Not older than" the given resourceVersion
	Exact              Semantics = "Exact"              // "Exact": at exactly the given resourceVersion, else 410
	ContinueTokenExact Semantics = "ContinueTokenExact" // "Continue Token, Exact": at the first page's resourceVersion
	Invalid            Semantics = "Invalid"            // the request is rejected
)

// Semantics for watch cells.
const (
	GetStateAndStartAtMostRecent Semantics = "GetStateAndStartAtMostRecent" // synthetic ADDED, consistent start
	GetStateAndStartAtAny        Semantics = "GetStateAndStartAtAny"        // synthetic ADDED, any start
	StartAtExact                 Semantics = "StartAtExact"                 // no synthetic ADDED; changes after the RV
)

// Semantics of streaming-table cells beyond the watch table's.
const (
	GetStateAndStartAtNotOlderThan Semantics = "GetStateAndStartAtNotOlderThan" // synthetic ADDED of a state not older than the RV
	StartAtMostRecent              Semantics = "StartAtMostRecent"              // no synthetic ADDED; changes from now on
	StartAtAny                     Semantics = "StartAtAny"                     // no synthetic ADDED; changes from any start
)

// RVParam says which resourceVersion query parameter a cell's request sends.
type RVParam string

const (
	RVUnset RVParam = "unset" // no resourceVersion parameter
	RVZero  RVParam = "0"     // resourceVersion=0
	RVValue RVParam = "value" // a real resourceVersion taken from an earlier response
)

// Query is the request a cell describes.
type Query struct {
	Verb                 string  `json:"verb"` // get, list or watch
	ResourceVersion      RVParam `json:"resourceVersion"`
	ResourceVersionMatch string  `json:"resourceVersionMatch,omitempty"` // "", Exact or NotOlderThan
	Limit                bool    `json:"limit,omitempty"`                // limit=<n> is sent
	Continue             bool    `json:"continue,omitempty"`             // continue=<token from a previous page> is sent
	// Streaming table only: sendInitialEvents ("" unset, "true" or "false")
	// and allowWatchBookmarks=true.
	SendInitialEvents   string `json:"sendInitialEvents,omitempty"`
	AllowWatchBookmarks bool   `json:"allowWatchBookmarks,omitempty"`
}

// Cause is one entry of a Status's details.causes.
type Cause struct {
	Reason  string `json:"reason"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Outcome is what a server does with a cell's query.
type Outcome struct {
	Semantics Semantics `json:"semantics"`
	// InitialEventsEnd (streaming table): the synthetic ADDED events end
	// with a BOOKMARK annotated k8s.io/initial-events-end=true; false means
	// no such bookmark may arrive.
	InitialEventsEnd bool `json:"initialEventsEnd,omitempty"`
	// For rejected requests: the HTTP status code, Status.reason, the exact
	// Status.message and the first details.causes entry kube-apiserver sends.
	Code    int    `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Cause   *Cause `json:"cause,omitempty"`
}

// Cell is one semantics cell of a documented table.
type Cell struct {
	Requirement string  `json:"requirement"` // catalogue ID checked by this cell
	Text        string  `json:"text"`        // the cell's text as documented
	Query       Query   `json:"query"`
	Expect      Outcome `json:"expect"`
}

// Row is one documented table row.
type Row struct {
	Headers []string `json:"headers,omitempty"` // the row's header cells as documented
	Cells   []Cell   `json:"cells"`
}

// Table is one documented table.
type Table struct {
	ID      string   `json:"id"`      // get, list or watch
	Caption string   `json:"caption"` // as documented
	Source  Source   `json:"source"`
	Headers []string `json:"headers"` // every column header, row-header columns first
	Rows    []Row    `json:"rows"`
}

// Cells returns every cell of the table in row order.
func (t Table) Cells() []Cell {
	var out []Cell
	for _, r := range t.Rows {
		out = append(out, r.Cells...)
	}
	return out
}

// sharesRequirements says whether several cells of table id may name one
// requirement (the streaming table groups its cells by rule).
func sharesRequirements(id string) bool { return id == TableStreaming }

// watchSemantics are the semantics of accepted watch cells.
var watchSemantics = []Semantics{GetStateAndStartAtMostRecent, GetStateAndStartAtAny, StartAtExact,
	GetStateAndStartAtNotOlderThan, StartAtMostRecent, StartAtAny}

// validateCell checks one cell of table: a query that table can hold and
// an outcome with the status a rejected query needs.
func validateCell(where, table string, cell Cell) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(where+": "+format, args...)) }
	if strings.TrimSpace(cell.Text) == "" {
		bad("empty text")
	}
	q := cell.Query
	streaming := table == TableStreaming
	switch {
	case streaming && q.Verb != TableWatch && q.Verb != TableList:
		bad("query verb %q in table %q (want watch or list)", q.Verb, table)
	case !streaming && q.Verb != table:
		bad("query verb %q in table %q", q.Verb, table)
	}
	switch q.ResourceVersion {
	case RVUnset, RVZero, RVValue:
	default:
		bad("unknown resourceVersion kind %q", q.ResourceVersion)
	}
	switch q.ResourceVersionMatch {
	case "", "Exact", "NotOlderThan":
	default:
		bad("unknown resourceVersionMatch %q", q.ResourceVersionMatch)
	}
	switch q.SendInitialEvents {
	case "", "true", "false":
	default:
		bad("unknown sendInitialEvents %q", q.SendInitialEvents)
	}
	if q.Continue && !q.Limit {
		bad("continue without limit")
	}
	if q.Verb != TableList && (q.Limit || q.Continue) {
		bad("only list cells take limit or continue")
	}
	if q.ResourceVersionMatch != "" && q.Verb != TableList && !streaming {
		bad("only list and streaming cells take resourceVersionMatch")
	}
	if !streaming && (q.SendInitialEvents != "" || q.AllowWatchBookmarks) {
		bad("only streaming cells take sendInitialEvents or allowWatchBookmarks")
	}
	e := cell.Expect
	isWatch := slices.Contains(watchSemantics, e.Semantics)
	switch e.Semantics {
	case MostRecent, Any, NotOlderThan, Exact, ContinueTokenExact:
		if table == TableWatch || streaming {
			bad("semantics %q in the %s table", e.Semantics, table)
		}
	case Invalid:
		if table == TableWatch {
			bad("semantics %q in the watch table", e.Semantics)
		}
	default:
		if !isWatch {
			bad("unknown semantics %q", e.Semantics)
		}
	}
	switch {
	case isWatch && table != TableWatch && !streaming:
		bad("watch semantics %q outside the watch and streaming tables", e.Semantics)
	case isWatch && q.Verb != TableWatch:
		bad("watch semantics %q for a %s query", e.Semantics, q.Verb)
	case isWatch && table == TableWatch && !slices.Contains(watchSemantics[:3], e.Semantics):
		bad("semantics %q is not in the documented watch table", e.Semantics)
	}
	if e.InitialEventsEnd && (!streaming || !q.AllowWatchBookmarks || !isWatch) {
		bad("only accepted streaming watches that allow bookmarks end their initial events with a bookmark")
	}
	if e.Semantics == Invalid {
		if e.Code < 400 || e.Code > 499 || e.Reason == "" || e.Message == "" {
			bad("invalid cell needs the observed 4xx code, reason and message")
		}
	} else if e.Code != 0 || e.Reason != "" || e.Message != "" || e.Cause != nil {
		bad("only invalid cells carry a status")
	}
	return errs
}

// copyCell returns c with its pointer fields copied.
func copyCell(c Cell) Cell {
	if c.Expect.Cause != nil {
		cause := *c.Expect.Cause
		c.Expect.Cause = &cause
	}
	return c
}

func (t Table) clone() Table {
	c := t
	c.Headers = append([]string(nil), t.Headers...)
	c.Rows = make([]Row, len(t.Rows))
	for i, r := range t.Rows {
		c.Rows[i].Headers = append([]string(nil), r.Headers...)
		c.Rows[i].Cells = make([]Cell, len(r.Cells))
		for j, cell := range r.Cells {
			c.Rows[i].Cells[j] = copyCell(cell)
		}
	}
	return c
}
