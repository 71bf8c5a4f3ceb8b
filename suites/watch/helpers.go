// Package watch checks watch streams: the documented watch table (one spec
// per cell, from spec/catalog's table data), event shape and order, resuming,
// 410 Gone, selectors, bookmarks and streaming lists (sendInitialEvents).
// Requirement IDs are in spec/catalog/data/watch.yaml.
package watch

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/tidwall/gjson"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "watch"

const (
	eventWait   = 15 * time.Second // longest wait for one expected event
	streamLimit = 60 * time.Second // upper bound of every watch stream a spec opens
	maxEvents   = 500              // upper bound of events read while looking for one
)

// ev is an event reduced to what specs compare.
type ev struct {
	Type string
	Obj  fw.Obj
}

func (e ev) String() string { return e.Type + " " + e.Obj.String() }

func reduce(e fw.Event) ev {
	return ev{Type: e.Type, Obj: fw.ObjOf(e.Object)}
}

// currentRV is the namespace's configmap collection resourceVersion now.
func currentRV(f *fw.Framework) string {
	return f.ListConfigMaps().Str("metadata.resourceVersion")
}

// open starts a watch of the namespace's configmaps and expects it to be accepted.
func open(f *fw.Framework, query ...string) *fw.Watch {
	w := openAny(f, query...)
	ExpectWithOffset(1, w.Code).To(Equal(http.StatusOK), "watch %v: %s", query, w.Body)
	ExpectWithOffset(1, w.Header.Get("Content-Type")).To(HavePrefix("application/json"))
	return w
}

// openAny starts a watch with query given as key, value pairs; any status.
func openAny(f *fw.Framework, query ...string) *fw.Watch {
	ExpectWithOffset(2, len(query)%2).To(BeZero())
	opts := []fw.Option{fw.Timeout(streamLimit)}
	for i := 0; i < len(query); i += 2 {
		opts = append(opts, fw.Query(query[i], query[i+1]))
	}
	return f.Watch(f.ConfigMapsPath(), opts...)
}

// next reads one event and fails the spec when none arrives.
func next(w *fw.Watch) fw.Event {
	e, err := w.Next(eventWait)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "waiting for a watch event")
	return e
}

// until reads events up to and including the first one for which stop holds.
func until(w *fw.Watch, stop func(ev) bool) []ev {
	var out []ev
	for len(out) < maxEvents {
		e, err := w.Next(eventWait)
		ExpectWithOffset(1, err).NotTo(HaveOccurred(), "waiting for a watch event; got so far: %v", out)
		r := reduce(e)
		out = append(out, r)
		if stop(r) {
			return out
		}
	}
	Fail(fmt.Sprintf("no expected event among %d events", maxEvents))
	return nil
}

// untilAdded reads events up to the ADDED event of name.
func untilAdded(w *fw.Watch, name string) []ev {
	return until(w, func(e ev) bool { return e.Type == "ADDED" && e.Obj.Name == name })
}

// withoutBookmarks drops BOOKMARK events.
func withoutBookmarks(in []ev) []ev {
	var out []ev
	for _, e := range in {
		if e.Type != "BOOKMARK" {
			out = append(out, e)
		}
	}
	return out
}

// expectGoneStatus checks a Status object says 410 Gone.
func expectGoneStatus(status gjson.Result, context string) {
	ExpectWithOffset(1, status.Get("kind").String()).To(Equal("Status"), "%s: %s", context, status.Raw)
	ExpectWithOffset(1, status.Get("code").Int()).To(BeEquivalentTo(http.StatusGone), "%s: %s", context, status.Raw)
	ExpectWithOffset(1, status.Get("reason").String()).To(BeElementOf("Expired", "Gone"), "%s: %s", context, status.Raw)
}
