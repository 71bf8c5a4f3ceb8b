package watch

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("Streaming lists without initial events", fw.Area(area), func() {
	f := fw.New(area)

	It("sends no initial state and then the changes, from now or after N", fw.Req("WATCH-SEND-INITIAL-EVENTS-FALSE"), func() {
		fw.RequireSince("WATCH-SEND-INITIAL-EVENTS-FALSE")
		fw.RequireWatchList() // a server without streaming lists may refuse the parameter
		existing := f.CreateObj(f.Name("old"), "v1", nil)
		// A change after the list's revision: a watch from N must replay it.
		list := f.ListConfigMaps()
		n := list.Str("metadata.resourceVersion")
		changed := f.SetObj(existing.Name, "v2")

		from := func(rv string) *fw.Watch {
			opts := []fw.Option{fw.Query("sendInitialEvents", "false"), fw.Query("resourceVersionMatch", "NotOlderThan"),
				fw.Query("allowWatchBookmarks", "true")}
			if rv != "" {
				opts = append(opts, fw.Query("resourceVersion", rv))
			}
			return f.Watch(f.ConfigMapsPath(), opts...)
		}
		nextChange := func(w *fw.Watch) fw.Event {
			for {
				ev, err := w.Next(10 * time.Second)
				Expect(err).NotTo(HaveOccurred())
				if ev.Type != "BOOKMARK" {
					return ev
				}
			}
		}

		atN := from(n)
		defer atN.Close()
		ev := nextChange(atN)
		Expect(ev.Type).To(Equal("MODIFIED"), "the change after %s comes first: %s", n, ev.Object.Raw)
		Expect(ev.Object.Get("metadata.resourceVersion").String()).To(Equal(changed.RV))

		now := from("")
		defer now.Close()
		added := f.CreateObj(f.Name("new"), "v1", nil)
		ev = nextChange(now)
		Expect(ev.Type).To(Equal("ADDED"), "no event for the existing object, only the later create: %s", ev.Object.Raw)
		Expect(ev.Object.Get("metadata.name").String()).To(Equal(added.Name))
	})
})
