package catalog

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

// Table IDs.
const (
	TableGet   = "get"
	TableList  = "list"
	TableWatch = "watch"
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
