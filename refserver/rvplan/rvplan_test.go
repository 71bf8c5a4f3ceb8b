package rvplan

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiconform/apiconform/spec/catalog"
)

// requestFor turns a catalogue cell's query into an rvplan request.
func requestFor(q catalog.Query) Request {
	r := Request{Verb: Verb(q.Verb), ResourceVersionMatch: q.ResourceVersionMatch}
	switch q.ResourceVersion {
	case catalog.RVZero:
		r.ResourceVersion = "0"
	case catalog.RVValue:
		r.ResourceVersion = "42"
	}
	if q.Limit {
		r.Limit = 10
	}
	if q.Continue {
		r.Continue = EncodeContinue(40, "a\x00")
	}
	if q.SendInitialEvents != "" {
		send := q.SendInitialEvents == "true"
		r.SendInitialEvents = &send
	}
	r.AllowWatchBookmarks = q.AllowWatchBookmarks
	return r
}

// wantMode maps a documented semantics to the plan mode that implements it.
var wantMode = map[catalog.Semantics]Mode{
	catalog.MostRecent:                   Latest,
	catalog.Any:                          Any,
	catalog.NotOlderThan:                 NotOlderThan,
	catalog.Exact:                        Exact,
	catalog.ContinueTokenExact:           Continue,
	catalog.GetStateAndStartAtMostRecent: Latest,
	catalog.GetStateAndStartAtAny:        Any,
	catalog.StartAtExact:                 Exact,
	// The streaming table's.
	catalog.GetStateAndStartAtNotOlderThan: NotOlderThan,
	catalog.StartAtMostRecent:              Latest,
	catalog.StartAtAny:                     Any,
}

func TestEveryDocumentedCell(t *testing.T) {
	tables := catalog.Tables()
	if len(tables) == 0 {
		t.Fatal("the catalogue has no tables")
	}
	n := 0
	for _, tbl := range tables {
		for _, cell := range tbl.Cells() {
			n++
			cell := cell
			name := fmt.Sprintf("%s/%s/%+v", tbl.ID, cell.Requirement, cell.Query)
			t.Run(name, func(t *testing.T) {
				plan, serr := Make(requestFor(cell.Query))
				if cell.Expect.Semantics == catalog.Invalid {
					if serr == nil {
						t.Fatalf("want %d %s, got plan %+v", cell.Expect.Code, cell.Expect.Reason, plan)
					}
					st := serr.ErrStatus
					if int(st.Code) != cell.Expect.Code || string(st.Reason) != cell.Expect.Reason {
						t.Fatalf("got %d %s, want %d %s", st.Code, st.Reason, cell.Expect.Code, cell.Expect.Reason)
					}
					if st.Code == 422 && (st.Details == nil || st.Details.Kind != "ListOptions" || st.Details.Group != "meta.k8s.io") {
						t.Fatalf("details %+v, want group meta.k8s.io, kind ListOptions", st.Details)
					}
					if cell.Expect.Message != "" && st.Message != cell.Expect.Message {
						t.Fatalf("message\n got %q\nwant %q", st.Message, cell.Expect.Message)
					}
					if c := cell.Expect.Cause; c != nil {
						if st.Details == nil || len(st.Details.Causes) == 0 {
							t.Fatalf("no causes, want %+v", *c)
						}
						got := st.Details.Causes[0]
						if string(got.Type) != c.Reason || got.Field != c.Field || (c.Message != "" && got.Message != c.Message) {
							t.Fatalf("cause %+v, want %+v", got, *c)
						}
					}
					return
				}
				if serr != nil {
					t.Fatalf("want %s, got error %v", cell.Expect.Semantics, serr)
				}
				want, ok := wantMode[cell.Expect.Semantics]
				if !ok {
					t.Fatalf("no mode for semantics %q", cell.Expect.Semantics)
				}
				if plan.Mode != want {
					t.Fatalf("mode %s, want %s", plan.Mode, want)
				}
				if plan.InitialEventsEndBookmark != cell.Expect.InitialEventsEnd {
					t.Fatalf("initial-events-end bookmark %v, want %v", plan.InitialEventsEndBookmark, cell.Expect.InitialEventsEnd)
				}
				switch cell.Expect.Semantics {
				case catalog.GetStateAndStartAtMostRecent, catalog.GetStateAndStartAtAny:
					if !plan.InitialEvents {
						t.Fatal("want synthetic ADDED events for the current state")
					}
				case catalog.GetStateAndStartAtNotOlderThan:
					if !plan.InitialEvents || plan.Revision != 42 {
						t.Fatalf("want the state not older than 42 as ADDED events, got %+v", plan)
					}
				case catalog.StartAtMostRecent, catalog.StartAtAny:
					if plan.InitialEvents {
						t.Fatalf("want no initial state, got %+v", plan)
					}
				case catalog.StartAtExact:
					if plan.InitialEvents || plan.Revision != 42 {
						t.Fatalf("want changes after 42 only, got %+v", plan)
					}
				case catalog.Exact, catalog.NotOlderThan:
					if plan.Revision != 42 {
						t.Fatalf("revision %d, want 42", plan.Revision)
					}
				case catalog.ContinueTokenExact:
					if plan.Revision != 40 || plan.StartKey != "a\x00" {
						t.Fatalf("continue plan %+v, want the token's revision and key", plan)
					}
				}
			})
		}
	}
	if n < 60 {
		t.Fatalf("only %d cells walked", n)
	}
}

func TestErrorsOutsideTheTables(t *testing.T) {
	cases := []struct {
		name   string
		req    Request
		code   int32
		reason string
		msg    string
	}{
		{"unknown match", Request{Verb: List, ResourceVersion: "1", ResourceVersionMatch: "Foo"}, 422, "Invalid",
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""`},
		{"non-numeric list rv", Request{Verb: List, ResourceVersion: "abc"}, 400, "BadRequest",
			`invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"non-numeric get rv", Request{Verb: Get, ResourceVersion: "abc"}, 500, "",
			`resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"malformed continue", Request{Verb: List, Continue: "abc"}, 400, "BadRequest", ""},
		{"continue with rv", Request{Verb: List, Continue: EncodeContinue(3, "x"), ResourceVersion: "5"}, 400, "BadRequest",
			"specifying resource version is not allowed when using continue"},
		{"watch with Exact", Request{Verb: Watch, ResourceVersion: "5", ResourceVersionMatch: "Exact"}, 422, "Invalid",
			`ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided, resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"]`},
		// Observed on kube-apiserver v1.36.3: the list's own rule first.
		{"list with sendInitialEvents and a match without resourceVersion", Request{Verb: List, ResourceVersionMatch: "Exact", SendInitialEvents: ptr(true)}, 422, "Invalid",
			`ListOptions.meta.k8s.io "" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]`},
		{"sendInitialEvents without match", Request{Verb: Watch, SendInitialEvents: ptr(true)}, 422, "Invalid",
			`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, serr := Make(c.req)
			if serr == nil {
				t.Fatal("want an error")
			}
			st := serr.ErrStatus
			if st.Code != c.code || string(st.Reason) != c.reason || (c.msg != "" && st.Message != c.msg) {
				t.Fatalf("got %d %s %q", st.Code, st.Reason, st.Message)
			}
		})
	}
}

func TestContinueTokenRoundTrip(t *testing.T) {
	for _, rev := range []int64{1, 99, InconsistentRevision, -7} {
		tok, err := DecodeContinue(EncodeContinue(rev, "ns/name\x00"))
		if err != nil || tok.Revision != rev || tok.Start != "ns/name\x00" {
			t.Fatalf("rev %d: got %+v, %v", rev, tok, err)
		}
	}
	if tok, err := DecodeContinue(EncodeContinue(5, "/ns/b\x00")); err != nil || tok.Start != "ns/b\x00" {
		t.Fatalf("a leading slash: got %+v, %v; want the key relative to the prefix", tok, err)
	}
	for _, bad := range []string{"", "!!", "e30", EncodeContinue(0, "x")} {
		if _, err := DecodeContinue(bad); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestContinueTokenErrors: a bad token is a 400 BadRequest worded as
// kube-apiserver words it (k8s.io/apiserver/pkg/storage/continue.go, wrapped
// as "invalid continue token: %v").
func TestContinueTokenErrors(t *testing.T) {
	token := func(js string) string { return base64.RawURLEncoding.EncodeToString([]byte(js)) }
	cases := []struct {
		name, token, msg string
	}{
		{"not base64", "!!!", "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"},
		{"padded", base64.URLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"abc"}`)),
			"invalid continue token: continue key is not valid: illegal base64 data at input byte 58"},
		{"not JSON", token("{"), "invalid continue token: continue key is not valid: unexpected end of JSON input"},
		{"unknown version", token(`{"v":"meta.k8s.io/v2","rv":5,"start":"a"}`),
			"invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2"},
		{"no version", token(`{"rv":5,"start":"a"}`),
			"invalid continue token: continue key is not valid: server does not recognize this encoded version "},
		{"zero revision", token(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`),
			"invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{"empty start key", token(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`),
			"invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{"start key climbs out", token(`{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/x"}`),
			"invalid continue token: continue key is not valid: ../secrets/x"},
		{"start key not clean", token(`{"v":"meta.k8s.io/v1","rv":5,"start":"ns//x"}`),
			"invalid continue token: continue key is not valid: ns//x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, serr := Make(Request{Verb: List, Continue: c.token})
			if serr == nil {
				t.Fatal("want an error")
			}
			st := serr.ErrStatus
			if st.Code != 400 || st.Reason != metav1.StatusReasonBadRequest || st.Message != c.msg {
				t.Fatalf("got %d %s %q, want 400 BadRequest %q", st.Code, st.Reason, st.Message, c.msg)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func FuzzDecodeContinue(f *testing.F) {
	f.Add(EncodeContinue(5, "a\x00"))
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MjU1OSwic3RhcnQiOiIvYlx1MDAwMCJ9")
	f.Add("%%%")
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := DecodeContinue(s)
		if err == nil && (tok.Revision == 0 || strings.HasPrefix(tok.Start, "/")) {
			t.Fatalf("accepted an unusable token %+v", tok)
		}
	})
}
