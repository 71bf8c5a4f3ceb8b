// Package paging checks chunked lists: limit, continue tokens, the constant
// snapshot across pages, remainingItemCount and expired or foreign tokens.
// Requirement IDs are in spec/catalog/data/paging.yaml.
package paging

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "paging"

// total is the fixture's size; pageLimit does not divide it, so the last page is short.
const (
	total     = 7
	pageLimit = 3
)

// page is one list response of a paginated walk.
type page struct {
	resp  *fw.Response
	items []fw.Obj
	token string
	rv    string
}

func (p page) remaining() (int64, bool) {
	r := p.resp.JSON("metadata.remainingItemCount")
	return r.Int(), r.Exists()
}

func pageOf(r *fw.Response) page {
	return page{resp: r, items: fw.Items(r), token: r.Str("metadata.continue"), rv: r.Str("metadata.resourceVersion")}
}

// fixture creates total labelled configmaps and returns them in key order.
func fixture(f *fw.Framework) []fw.Obj {
	var out []fw.Obj
	for i := 0; i < total; i++ {
		out = append(out, f.CreateObj(f.Name("p"), "v1", map[string]string{"page": "yes"}))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// walk lists with limit, following continue tokens until an empty one; the
// number of pages is bounded so a server that never ends the walk fails.
func walk(f *fw.Framework, limit int, opts ...fw.Option) []page {
	var pages []page
	token := ""
	for {
		Expect(len(pages)).To(BeNumerically("<=", total+1), "a %d-item list in pages of %d ends", total, limit)
		q := append([]fw.Option{fw.Query("limit", fmt.Sprint(limit))}, opts...)
		if token != "" {
			q = append(q, fw.Query("continue", token))
		}
		r := f.Get(f.ConfigMapsPath(), q...)
		Expect(r.Code).To(Equal(http.StatusOK), "page %d: %s", len(pages)+1, r)
		p := pageOf(r)
		pages = append(pages, p)
		if p.token == "" {
			return pages
		}
		token = p.token
	}
}

func allItems(pages []page) []fw.Obj {
	var out []fw.Obj
	for _, p := range pages {
		out = append(out, p.items...)
	}
	return out
}

var _ = Describe("chunked lists", fw.Area(area), func() {
	f := fw.New(area)

	It("returns at most limit items per page", fw.Req("PAGE-LIMIT"), func() {
		fixture(f)
		for _, limit := range []int{1, pageLimit} {
			for i, p := range walk(f, limit) {
				Expect(len(p.items)).To(BeNumerically("<=", limit), "page %d with limit=%d", i+1, limit)
			}
		}
	})

	It("carries a continue token while items remain", fw.Req("PAGE-CONTINUE-WHEN-MORE"), func() {
		fixture(f)
		first := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit))))
		Expect(first.items).NotTo(BeEmpty())
		Expect(len(first.items)).To(BeNumerically("<", total))
		Expect(first.token).NotTo(BeEmpty(), "%d of %d items returned, so a continue token follows", len(first.items), total)
	})

	It("returns every item exactly once, in key order, across the pages", fw.Req("PAGE-CONTINUE-NEXT"), func() {
		want := fixture(f)
		pages := walk(f, pageLimit)
		Expect(allItems(pages)).To(Equal(want))
		Expect(len(pages)).To(BeNumerically(">", 1), "the list was actually chunked")
	})

	It("ends with an empty continue on the last page", fw.Req("PAGE-LAST-EMPTY-CONTINUE"), func() {
		want := fixture(f)
		pages := walk(f, pageLimit)
		last := pages[len(pages)-1]
		Expect(last.token).To(BeEmpty())
		Expect(allItems(pages)).To(HaveLen(len(want)), "the walk ended at the last page, not earlier")
		whole := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(total+10))))
		Expect(whole.items).To(HaveLen(total))
		Expect(whole.token).To(BeEmpty(), "a page holding the whole rest carries no continue token")
	})

	It("keeps the collection resourceVersion constant across pages", fw.Req("PAGE-CONSTANT-RV"), func() {
		fixture(f)
		first := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit))))
		Expect(first.token).NotTo(BeEmpty())
		// A write between pages moves the server's current resourceVersion on;
		// the collection's must stay that of the first page.
		token := first.token
		for n := 2; token != ""; n++ {
			Expect(n).To(BeNumerically("<=", total+1), "the walk ends")
			r := f.CreateConfigMap("zz-"+f.Name("between"), nil)
			Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
			p := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit)), fw.Query("continue", token)))
			Expect(p.rv).To(Equal(first.rv), "page %d", n)
			token = p.token
		}
	})

	It("shows the first page's snapshot on later pages", fw.Req("PAGE-CONSISTENT-SNAPSHOT"), func() {
		want := fixture(f)
		first := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit))))
		Expect(first.token).NotTo(BeEmpty())
		Expect(first.items).To(Equal(want[:len(first.items)]))
		rest := want[len(first.items):]
		// Change the rest of the collection after the first page.
		f.SetObj(rest[0].Name, "v2")
		f.DeleteObj(rest[len(rest)-1].Name)
		f.CreateConfigMap("zz-"+f.Name("late"), nil)

		var got []fw.Obj
		token := first.token
		for n := 0; token != ""; n++ {
			Expect(n).To(BeNumerically("<=", total), "the walk ends")
			p := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit)), fw.Query("continue", token)))
			Expect(p.rv).To(Equal(first.rv))
			got = append(got, p.items...)
			token = p.token
		}
		Expect(got).To(Equal(rest), "later pages show the items as they were at %s", first.rv)
	})

	It("counts the items after each page in remainingItemCount when it is present", fw.Req("PAGE-REMAINING-COUNT"), func() {
		fixture(f)
		seen, present := 0, 0
		for i, p := range walk(f, pageLimit) {
			seen += len(p.items)
			if n, ok := p.remaining(); ok {
				present++
				Expect(n).To(BeEquivalentTo(total-seen), "page %d: %d items after it", i+1, total-seen)
			}
		}
		fw.Record("remainingItemCount", "present on %d pages", present)
	})

	It("omits remainingItemCount when the list has a selector", fw.Req("PAGE-REMAINING-NONE-SELECTOR"), func() {
		want := fixture(f)
		for _, sel := range []fw.Option{
			fw.Query("labelSelector", "page=yes"),
			fw.Query("fieldSelector", "metadata.namespace="+f.Namespace),
		} {
			pages := walk(f, pageLimit, sel)
			Expect(allItems(pages)).To(Equal(want), "the selector matches every item")
			for i, p := range pages {
				_, ok := p.remaining()
				Expect(ok).To(BeFalse(), "page %d of a list with a selector: %s", i+1, p.resp)
			}
		}
	})

	It("omits remainingItemCount on a complete list and on the last page", fw.Req("PAGE-REMAINING-NONE-LAST"), func() {
		fixture(f)
		for what, r := range map[string]*fw.Response{
			"list without limit":       f.ListConfigMaps(),
			"list with a larger limit": f.ListConfigMaps(fw.Query("limit", fmt.Sprint(total+10))),
		} {
			Expect(r.Exists("metadata.remainingItemCount")).To(BeFalse(), "%s: %s", what, r)
		}
		pages := walk(f, pageLimit)
		_, ok := pages[len(pages)-1].remaining()
		Expect(ok).To(BeFalse(), "last page: %s", pages[len(pages)-1].resp)
	})

	It("rejects a continue token it did not issue with a client error", fw.Req("PAGE-CONTINUE-MALFORMED"), func() {
		fixture(f)
		enc := base64.RawURLEncoding.EncodeToString
		for _, token := range []string{
			"garbage",
			enc([]byte("{}")),
			enc([]byte(`{"v":"meta.k8s.io/v1","rv":1,"start":"/../x"}`)),
		} {
			r := f.Get(f.ConfigMapsPath(), fw.Query("limit", fmt.Sprint(pageLimit)), fw.Query("continue", token))
			Expect(r.Code).To(BeNumerically(">=", 400), "token %q: %s", token, r)
			Expect(r.Code).To(BeNumerically("<", 500), "token %q: %s", token, r)
			Expect(r.Str("kind")).To(Equal("Status"), "%s", r)
			fw.Record("token "+token, "%d %s: %s", r.Code, r.Str("reason"), r.Str("message"))
		}
	})
})

// The expired-token spec waits for the target to drop history; on a target
// without a compaction hook it runs after the others (expiry.go).
var _ = Describe("chunked lists", fw.Area(area), func() {
	f := fw.New(area)

	f.ItAfterExpiry("answers 410 Gone to an expired continue token, and may offer a token for the rest",
		fw.Req("PAGE-CONTINUE-EXPIRED-410", "PAGE-CONTINUE-INCONSISTENT-TOKEN"), func(f *fw.Framework) fw.History {
			want := fixture(f)
			first := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit))))
			Expect(first.token).NotTo(BeEmpty())
			rest := want[len(first.items):]
			// Make the snapshot historical: change the rest after the first page.
			rest[0] = f.SetObj(rest[0].Name, "v2")
			late := f.CreateConfigMap("zz-"+f.Name("late"), nil)
			latest := append(append([]fw.Obj{}, rest...), fw.ObjOf(late.JSON("@this")))

			cont := func() *fw.Response {
				return f.Get(f.ConfigMapsPath(), fw.Query("limit", fmt.Sprint(pageLimit)), fw.Query("continue", first.token))
			}
			return fw.History{What: "the continue token", Probe: cont, Check: func() { expiredToken(f, cont, latest) }}
		})
})

// expiredToken checks the answer to a continue token whose snapshot has
// gone: 410, and when a fresh token is offered it lists latest, the items
// after the first page as they are now.
func expiredToken(f *fw.Framework, cont func() *fw.Response, latest []fw.Obj) {
	r := cont()
	fw.ExpectGone(r)
	fw.Record("expired token", "410 %s: %s", r.Str("reason"), r.Str("message"))

	fresh := r.Str("metadata.continue")
	if fresh == "" {
		fw.Record("inconsistent token", "none offered; the client starts over")
		return
	}
	var got []fw.Obj
	token := fresh
	for n := 0; token != ""; n++ {
		Expect(n).To(BeNumerically("<=", total+1), "the walk ends")
		p := pageOf(f.ListConfigMaps(fw.Query("limit", fmt.Sprint(pageLimit)), fw.Query("continue", token)))
		got = append(got, p.items...)
		token = p.token
	}
	Expect(got).To(Equal(latest), "the offered token lists the items after the first page as they are now")
	fw.Record("inconsistent token", "offered; it listed %d items from the latest state", len(got))
}
