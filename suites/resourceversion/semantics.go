package resourceversion

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/tidwall/gjson"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var decimalRV = regexp.MustCompile(`^[1-9][0-9]*$`)

var _ = Describe("resourceVersion fields", fw.Area(area), func() {
	f := fw.New(area)

	It("carries metadata.resourceVersion as a non-empty string on every object", fw.Req("RV-OBJECT-STRING"), func() {
		name := f.Name("obj")
		created := f.CreateConfigMap(name, map[string]string{"k": "v"})
		got := f.GetConfigMap(name)
		Expect(got.Code).To(Equal(http.StatusOK), "%s", got)
		listed := f.ListConfigMaps()
		for what, rv := range map[string]gjson.Result{
			"create answer": created.JSON("metadata.resourceVersion"),
			"get answer":    got.JSON("metadata.resourceVersion"),
			"list item":     listed.JSON("items.0.metadata.resourceVersion"),
		} {
			Expect(rv.Type).To(Equal(gjson.String), "%s: metadata.resourceVersion is a JSON string, got %s", what, rv.Raw)
			Expect(rv.String()).NotTo(BeEmpty(), what)
		}
	})

	It("carries the collection's metadata.resourceVersion on a list", fw.Req("RV-LIST-METADATA"), func() {
		a := f.CreateObj(f.Name("a"), "v1", nil)
		r := f.ListConfigMaps()
		rv := r.JSON("metadata.resourceVersion")
		Expect(rv.Type).To(Equal(gjson.String), "list metadata.resourceVersion is a JSON string: %s", r)
		Expect(rv.String()).NotTo(BeEmpty())
		// The collection was constructed after the create, so reading it back
		// exactly at that version shows the object.
		again := list(f, fw.Query("resourceVersion", rv.String()), fw.Query("resourceVersionMatch", "Exact"))
		Expect(again.Code).To(Equal(http.StatusOK), "%s", again)
		Expect(fw.Items(again)).To(ConsistOf(a), "the collection at its own resourceVersion")
	})

	It("changes an object's resourceVersion on every modification", fw.Req("RV-CHANGES-ON-WRITE"), func() {
		name := f.Name("obj")
		seen := map[string]string{}
		note := func(step, rv string) {
			Expect(rv).NotTo(BeEmpty(), step)
			Expect(seen).NotTo(HaveKey(rv), "%s reused the resourceVersion of %s", step, seen[rv])
			seen[rv] = step
		}
		note("create", f.CreateObj(name, "1", nil).RV)
		note("merge patch", f.SetObj(name, "2").RV)
		cur := f.GetConfigMap(name)
		obj := fw.ConfigMap(name, map[string]string{"k": "3"})
		fw.SetMeta(obj, "resourceVersion", cur.Str("metadata.resourceVersion"))
		put := f.Put(f.ConfigMapPath(name), obj)
		Expect(put.Code).To(Equal(http.StatusOK), "%s", put)
		note("update", put.Str("metadata.resourceVersion"))
		lbl := f.Patch(f.ConfigMapPath(name), fw.MergePatch, map[string]any{"metadata": map[string]any{"labels": map[string]string{"x": "y"}}})
		Expect(lbl.Code).To(Equal(http.StatusOK), "%s", lbl)
		note("label patch", lbl.Str("metadata.resourceVersion"))
	})

	It("uses decimal integers that increase with every write to the resource type", fw.Req("RV-COMPARABLE"), func() {
		fw.RequireSince("RV-COMPARABLE")
		var last uint64
		check := func(step, rv string) {
			Expect(rv).To(MatchRegexp(decimalRV.String()), "%s: resourceVersion %q is a decimal integer", step, rv)
			n, err := strconv.ParseUint(rv, 10, 64)
			Expect(err).NotTo(HaveOccurred(), "%s: %q fits in 64 bits", step, rv)
			Expect(n).To(BeNumerically(">", last), "%s: resourceVersion %d follows %d", step, n, last)
			last = n
		}
		a, b := f.Name("a"), f.Name("b")
		check("create a", f.CreateObj(a, "1", nil).RV)
		check("create b", f.CreateObj(b, "1", nil).RV)
		check("patch a", f.SetObj(a, "2").RV)
		check("patch b", f.SetObj(b, "2").RV)
		r := f.ListConfigMaps()
		listRV := r.Str("metadata.resourceVersion")
		n, ok := fw.RVInt(listRV)
		Expect(ok).To(BeTrue(), "list resourceVersion %q is a decimal integer", listRV)
		Expect(n).To(BeNumerically(">=", last), "the collection is at least as new as the items in it")
		// Another namespace, same resource type: still ordered after.
		other := f.Post("/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": f.Namespace + "-b"}})
		Expect(other.Code).To(Equal(http.StatusCreated), "%s", other)
		DeferCleanup(func() { f.Delete("/api/v1/namespaces/"+f.Namespace+"-b", nil) })
		c := f.Post("/api/v1/namespaces/"+f.Namespace+"-b/configmaps", fw.ConfigMap("c", nil))
		Expect(c.Code).To(Equal(http.StatusCreated), "%s", c)
		check("create in another namespace", c.Str("metadata.resourceVersion"))
	})
})

var _ = Describe("get and list semantics", fw.Area(area), func() {
	f := fw.New(area)

	It("shows every preceding write to a Most Recent get or list", fw.Req("RV-SEM-MOST-RECENT"), func() {
		name := f.Name("obj")
		f.CreateObj(name, "0", nil)
		for i := 1; i <= 5; i++ {
			w := f.SetObj(name, strconv.Itoa(i))
			g := f.GetConfigMap(name)
			Expect(g.Str("metadata.resourceVersion")).To(Equal(w.RV), "get right after write %d", i)
			Expect(fw.Items(f.ListConfigMaps())).To(ConsistOf(w), "list right after write %d", i)
		}
	})

	It("serves an Any read with some state the objects had", fw.Req("RV-SEM-ANY"), func() {
		name := f.Name("obj")
		v1 := f.CreateObj(name, "1", nil)
		v2 := f.SetObj(name, "2")
		r := list(f, fw.Query("resourceVersion", "0"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := fw.Items(r)
		for _, it := range got {
			Expect(it).To(BeElementOf(v1, v2))
		}
		stale := len(got) == 0 || got[0] != v2
		fw.Record("Any", "list resourceVersion=0 returned %v at %s; latest is %s (stale=%v)", got, r.Str("metadata.resourceVersion"), v2, stale)
	})

	It("answers Not older than with a collection at least as new as requested", fw.Req("RV-SEM-NOT-OLDER-THAN"), func() {
		a := f.CreateObj(f.Name("a"), "1", nil)
		r := list(f, fw.Query("resourceVersion", a.RV), fw.Query("resourceVersionMatch", "NotOlderThan"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(fw.Items(r)).To(ConsistOf(a), "the write at %s is in any state not older than it", a.RV)
		if have, ok := fw.RVInt(r.Str("metadata.resourceVersion")); ok {
			if floor, ok := fw.RVInt(a.RV); ok {
				Expect(have).To(BeNumerically(">=", floor))
			}
		}
	})

	It("answers Exact with the collection exactly as it was at the requested version", fw.Req("RV-SEM-EXACT"), func() {
		a := f.CreateObj(f.Name("a"), "1", nil)
		at := f.ListConfigMaps().Str("metadata.resourceVersion")
		f.SetObj(a.Name, "2")
		f.CreateObj(f.Name("b"), "1", nil)
		r := list(f, fw.Query("resourceVersion", at), fw.Query("resourceVersionMatch", "Exact"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		fw.ExpectField(r, "metadata.resourceVersion", at)
		Expect(fw.Items(r)).To(Equal([]fw.Obj{a}), "the items as they were at %s", at)
	})

	It("serves continued pages at the resourceVersion of the first page", fw.Req("RV-SEM-CONTINUE-EXACT"), func() {
		a := f.CreateObj(f.Name("a"), "1", nil)
		b := f.CreateObj(f.Name("b"), "1", nil)
		c := f.CreateObj(f.Name("c"), "1", nil)
		first := list(f, fw.Query("limit", "1"))
		Expect(first.Code).To(Equal(http.StatusOK), "%s", first)
		Expect(fw.Items(first)).To(Equal([]fw.Obj{a}))
		f.SetObj(b.Name, "2")
		f.DeleteObj(c.Name)
		var got []fw.Obj
		token := first.Str("metadata.continue")
		for pages := 0; token != ""; pages++ {
			Expect(pages).To(BeNumerically("<", 5), "a 3-item list in pages of 1 ends")
			r := list(f, fw.Query("limit", "1"), fw.Query("continue", token))
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(r.Str("metadata.resourceVersion")).To(Equal(first.Str("metadata.resourceVersion")))
			got = append(got, fw.Items(r)...)
			token = r.Str("metadata.continue")
		}
		Expect(got).To(Equal([]fw.Obj{b, c}), "the later pages show the snapshot of the first page")
	})

	It("rejects resourceVersionMatch without resourceVersion", fw.Req("RV-MATCH-REQUIRES-RV"), func() {
		for _, match := range []string{"NotOlderThan", "Exact"} {
			r := list(f, fw.Query("resourceVersionMatch", match))
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			Expect(r.Str("details.causes.0.field")).To(Equal("resourceVersionMatch"), "%s", r)
			Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueForbidden"), "%s", r)
		}
	})
})

var _ = Describe("history that is gone", fw.Area(area), func() {
	f := fw.New(area)

	f.ItAfterExpiry("answers 410 Gone to an Exact read of a version no longer kept, and may serve other reads of it",
		fw.Req("RV-SEM-EXACT-GONE", "RV-GONE-410"), func(f *fw.Framework) fw.History {
			name := f.Name("obj")
			f.CreateObj(name, "1", nil)
			old := f.ListConfigMaps().Str("metadata.resourceVersion")
			latest := f.SetObj(name, "2")

			exact := func() *fw.Response {
				return list(f, fw.Query("resourceVersion", old), fw.Query("resourceVersionMatch", "Exact"))
			}
			return fw.History{What: "resourceVersion " + old, Probe: exact, Check: func() { readsOfDropped(f, exact, name, old, latest) }}
		})
})

// readsOfDropped checks the reads of resourceVersion old once the target
// has dropped it: Exact answers 410; the other reads of object name answer
// 410 or serve latest, its newest state.
func readsOfDropped(f *fw.Framework, exact func() *fw.Response, name, old string, latest fw.Obj) {
	r := exact()
	fw.ExpectGone(r)
	fw.Record("Exact at a dropped version", "%d %s: %s", r.Code, r.Str("reason"), r.Str("message"))

	// Other reads of the dropped version: 410 or served, both documented.
	for _, q := range []struct {
		what string
		opts []fw.Option
	}{
		{"get", []fw.Option{fw.Query("resourceVersion", old)}},
		{"list limit=1", []fw.Option{fw.Query("resourceVersion", old), fw.Query("limit", "1")}},
		{"list NotOlderThan", []fw.Option{fw.Query("resourceVersion", old), fw.Query("resourceVersionMatch", "NotOlderThan")}},
	} {
		var r *fw.Response
		if q.what == "get" {
			r = f.GetConfigMap(name, q.opts...)
		} else {
			r = list(f, q.opts...)
		}
		switch r.Code {
		case http.StatusGone:
			Expect(r.Str("kind")).To(Equal("Status"), "%s", r)
			fw.Record(q.what, "410 %s: %s", r.Str("reason"), r.Str("message"))
		case http.StatusOK:
			rv := r.Str("metadata.resourceVersion")
			if q.what != "get" {
				rv = r.Str("items.0.metadata.resourceVersion")
			}
			Expect(rv).To(Equal(latest.RV), "%s: a read not older than %s that is served shows the latest state", q.what, old)
			fw.Record(q.what, "served (200) at %s", r.Str("metadata.resourceVersion"))
		default:
			Fail(fmt.Sprintf("%s at a dropped resourceVersion: want 410 or 200, got %s", q.what, r))
		}
	}
}

// futureRV is a resourceVersion far ahead of the target's current one.
func futureRV(f *fw.Framework) string {
	cur := f.ListConfigMaps().Str("metadata.resourceVersion")
	n, ok := fw.RVInt(cur)
	if !ok {
		Skip(fmt.Sprintf("allowance: resourceVersions are opaque strings before v1.35 (RV-COMPARABLE checks newer targets); %q is not an integer, so no future version can be named", cur))
	}
	return strconv.FormatUint(n+1_000_000_000, 10)
}

var _ = Describe("resourceVersions from the future", fw.Area(area), func() {
	f := fw.New(area)
	BeforeEach(func() { shortRevisionWait(f) })

	It("waits briefly and answers 504, or answers with Retry-After", fw.Req("RV-UNAVAILABLE-504"), func() {
		name := f.Name("obj")
		f.CreateObj(name, "1", nil)
		future := futureRV(f)
		// Both reads wait out the target's delay, so they wait side by side.
		var get, lst *fw.Response
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			get = f.GetConfigMap(name, fw.Query("resourceVersion", future))
		}()
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			lst = list(f, fw.Query("resourceVersion", future), fw.Query("resourceVersionMatch", "NotOlderThan"))
		}()
		wg.Wait()
		Expect(get).NotTo(BeNil(), "get: no answer")
		Expect(lst).NotTo(BeNil(), "list: no answer")
		for what, r := range map[string]*fw.Response{"get": get, "list": lst} {
			Expect(r.Code).NotTo(BeNumerically("<", 300), "%s: a version that does not exist yet cannot be served: %s", what, r)
			if r.Code == http.StatusGatewayTimeout {
				fw.ExpectStatus(r, http.StatusGatewayTimeout, r.Str("reason"))
				fw.Record(what, "504 %s: %s (Retry-After %q)", r.Str("reason"), r.Str("message"), r.Header.Get("Retry-After"))
				continue
			}
			Expect(r.Header.Get("Retry-After")).NotTo(BeEmpty(), "%s: not a 504, so the documented other answer carries Retry-After: %s", what, r)
			fw.Record(what, "%d with Retry-After %q: %s", r.Code, r.Header.Get("Retry-After"), r.Str("message"))
		}
	})

	It("gives a usable Retry-After when it asks the client to retry", fw.Req("RV-UNAVAILABLE-RETRY-AFTER"), func() {
		name := f.Name("obj")
		f.CreateObj(name, "1", nil)
		r := f.GetConfigMap(name, fw.Query("resourceVersion", futureRV(f)))
		Expect(r.Code).NotTo(BeNumerically("<", 300), "%s", r)
		ra := r.Header.Get("Retry-After")
		if ra == "" {
			Expect(r.Code).To(Equal(http.StatusGatewayTimeout), "without Retry-After the documented answer is 504: %s", r)
			fw.Record("Retry-After", "none; answered %d", r.Code)
			return
		}
		Expect(validRetryAfter(ra)).To(Succeed(), "Retry-After %q", ra)
		fw.Record("Retry-After", "%q on %d", ra, r.Code)
	})

	It(`identifies the answer with a "Too large resource version" message`, fw.Req("RV-TOO-LARGE-MESSAGE"), func() {
		name := f.Name("obj")
		f.CreateObj(name, "1", nil)
		r := f.GetConfigMap(name, fw.Query("resourceVersion", futureRV(f)))
		Expect(r.Code).NotTo(BeNumerically("<", 300), "%s", r)
		Expect(r.Str("message")).To(ContainSubstring("Too large resource version"), "%s", r)
		fw.Record("causes", "%s", r.JSON("details.causes").Raw)
	})
})

// shortRevisionWait asks the reference server to answer a future
// resourceVersion after 200ms instead of kube-apiserver's 3s (the answer
// itself is unchanged); other targets keep their own delay. The spec puts
// the server's default back when it ends.
func shortRevisionWait(f *fw.Framework) {
	if !fw.Caps().RefServer {
		return
	}
	set := func(d string) *fw.Response {
		return f.Post("/apiconform/admin/revision-wait", map[string]string{"revisionWait": d})
	}
	if r := set("200ms"); r.Code != http.StatusOK {
		return // an older reference server without the hook: wait the full delay
	}
	DeferCleanup(func() { set("3s") })
}

// validRetryAfter accepts delta-seconds or an HTTP-date (RFC 9110 §10.2.3).
func validRetryAfter(v string) error {
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return errors.New("negative delay")
		}
		return nil
	}
	if _, err := http.ParseTime(v); err != nil {
		return fmt.Errorf("neither delta-seconds nor an HTTP-date")
	}
	return nil
}
