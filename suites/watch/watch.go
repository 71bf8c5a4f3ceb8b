package watch

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/tidwall/gjson"

	fw "github.com/apiconform/apiconform/suites/framework"
)

// goneWrites bounds the writes a spec makes to push old history out of a
// target's watch window when it offers no compaction hook.
const (
	goneWrites     = 1000
	goneCheckEvery = 100
)

var _ = Describe("watch streams", fw.Area(area), func() {
	f := fw.New(area)

	It("streams JSON documents with a type and an object", fw.Req("WATCH-EVENT-SHAPE"), func() {
		rv := currentRV(f)
		w := open(f, "resourceVersion", rv)
		x := f.CreateObj(f.Name("x"), "v1", nil)
		f.SetObj(x.Name, "v2")
		f.DeleteObj(x.Name)
		for i := 0; i < 3; i++ {
			e := next(w)
			var doc map[string]json.RawMessage
			Expect(json.Unmarshal(e.Raw, &doc)).To(Succeed(), "event %d is a JSON object: %s", i+1, e.Raw)
			Expect(doc).To(HaveKey("type"))
			Expect(doc).To(HaveKey("object"))
			Expect(e.Type).To(BeElementOf("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"))
			if e.Type == "BOOKMARK" {
				i--
				continue
			}
			Expect(e.Object.Get("kind").String()).To(Equal("ConfigMap"), "%s", e.Raw)
			Expect(e.Object.Get("apiVersion").String()).To(Equal("v1"), "%s", e.Raw)
			Expect(e.Object.Get("metadata.name").String()).To(Equal(x.Name), "%s", e.Raw)
		}
	})

	It("reports every change after the resourceVersion and nothing before it", fw.Req("WATCH-CHANGES-AFTER-RV"), func() {
		f.CreateObj(f.Name("before"), "v1", nil)
		rv := currentRV(f)
		x := f.CreateObj(f.Name("x"), "v1", nil)
		x2 := f.SetObj(x.Name, "v2")
		f.DeleteObj(x.Name)
		w := open(f, "resourceVersion", rv)
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		got := withoutBookmarks(untilAdded(w, s.Name))
		Expect(got).To(HaveLen(4), "create, update, delete of x, then the sentinel: %v", got)
		Expect(got[0]).To(Equal(ev{"ADDED", x}))
		Expect(got[1]).To(Equal(ev{"MODIFIED", x2}))
		Expect(got[2].Type).To(Equal("DELETED"))
		Expect(got[2].Obj.Name).To(Equal(x.Name))
		Expect(got[3]).To(Equal(ev{"ADDED", s}))
	})

	It("delivers events in the order the changes happened", fw.Req("WATCH-ORDER"), func() {
		rv := currentRV(f)
		names := []string{f.Name("p"), f.Name("q"), f.Name("r")}
		var writes []ev
		for _, n := range names {
			writes = append(writes, ev{"ADDED", f.CreateObj(n, "0", nil)})
		}
		for i := 1; i <= 9; i++ {
			writes = append(writes, ev{"MODIFIED", f.SetObj(names[i%3], strconv.Itoa(i))})
		}
		w := open(f, "resourceVersion", rv)
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		writes = append(writes, ev{"ADDED", s})
		Expect(withoutBookmarks(untilAdded(w, s.Name))).To(Equal(writes))
	})

	It("resumes from the last resourceVersion received without losing or repeating events", fw.Req("WATCH-RESUME"), func() {
		rv := currentRV(f)
		name := f.Name("x")
		writes := []ev{{"ADDED", f.CreateObj(name, "0", nil)}}
		for i := 1; i <= 5; i++ {
			writes = append(writes, ev{"MODIFIED", f.SetObj(name, strconv.Itoa(i))})
		}
		w := open(f, "resourceVersion", rv)
		var got []ev
		for len(got) < 3 {
			if e := reduce(next(w)); e.Type != "BOOKMARK" {
				got = append(got, e)
			}
		}
		Expect(got).To(Equal(writes[:3]))
		w.Close()
		w2 := open(f, "resourceVersion", got[2].Obj.RV)
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		rest := withoutBookmarks(untilAdded(w2, s.Name))
		Expect(rest).To(Equal(append(append([]ev{}, writes[3:]...), ev{"ADDED", s})))
	})

	It("with a label selector, reports an object entering as ADDED and leaving as DELETED", fw.Req("WATCH-SELECTOR-TRANSITIONS"), func() {
		x := f.CreateObj(f.Name("x"), "v1", map[string]string{"sel": "no"})
		other := f.CreateObj(f.Name("other"), "v1", map[string]string{"sel": "no"})
		rv := currentRV(f)
		w := open(f, "resourceVersion", rv, "labelSelector", "sel=yes")
		in := f.PatchObj(x.Name, map[string]any{"metadata": map[string]any{"labels": map[string]string{"sel": "yes"}}})
		mod := f.SetObj(x.Name, "v2")
		out := f.PatchObj(x.Name, map[string]any{"metadata": map[string]any{"labels": map[string]string{"sel": "no"}}})
		f.DeleteObj(other.Name) // never matched: no event
		s := f.CreateObj(f.Name("sentinel"), "v1", map[string]string{"sel": "yes"})
		got := withoutBookmarks(untilAdded(w, s.Name))
		Expect(got).To(HaveLen(4), "enter, change, leave, sentinel: %v", got)
		Expect(got[0]).To(Equal(ev{"ADDED", in}))
		Expect(got[1]).To(Equal(ev{"MODIFIED", mod}))
		Expect(got[2].Type).To(Equal("DELETED"))
		Expect(got[2].Obj.Name).To(Equal(x.Name))
		fw.Record("leaving", "DELETED object at resourceVersion %s (the change that left was %s)", got[2].Obj.RV, out.RV)
		Expect(got[3]).To(Equal(ev{"ADDED", s}))
	})
})

var _ = Describe("history and the future", fw.Area(area), func() {
	f := fw.New(area)

	It("may end a watch from a dropped resourceVersion with 410 Gone", fw.Req("WATCH-GONE-410"), fw.CompactsHistory, func() {
		var old string
		if fw.Caps().RefServer {
			x := f.CreateObj(f.Name("x"), "v1", nil)
			old = x.RV
			f.SetObj(x.Name, "v2")
			_, err := fw.Compact(f.Ctx())
			Expect(err).NotTo(HaveOccurred())
		} else {
			// The oldest version there is; a long-running server no longer keeps it.
			if _, ok := fw.RVInt(currentRV(f)); !ok {
				Skip("allowance: resourceVersions are opaque strings before v1.35 (RV-COMPARABLE checks newer targets); these are not integers, so no version older than the server keeps can be named")
			}
			old = "1"
		}
		gone, what := watchGone(f, old)
		if !gone && !fw.Caps().RefServer {
			// Push old history out of the watch window with a bounded number of writes.
			name := f.Name("churn")
			f.CreateObj(name, "0", nil)
			deadline := time.Now().Add(fw.CompactionWait())
			for i := 1; i <= goneWrites && !gone && time.Now().Before(deadline); i++ {
				f.SetObj(name, strconv.Itoa(i))
				if i%goneCheckEvery == 0 {
					gone, what = watchGone(f, old)
				}
			}
		}
		if !gone {
			if fw.Caps().RefServer {
				Fail(fmt.Sprintf("after compaction a watch from %s was still served: %s", old, what))
			}
			Skip(fmt.Sprintf("allowance: 410 is a MAY while the server keeps the history; a watch from resourceVersion %s was still served after up to %d writes (%s)", old, goneWrites, what))
		}
		fw.Record("410", "%s", what)
	})

	It("may hold a watch from a future resourceVersion until it times out, delivering nothing older", fw.Req("WATCH-UNRECOGNIZED-RV-WAIT"), func() {
		cur := currentRV(f)
		n, ok := fw.RVInt(cur)
		if !ok {
			Skip(fmt.Sprintf("allowance: resourceVersions are opaque strings before v1.35 (RV-COMPARABLE checks newer targets); %q is not an integer, so no future version can be named", cur))
		}
		w := openAny(f, "resourceVersion", strconv.FormatUint(n+1_000_000_000, 10), "timeoutSeconds", "3")
		if w.Code != http.StatusOK {
			Expect(gjson.GetBytes(w.Body, "kind").String()).To(Equal("Status"), "%s", w.Body)
			fw.Record("answer", "%d: %s", w.Code, gjson.GetBytes(w.Body, "message").String())
			return
		}
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		for i := 0; i < maxEvents; i++ {
			e, err := w.Next(eventWait)
			if err != nil {
				fw.Record("answer", "200, stream ended (%v) after %d events", err, i)
				return
			}
			r := reduce(e)
			Expect(r.Obj.Name).NotTo(Equal(s.Name), "a change older than the requested resourceVersion was delivered: %s", e.Raw)
			if e.Type == "ERROR" {
				fw.Record("answer", "200 with ERROR event: %s", e.Object.Raw)
				return
			}
		}
	})
})

// watchGone opens a short watch from rv and reports whether the target said
// 410 Gone (as an HTTP answer or as an ERROR event), checking its Status.
func watchGone(f *fw.Framework, rv string) (bool, string) {
	w := openAny(f, "resourceVersion", rv, "timeoutSeconds", "5")
	defer w.Close()
	if w.Code != http.StatusOK {
		Expect(w.Code).To(Equal(http.StatusGone), "watch from %s: %s", rv, w.Body)
		expectGoneStatus(gjson.ParseBytes(w.Body), "HTTP answer")
		return true, fmt.Sprintf("HTTP 410: %s", w.Body)
	}
	e, err := w.Next(eventWait)
	switch {
	case err != nil:
		return false, fmt.Sprintf("200, no event (%v)", err)
	case e.Type == "ERROR":
		expectGoneStatus(e.Object, "ERROR event")
		return true, fmt.Sprintf("200 then ERROR event: %s", e.Object.Raw)
	default:
		return false, fmt.Sprintf("200, first event %s", reduce(e))
	}
}

var _ = Describe("bookmarks", fw.Area(area), func() {
	f := fw.New(area)

	It("accepts allowWatchBookmarks whether or not it sends bookmarks", fw.Req("WATCH-BOOKMARK-OPTIONAL"), func() {
		rv := currentRV(f)
		w := open(f, "resourceVersion", rv, "allowWatchBookmarks", "true")
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		got := untilAdded(w, s.Name)
		Expect(withoutBookmarks(got)).To(Equal([]ev{{"ADDED", s}}))
		fw.Record("bookmarks", "%d before the sentinel", len(got)-1)
	})

	It("sends bookmarks of the watched kind carrying only metadata.resourceVersion", fw.Req("WATCH-BOOKMARK-METADATA-ONLY"), func() {
		f.CreateObj(f.Name("a"), "v1", nil)
		var w *fw.Watch
		if fw.Caps().WatchList {
			w = open(f, "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan", "allowWatchBookmarks", "true")
		} else {
			w = open(f, "resourceVersion", currentRV(f), "allowWatchBookmarks", "true", "timeoutSeconds", "50")
		}
		var bm fw.Event
		for i := 0; ; i++ {
			e, err := w.Next(streamLimit)
			if err != nil {
				if fw.Caps().WatchList {
					// A streaming list must end its initial events with a bookmark.
					Fail(fmt.Sprintf("no initial-events-end BOOKMARK arrived on a streaming list (%v)", err))
				}
				Skip(fmt.Sprintf("allowance: bookmarks are optional (\"clients must not assume bookmarks are returned at any specific interval\"); none arrived before the stream ended (%v)", err))
			}
			if e.Type == "BOOKMARK" {
				bm = e
				break
			}
			Expect(i).To(BeNumerically("<", maxEvents))
		}
		o := bm.Object
		Expect(o.Get("kind").String()).To(Equal("ConfigMap"), "the bookmark object is of the watched kind: %s", o.Raw)
		Expect(keys(o)).To(BeElementOf([]string{"apiVersion", "kind", "metadata"}, []string{"metadata"}), "%s", o.Raw)
		md := o.Get("metadata")
		Expect(md.Get("resourceVersion").String()).NotTo(BeEmpty(), "%s", o.Raw)
		for _, k := range keys(md) {
			Expect(k).To(BeElementOf("resourceVersion", "annotations"), "bookmark metadata: %s", md.Raw)
		}
		if ann := md.Get("annotations"); ann.Exists() {
			Expect(keys(ann)).To(Equal([]string{"k8s.io/initial-events-end"}), "only the initial-events-end annotation: %s", ann.Raw)
		}
	})

	It("sends no bookmarks unless asked", fw.Req("WATCH-BOOKMARK-NOT-WITHOUT-OPT-IN"), func() {
		a := f.CreateObj(f.Name("a"), "v1", nil)
		rv := currentRV(f)
		w := open(f, "resourceVersion", rv)
		x := f.SetObj(a.Name, "v2")
		s := f.CreateObj(f.Name("sentinel"), "v1", nil)
		Expect(untilAdded(w, s.Name)).To(Equal([]ev{{"MODIFIED", x}, {"ADDED", s}}))
		if fw.Caps().WatchList {
			w2 := open(f, "sendInitialEvents", "true", "resourceVersionMatch", "NotOlderThan")
			got := []ev{reduce(next(w2)), reduce(next(w2))}
			Expect(got).To(ConsistOf(ev{"ADDED", x}, ev{"ADDED", s}))
			s2 := f.CreateObj(f.Name("sentinel"), "v1", nil)
			Expect(untilAdded(w2, s2.Name)).To(Equal([]ev{{"ADDED", s2}}), "no initial-events-end bookmark without allowWatchBookmarks")
		}
	})
})

// keys returns an object's keys, sorted.
func keys(o gjson.Result) []string {
	var out []string
	o.ForEach(func(k, _ gjson.Result) bool {
		out = append(out, k.String())
		return true
	})
	sort.Strings(out)
	return out
}
