package watch

import (
	"fmt"
	"net/http"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/tidwall/gjson"

	"github.com/apiconform/apiconform/spec/catalog"
	fw "github.com/apiconform/apiconform/suites/framework"
)

// One spec per cell of the streaming table (sendInitialEvents ×
// resourceVersionMatch × resourceVersion for watch, and sendInitialEvents on
// list), from the catalogue's data.
var _ = Describe("streaming lists table", fw.Area(area), func() {
	f := fw.New(area)

	fw.DescribeCatalogTable("sendInitialEvents", catalog.TableStreaming, func(cell catalog.Cell) { checkStreamingCell(f, cell) })
})

// endAnnotation marks the bookmark that ends a watch's initial events.
const endAnnotation = `metadata.annotations.k8s\.io/initial-events-end`

// checkStreamingCell: a and b exist at N; a changes after N (a2); the watch
// opens with the cell's parameters (resourceVersion N for the value column);
// c is created once the initial events are read. Rejected cells need no
// objects: they check kube-apiserver's recorded answer.
func checkStreamingCell(f *fw.Framework, cell catalog.Cell) {
	fw.RequireSince(cell.Requirement)
	q := cell.Query
	if cell.Expect.Semantics == catalog.Invalid {
		checkRejectedStreamingCell(f, cell)
		return
	}
	// A server without streaming lists may refuse or ignore the parameters
	// (and sends no initial-events-end bookmark by default).
	fw.RequireWatchList()
	a := f.CreateObj(f.Name("a"), "v1", nil)
	b := f.CreateObj(f.Name("b"), "v1", nil)
	n := currentRV(f)
	a2 := f.SetObj(a.Name, "v2")
	w := open(f, streamingQuery(q, n)...)

	var stale bool // the state sent is older than a2: a2 must follow as a change
	switch cell.Expect.Semantics {
	case catalog.GetStateAndStartAtMostRecent, catalog.GetStateAndStartAtAny, catalog.GetStateAndStartAtNotOlderThan:
		state, end := initialEvents(w)
		switch cell.Expect.Semantics {
		case catalog.GetStateAndStartAtMostRecent:
			Expect(state).To(ConsistOf(ev{"ADDED", a2}, ev{"ADDED", b}),
				"the initial events are the latest state: ADDED for each object, a as changed after %s", n)
		default:
			Expect(state).To(Or(ConsistOf(ev{"ADDED", a2}, ev{"ADDED", b}), ConsistOf(ev{"ADDED", a}, ev{"ADDED", b})),
				"the initial events are ADDED for each object of a state the objects had")
			stale = slices.Contains(state, ev{"ADDED", a})
		}
		floor := a2.RV
		if stale {
			floor = b.RV
		}
		expectBookmarkCovers(end, floor, "the state sent")
		if cell.Expect.Semantics == catalog.GetStateAndStartAtNotOlderThan {
			expectBookmarkCovers(end, n, "the resourceVersion asked for")
		}
		fw.Record("initial state", "%v, initial-events-end bookmark at %s", state, end.Get("metadata.resourceVersion").String())
	case catalog.StartAtMostRecent, catalog.StartAtAny, catalog.StartAtExact:
		// No initial state: the events are changes only.
	default:
		Fail(fmt.Sprintf("streaming cell %s: semantics %q has no check", cell.Requirement, cell.Expect.Semantics))
	}

	c := f.CreateObj(f.Name("c"), "v1", nil)
	changes := changesUntilAdded(w, c.Name)
	switch {
	case cell.Expect.Semantics == catalog.StartAtExact:
		Expect(changes).To(Equal([]ev{{"MODIFIED", a2}, {"ADDED", c}}),
			"no initial state: the changes after %s, then the create made after the watch opened", n)
	case cell.Expect.Semantics == catalog.StartAtMostRecent:
		Expect(changes).To(Equal([]ev{{"ADDED", c}}),
			"no initial state and no change made before the watch opened: only the create made after it")
	case cell.Expect.Semantics == catalog.StartAtAny:
		Expect(changes).To(Or(Equal([]ev{{"ADDED", c}}), Equal([]ev{{"MODIFIED", a2}, {"ADDED", c}})),
			"no initial state: changes from some start, ending with the create made after the watch opened")
		fw.Record("start", "%v", changes)
	case stale:
		Expect(changes).To(Equal([]ev{{"MODIFIED", a2}, {"ADDED", c}}), "a stale state is followed by the later changes")
	default:
		Expect(changes).To(Equal([]ev{{"ADDED", c}}), "after the initial events, the change made after them")
	}
}

// streamingQuery is the watch's query for a cell, with n as the value.
func streamingQuery(q catalog.Query, n string) []string {
	var out []string
	if q.SendInitialEvents != "" {
		out = append(out, "sendInitialEvents", q.SendInitialEvents)
	}
	if q.ResourceVersionMatch != "" {
		out = append(out, "resourceVersionMatch", q.ResourceVersionMatch)
	}
	switch q.ResourceVersion {
	case catalog.RVZero:
		out = append(out, "resourceVersion", "0")
	case catalog.RVValue:
		out = append(out, "resourceVersion", n)
	}
	if q.AllowWatchBookmarks {
		out = append(out, "allowWatchBookmarks", "true")
	}
	return out
}

// initialEvents reads up to the initial-events-end bookmark and returns the
// events before it (other bookmarks left out) and the bookmark's object.
func initialEvents(w *fw.Watch) ([]ev, gjson.Result) {
	var out []ev
	for len(out) < maxEvents {
		e := next(w)
		ExpectWithOffset(1, e.Type).NotTo(Equal("ERROR"), "the initial events end with a bookmark, not an error: %s", e.Raw)
		if e.Type != "BOOKMARK" {
			out = append(out, reduce(e))
			continue
		}
		if e.Object.Get(endAnnotation).String() == "true" {
			return out, e.Object
		}
	}
	Fail(fmt.Sprintf("no initial-events-end bookmark among %d events", maxEvents))
	return nil, gjson.Result{}
}

// changesUntilAdded reads up to the ADDED event of name and returns the
// events without bookmarks; an initial-events-end bookmark here fails.
func changesUntilAdded(w *fw.Watch, name string) []ev {
	var out []ev
	for len(out) < maxEvents {
		e := next(w)
		switch {
		case e.Type == "BOOKMARK":
			ExpectWithOffset(1, e.Object.Get(endAnnotation).Exists()).To(BeFalse(),
				"no initial-events-end bookmark where no initial events were asked for or after they ended: %s", e.Raw)
			continue
		case e.Type == "ERROR":
			Fail(fmt.Sprintf("the watch ended with an ERROR event: %s", e.Raw))
		}
		r := reduce(e)
		out = append(out, r)
		if r.Type == "ADDED" && r.Obj.Name == name {
			return out
		}
	}
	Fail(fmt.Sprintf("no ADDED event for %s among %d events", name, maxEvents))
	return nil
}

// expectBookmarkCovers checks the initial-events-end bookmark's
// resourceVersion is not older than rv (when both are integers).
func expectBookmarkCovers(bm gjson.Result, rv, what string) {
	got := bm.Get("metadata.resourceVersion").String()
	ExpectWithOffset(1, got).NotTo(BeEmpty(), "the initial-events-end bookmark carries a resourceVersion: %s", bm.Raw)
	if n, ok := fw.RVInt(got); ok {
		if m, ok := fw.RVInt(rv); ok {
			ExpectWithOffset(1, n).To(BeNumerically(">=", m), "the initial-events-end bookmark's resourceVersion covers %s (%s): %s", what, rv, bm.Raw)
		}
	}
}

// checkRejectedStreamingCell sends the cell's request and checks the
// Status kube-apiserver answers, as the catalogue recorded it.
func checkRejectedStreamingCell(f *fw.Framework, cell catalog.Cell) {
	q := streamingQuery(cell.Query, currentRV(f))
	want := cell.Expect
	var code int
	var body []byte
	if cell.Query.Verb == catalog.TableList {
		var opts []fw.Option
		for i := 0; i < len(q); i += 2 {
			opts = append(opts, fw.Query(q[i], q[i+1]))
		}
		r := f.Get(f.ConfigMapsPath(), opts...)
		fw.ExpectStatus(r, want.Code, want.Reason)
		code, body = r.Code, r.Body
	} else {
		w := openAny(f, q...)
		defer w.Close()
		if w.Code == http.StatusOK {
			e, err := w.Next(eventWait)
			Fail(fmt.Sprintf("watch %v: expected %d %s, got 200 OK and a stream (first event %s, %v)", q, want.Code, want.Reason, e.Raw, err))
		}
		code, body = w.Code, w.Body
	}
	s := gjson.ParseBytes(body)
	Expect(code).To(Equal(want.Code), "%v: %s", q, body)
	Expect(s.Get("kind").String()).To(Equal("Status"), "%s", body)
	Expect(s.Get("reason").String()).To(Equal(want.Reason), "%s", body)
	Expect(s.Get("message").String()).To(Equal(want.Message), "%s", body)
	if c := want.Cause; c != nil {
		first := s.Get("details.causes.0")
		Expect(first.Get("reason").String()).To(Equal(c.Reason), "%s", body)
		Expect(first.Get("field").String()).To(Equal(c.Field), "%s", body)
		Expect(first.Get("message").String()).To(Equal(c.Message), "%s", body)
	}
}
