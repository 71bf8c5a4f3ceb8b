package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// The streaming table holds every watch combination of sendInitialEvents
// {unset, true, false} × resourceVersionMatch {unset, NotOlderThan, Exact}
// × resourceVersion {unset, "0", N} once, and the list requests with
// sendInitialEvents, each with what kube-apiserver v1.36.3 was seen to do.
func TestStreamingTableAsObserved(t *testing.T) {
	type want struct {
		req string
		sem Semantics
		end bool
	}
	const (
		def   = "WATCH-SEND-INITIAL-EVENTS-DEFAULT"
		match = "WATCH-MATCH-REQUIRES-SEND-INITIAL-EVENTS"
		not   = "WATCH-SEND-INITIAL-EVENTS-REQUIRES-NOTOLDERTHAN"
		sie   = "WATCH-SEND-INITIAL-EVENTS"
		off   = "WATCH-SEND-INITIAL-EVENTS-FALSE"
		list  = "WATCH-SEND-INITIAL-EVENTS-NOT-FOR-LIST"
	)
	bad := func(req string) [3]want {
		return [3]want{{req, Invalid, false}, {req, Invalid, false}, {req, Invalid, false}}
	}
	rows := []struct {
		verb, sie, match string
		cells            [3]want
	}{
		{"watch", "", "", [3]want{{def, GetStateAndStartAtMostRecent, true}, {def, GetStateAndStartAtAny, true}, {def, StartAtExact, false}}},
		{"watch", "", "NotOlderThan", bad(match)},
		{"watch", "", "Exact", bad(match)},
		{"watch", "true", "", bad(not)},
		{"watch", "true", "NotOlderThan", [3]want{{sie, GetStateAndStartAtMostRecent, true}, {sie, GetStateAndStartAtAny, true}, {sie, GetStateAndStartAtNotOlderThan, true}}},
		{"watch", "true", "Exact", bad(not)},
		{"watch", "false", "", bad(not)},
		{"watch", "false", "NotOlderThan", [3]want{{off, StartAtMostRecent, false}, {off, StartAtAny, false}, {off, StartAtExact, false}}},
		{"watch", "false", "Exact", bad(not)},
		{"list", "true", "", bad(list)},
		{"list", "false", "", bad(list)},
	}
	tab, ok := TableByID(TableStreaming)
	if !ok {
		t.Fatal("no streaming table")
	}
	if len(tab.Rows) != len(rows) {
		t.Fatalf("%d rows, want %d", len(tab.Rows), len(rows))
	}
	for i, r := range rows {
		for j, w := range r.cells {
			rv := []RVParam{RVUnset, RVZero, RVValue}[j]
			q := Query{Verb: r.verb, ResourceVersion: rv, ResourceVersionMatch: r.match, SendInitialEvents: r.sie, AllowWatchBookmarks: r.verb == "watch"}
			name := fmt.Sprintf("%s/sendInitialEvents=%q/match=%q/rv=%s", r.verb, r.sie, r.match, rv)
			c := tab.Rows[i].Cells[j]
			if c.Query != q {
				t.Errorf("%s: row %d cell %d holds query %+v", name, i, j, c.Query)
				continue
			}
			if found, ok := CellFor(q); !ok || found.Requirement != w.req {
				t.Errorf("%s: CellFor = %s, %v", name, found.Requirement, ok)
			}
			if c.Requirement != w.req || c.Expect.Semantics != w.sem || c.Expect.InitialEventsEnd != w.end {
				t.Errorf("%s = {%s %s end=%v}, want {%s %s end=%v}", name, c.Requirement, c.Expect.Semantics, c.Expect.InitialEventsEnd, w.req, w.sem, w.end)
			}
			if w.sem != Invalid {
				continue
			}
			field := "resourceVersionMatch"
			if r.verb == "list" {
				field = "sendInitialEvents"
			}
			if c.Expect.Code != 422 || c.Expect.Reason != "Invalid" || c.Expect.Cause == nil || c.Expect.Cause.Field != field {
				t.Errorf("%s: %+v, want 422 Invalid with a first cause on %s", name, c.Expect, field)
			}
			// Exact is refused twice over: the first rule, then the unsupported value.
			if twice := strings.HasPrefix(c.Expect.Message, `ListOptions.meta.k8s.io "" is invalid: [`); twice != (r.match == "Exact") {
				t.Errorf("%s: message %q", name, c.Expect.Message)
			}
		}
	}
}
