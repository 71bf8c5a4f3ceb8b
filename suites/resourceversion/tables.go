package resourceversion

import (
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/apiconform/apiconform/spec/catalog"
	fw "github.com/apiconform/apiconform/suites/framework"
)

// One spec per cell of the documented get and list tables, built from the
// catalogue's table data: the cell's query says what to send, its expected
// outcome what to check.
var _ = Describe("resourceVersion tables", fw.Area(area), func() {
	f := fw.New(area)

	fw.DescribeCatalogTable("get", catalog.TableGet, func(cell catalog.Cell) { checkGetCell(f, cell) })
	fw.DescribeCatalogTable("list", catalog.TableList, func(cell catalog.Cell) { checkListCell(f, cell) })
})

// checkGetCell writes one object twice and reads it with the cell's query.
func checkGetCell(f *fw.Framework, cell catalog.Cell) {
	name := f.Name("get")
	v1 := f.CreateObj(name, "v1", nil)
	v2 := f.SetObj(name, "v2")

	var opts []fw.Option
	switch cell.Query.ResourceVersion {
	case catalog.RVZero:
		opts = append(opts, fw.Query("resourceVersion", "0"))
	case catalog.RVValue:
		opts = append(opts, fw.Query("resourceVersion", v2.RV))
	}
	r := f.GetConfigMap(name, opts...)
	got := fw.ObjOf(r.JSON("@this"))

	switch cell.Expect.Semantics {
	case catalog.MostRecent:
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(got).To(Equal(v2), "a Most Recent get must show the last write")
	case catalog.Any:
		if r.Code == http.StatusNotFound {
			fw.ExpectStatus(r, http.StatusNotFound, "NotFound")
			fw.Record("Any", "served from a state before the object existed (404), allowed for Any")
			return
		}
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(got).To(BeElementOf(v1, v2), "Any may be stale but must be a version the object had")
		fw.Record("Any", "served %s; latest is %s", got, v2)
	case catalog.NotOlderThan:
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(got).To(Equal(v2), "the only version not older than %s is the latest", v2.RV)
		older := f.GetConfigMap(name, fw.Query("resourceVersion", v1.RV))
		Expect(older.Code).To(Equal(http.StatusOK), "%s", older)
		gotOlder := fw.ObjOf(older.JSON("@this"))
		Expect(gotOlder).To(BeElementOf(v1, v2), "not older than %s: the object at %s or later", v1.RV, v1.RV)
	default:
		Fail(fmt.Sprintf("get cell %s: semantics %q has no check", cell.Requirement, cell.Expect.Semantics))
	}
}

// listFixture is a namespace with a known history:
// a, b, c created (list at rv1 sees at1), then b changed and d created (now).
type listFixture struct {
	rv1  string
	at1  snapshot
	now  snapshot
	seen map[string][]fw.Obj // every state each object had
}

func newListFixture(f *fw.Framework) *listFixture {
	a := f.CreateObj(f.Name("a"), "v1", nil)
	b := f.CreateObj(f.Name("b"), "v1", nil)
	c := f.CreateObj(f.Name("c"), "v1", nil)
	r := list(f)
	Expect(r.Code).To(Equal(http.StatusOK), "fixture list: %s", r)
	fx := &listFixture{rv1: r.Str("metadata.resourceVersion"), at1: sorted(fw.Items(r))}
	Expect(fx.at1).To(Equal(sorted([]fw.Obj{a, b, c})), "fixture: a list right after three creates shows them")
	b2 := f.SetObj(b.Name, "v2")
	d := f.CreateObj(f.Name("d"), "v1", nil)
	fx.now = sorted([]fw.Obj{a, b2, c, d})
	fx.seen = map[string][]fw.Obj{a.Name: {a}, b.Name: {b, b2}, c.Name: {c}, d.Name: {d}}
	return fx
}

const pageSize = 2

// checkListCell builds the fixture, sends the cell's list query and checks
// the documented semantics (or, for Invalid cells, kube-apiserver's exact answer).
func checkListCell(f *fw.Framework, cell catalog.Cell) {
	fx := newListFixture(f)
	q := cell.Query
	var opts []fw.Option
	if q.ResourceVersionMatch != "" {
		opts = append(opts, fw.Query("resourceVersionMatch", q.ResourceVersionMatch))
	}
	if q.Limit {
		opts = append(opts, fw.Query("limit", fmt.Sprint(pageSize)))
	}

	if q.Continue {
		checkContinueCell(f, fx, cell, opts)
		return
	}
	switch q.ResourceVersion {
	case catalog.RVZero:
		opts = append(opts, fw.Query("resourceVersion", "0"))
	case catalog.RVValue:
		opts = append(opts, fw.Query("resourceVersion", fx.rv1))
	}
	r := list(f, opts...)
	if cell.Expect.Semantics == catalog.Invalid {
		expectStatusCell(r, cell.Expect)
		return
	}
	if cell.Expect.Semantics == catalog.Exact && r.Code == http.StatusGone {
		// The document's Exact: "If the provided resourceVersion is unavailable, the server responds with HTTP 410".
		fw.ExpectGone(r)
		fw.Record("Exact", "resourceVersion %s was no longer available: %s", fx.rv1, r.Str("message"))
		return
	}
	Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
	Expect(r.Str("metadata.resourceVersion")).NotTo(BeEmpty(), "a list carries the collection's resourceVersion")
	got := fw.Items(r)
	limited := r.Str("metadata.continue") != ""

	switch cell.Expect.Semantics {
	case catalog.MostRecent:
		want := fx.now
		if q.Limit {
			want = fx.now.prefixOf(pageSize)
			Expect(limited).To(BeTrue(), "more items remain, so the page carries a continue token: %s", r)
		}
		Expect(sorted(got)).To(Equal(want), "a Most Recent list shows every write made before it")
	case catalog.Any:
		for _, it := range got {
			Expect(fx.seen[it.Name]).To(ContainElement(it), "Any may be stale but shows states the objects had")
		}
		fw.Record("Any", "served %d items at collection resourceVersion %s (latest state has %d; limit=%v sent, continue returned=%v)",
			len(got), r.Str("metadata.resourceVersion"), len(fx.now), q.Limit, limited)
	case catalog.NotOlderThan:
		names := namesOf(sorted(got))
		if q.Limit && limited {
			Expect(len(got)).To(BeNumerically("<=", len(fx.now)), "%s", r)
			Expect(names).To(Equal(namesOf(fx.now)[:len(got)]), "a page of a list not older than %s starts at the first key", fx.rv1)
		} else {
			// A snapshot between rv1 and now: before or after d was created.
			Expect(names).To(Or(Equal(namesOf(fx.at1)), Equal(namesOf(fx.now))),
				"not older than %s: every object that existed then (none was deleted) is listed", fx.rv1)
		}
		for _, it := range got {
			Expect(fx.seen[it.Name]).To(ContainElement(it))
		}
		if have, ok1 := fw.RVInt(r.Str("metadata.resourceVersion")); ok1 {
			if floor, ok2 := fw.RVInt(fx.rv1); ok2 {
				Expect(have).To(BeNumerically(">=", floor), "collection resourceVersion not older than the requested one")
			}
		}
	case catalog.Exact:
		Expect(r.Str("metadata.resourceVersion")).To(Equal(fx.rv1), "Exact: the collection's resourceVersion is the requested one")
		want := fx.at1
		if q.Limit {
			want = fx.at1.prefixOf(pageSize)
		}
		Expect(got).To(Equal([]fw.Obj(want)), "Exact: the items as they were at %s", fx.rv1)
		if q.Limit {
			Expect(limited).To(BeTrue(), "more items remain at %s, so the page carries a continue token", fx.rv1)
		}
	default:
		Fail(fmt.Sprintf("list cell %s: semantics %q has no check", cell.Requirement, cell.Expect.Semantics))
	}
}

// checkContinueCell reads a first page, changes the namespace, and sends the
// continuation with the cell's resourceVersion.
func checkContinueCell(f *fw.Framework, fx *listFixture, cell catalog.Cell, opts []fw.Option) {
	first := list(f, fw.Query("limit", fmt.Sprint(pageSize)))
	Expect(first.Code).To(Equal(http.StatusOK), "first page: %s", first)
	token := first.Str("metadata.continue")
	Expect(token).NotTo(BeEmpty(), "first page of %d items with limit %d carries a continue token: %s", len(fx.now), pageSize, first)
	atP := first.Str("metadata.resourceVersion")
	Expect(sorted(fw.Items(first))).To(Equal(fx.now.prefixOf(pageSize)), "first page")
	restAtP := fx.now[pageSize:]

	// Change what the rest of the snapshot holds: the continuation must not show it.
	f.SetObj(restAtP[0].Name, "v2")
	f.CreateObj(f.Name("z"), "v1", nil)
	f.DeleteObj(restAtP[len(restAtP)-1].Name)

	opts = append(opts, fw.Query("continue", token))
	switch cell.Query.ResourceVersion {
	case catalog.RVZero:
		opts = append(opts, fw.Query("resourceVersion", "0"))
	case catalog.RVValue:
		opts = append(opts, fw.Query("resourceVersion", atP))
	}
	r := list(f, opts...)
	switch cell.Expect.Semantics {
	case catalog.Invalid:
		expectStatusCell(r, cell.Expect)
	case catalog.ContinueTokenExact:
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("metadata.resourceVersion")).To(Equal(atP), "a continued list is served at the first page's resourceVersion")
		got := fw.Items(r)
		Expect(got).NotTo(BeEmpty(), "%s", r)
		Expect(got).To(Equal([]fw.Obj(restAtP.prefixOf(len(got)))), "the continuation shows the snapshot at %s, not later changes", atP)
		if len(got) < len(restAtP) {
			Expect(r.Str("metadata.continue")).NotTo(BeEmpty(), "items remain in the snapshot, so a continue token follows")
		}
		if len(got) > pageSize {
			fw.Record("limit", "the continuation returned %d items for limit=%d (limit not honoured with resourceVersion=%q)", len(got), pageSize, cell.Query.ResourceVersion)
		}
	default:
		Fail(fmt.Sprintf("continue cell %s: semantics %q has no check", cell.Requirement, cell.Expect.Semantics))
	}
}

func namesOf(s []fw.Obj) []string {
	out := make([]string, len(s))
	for i, it := range s {
		out[i] = it.Name
	}
	return out
}
