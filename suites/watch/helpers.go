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

// obj is one object state: name and resourceVersion (and data.k).
type obj struct {
	Name string
	RV   string
	Data string
}

func (o obj) String() string { return fmt.Sprintf("%s@%s", o.Name, o.RV) }

// ev is an event reduced to what specs compare.
type ev struct {
	Type string
	Obj  obj
}

func (e ev) String() string { return e.Type + " " + e.Obj.String() }

func reduce(e fw.Event) ev {
	return ev{Type: e.Type, Obj: obj{
		Name: e.Object.Get("metadata.name").String(),
		RV:   e.Object.Get("metadata.resourceVersion").String(),
		Data: e.Object.Get("data.k").String(),
	}}
}

func createCM(f *fw.Framework, name, value string, labels map[string]string) obj {
	o := fw.ConfigMap(name, map[string]string{"k": value})
	if labels != nil {
		o["metadata"].(map[string]any)["labels"] = labels
	}
	r := f.Post(f.ConfigMapsPath(), o)
	ExpectWithOffset(1, r.Code).To(Equal(http.StatusCreated), "create %s: %s", name, r)
	return obj{Name: name, RV: r.Str("metadata.resourceVersion"), Data: value}
}

func patchCM(f *fw.Framework, name string, patch map[string]any) obj {
	r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, patch)
	ExpectWithOffset(1, r.Code).To(Equal(http.StatusOK), "patch %s: %s", name, r)
	return obj{Name: name, RV: r.Str("metadata.resourceVersion"), Data: r.Str("data.k")}
}

func setCM(f *fw.Framework, name, value string) obj {
	return patchCM(f, name, map[string]any{"data": map[string]string{"k": value}})
}

func deleteCM(f *fw.Framework, name string) {
	r := f.DeleteConfigMap(name)
	ExpectWithOffset(1, r.Code).To(BeElementOf(http.StatusOK, http.StatusAccepted), "delete %s: %s", name, r)
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

func record(name, format string, args ...any) {
	AddReportEntry(name, fmt.Sprintf(format, args...))
}
