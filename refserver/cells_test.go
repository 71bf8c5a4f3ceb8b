package refserver

import (
	"fmt"
	"net/url"
	"strconv"
	"testing"

	"github.com/apiconform/apiconform/spec/catalog"
)

// TestDocumentedCellsOverHTTP walks every cell of the documented get, list
// and watch tables against the server, checking codes, reasons, messages and
// the resourceVersion a list is served at.
func TestDocumentedCellsOverHTTP(t *testing.T) {
	_, c := startTest(t)
	c.ns("cells")
	base := "/api/v1/namespaces/cells/configmaps"
	for i := 0; i < 3; i++ {
		c.mustCode(c.do("POST", base, cm(fmt.Sprintf("c%d", i), nil, nil)), 201)
	}
	older := c.do("GET", base+"/c0", nil).str("metadata.resourceVersion")
	// A later write makes "older" a historical revision.
	c.mustCode(c.do("POST", base, cm("later", nil, nil)), 201)
	for _, tbl := range catalog.Tables() {
		for _, cell := range tbl.Cells() {
			cell := cell
			q := cell.Query
			t.Run(fmt.Sprintf("%s/%s", tbl.ID, cell.Requirement), func(t *testing.T) {
				v := url.Values{}
				switch q.ResourceVersion {
				case catalog.RVZero:
					v.Set("resourceVersion", "0")
				case catalog.RVValue:
					v.Set("resourceVersion", older)
				}
				if q.ResourceVersionMatch != "" {
					v.Set("resourceVersionMatch", q.ResourceVersionMatch)
				}
				if q.SendInitialEvents != "" {
					v.Set("sendInitialEvents", q.SendInitialEvents)
				}
				if q.AllowWatchBookmarks {
					v.Set("allowWatchBookmarks", "true")
				}
				if q.Limit {
					v.Set("limit", "2")
				}
				var tokenRV string
				if q.Continue {
					first := c.do("GET", base+"?limit=2", nil)
					v.Set("continue", first.str("metadata.continue"))
					tokenRV = first.str("metadata.resourceVersion")
				}
				path := base
				switch q.Verb {
				case "get":
					path += "/c0"
				case "watch":
					v.Set("watch", "1")
					v.Set("timeoutSeconds", "1")
				}
				current := c.do("GET", base, nil).str("metadata.resourceVersion")
				full := path + "?" + v.Encode()
				if cell.Expect.Semantics == catalog.Invalid {
					r := c.do("GET", full, nil)
					if r.Code != cell.Expect.Code || r.str("reason") != cell.Expect.Reason {
						t.Fatalf("%s: got %d %s, want %d %s", full, r.Code, r.str("reason"), cell.Expect.Code, cell.Expect.Reason)
					}
					if cell.Expect.Message != "" && r.str("message") != cell.Expect.Message {
						t.Fatalf("message %q, want %q", r.str("message"), cell.Expect.Message)
					}
					return
				}
				if q.Verb == "watch" {
					next, stop := c.watch(full)
					defer stop()
					c.mustCode(c.do("PATCH", base+"/c1", fmt.Sprintf(`{"data":{"n":%q}}`, current), "Content-Type", "application/merge-patch+json"), 200)
					ev := next()
					for ev["type"] == "BOOKMARK" && !cell.Expect.InitialEventsEnd {
						ev = next() // periodic bookmarks say nothing about the start
					}
					switch cell.Expect.Semantics {
					case catalog.StartAtExact, catalog.StartAtMostRecent, catalog.StartAtAny:
						// Changes only: the later create or the patch comes first, never a synthetic ADDED of c0.
						if evName(ev) == "c0" {
							t.Fatalf("synthetic event for the old state: %v", ev)
						}
					default:
						if ev["type"] != "ADDED" {
							t.Fatalf("want synthetic ADDED first, got %v", ev)
						}
					}
					return
				}
				r := c.do("GET", full, nil)
				c.mustCode(r, 200)
				if q.Verb == "get" {
					return
				}
				got := r.str("metadata.resourceVersion")
				switch cell.Expect.Semantics {
				case catalog.Exact:
					if got != older {
						t.Fatalf("Exact list at %s, want %s", got, older)
					}
				case catalog.ContinueTokenExact:
					if got != tokenRV {
						t.Fatalf("continued list at %s, want the token's %s", got, tokenRV)
					}
				case catalog.MostRecent, catalog.NotOlderThan:
					g, _ := strconv.Atoi(got)
					cur, _ := strconv.Atoi(current)
					if g < cur {
						t.Fatalf("list at %s, older than %s", got, current)
					}
				}
			})
		}
	}
}
