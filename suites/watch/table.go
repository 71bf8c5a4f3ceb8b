package watch

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/apiconform/apiconform/spec/catalog"
	fw "github.com/apiconform/apiconform/suites/framework"
)

// One spec per cell of the documented watch table, from the catalogue's data.
var _ = Describe("resourceVersion table", fw.Area(area), func() {
	f := fw.New(area)

	fw.DescribeCatalogTable("watch", catalog.TableWatch, func(cell catalog.Cell) { checkWatchCell(f, cell) })
})

// checkWatchCell: a and b exist at rv; a changes after rv; the watch opens
// with the cell's resourceVersion; c is created once the start is read.
func checkWatchCell(f *fw.Framework, cell catalog.Cell) {
	a := f.CreateObj(f.Name("a"), "v1", nil)
	b := f.CreateObj(f.Name("b"), "v1", nil)
	rv := currentRV(f)
	a2 := f.SetObj(a.Name, "v2")

	var w *fw.Watch
	switch cell.Query.ResourceVersion {
	case catalog.RVUnset:
		w = open(f)
	case catalog.RVZero:
		w = open(f, "resourceVersion", "0")
	case catalog.RVValue:
		w = open(f, "resourceVersion", rv)
	}

	switch cell.Expect.Semantics {
	case catalog.GetStateAndStartAtMostRecent:
		start := []ev{reduce(next(w)), reduce(next(w))}
		Expect(start).To(ConsistOf(ev{"ADDED", a2}, ev{"ADDED", b}),
			"the watch starts with synthetic ADDED events of the current state")
	case catalog.GetStateAndStartAtAny:
		start := []ev{reduce(next(w)), reduce(next(w))}
		Expect(start).To(Or(
			ConsistOf(ev{"ADDED", a2}, ev{"ADDED", b}),
			ConsistOf(ev{"ADDED", a}, ev{"ADDED", b}),
		), "the watch starts with synthetic ADDED events of some state")
		if start[0] == (ev{"ADDED", a}) || start[1] == (ev{"ADDED", a}) {
			// Started before a changed: the change must follow.
			Expect(reduce(next(w))).To(Equal(ev{"MODIFIED", a2}), "a stale start is followed by the later changes")
			fw.Record("start", "stale: started before %s", a2)
		}
	case catalog.StartAtExact:
		Expect(reduce(next(w))).To(Equal(ev{"MODIFIED", a2}),
			"no synthetic ADDED events: the first event is the first change after %s", rv)
	default:
		Fail(fmt.Sprintf("watch cell %s: semantics %q has no check", cell.Requirement, cell.Expect.Semantics))
	}
	c := f.CreateObj(f.Name("c"), "v1", nil)
	Expect(withoutBookmarks(untilAdded(w, c.Name))).To(Equal([]ev{{"ADDED", c}}), "the next change is the one made after the start")
}
