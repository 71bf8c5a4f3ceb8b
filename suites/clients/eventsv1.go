package clients

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"

	fw "github.com/apiconform/apiconform/suites/framework"
)

// client-go's events package (controller-runtime's GetEventRecorder) writes
// events through events.k8s.io/v1, while kubectl describe reads them through
// core/v1 by the involved object's fields: one resource under two APIs. An
// event recorded about configmap a must be listed through core/v1 by a's
// field selectors, in core's field names, and not by b's (which has an
// event of its own); a repeat within the recorder's window is sent as a
// strategic merge patch of the event's series, read back through both APIs.
var _ = Describe("client-go events recorder (events.k8s.io/v1)", fw.Area(area), func() {
	f := fw.New(area)

	It("records events that core/v1 readers select by the involved object", fw.Req("CLIENT-EVENTS-V1"), func() {
		cs := typedClient()
		ctx := f.Ctx()
		const controller = "apiconform.io/conformance"
		cms := map[string]*corev1.ConfigMap{}
		for _, which := range []string{"a", "b"} {
			cm, err := cs.CoreV1().ConfigMaps(f.Namespace).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.Name(which)}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			cms[which] = cm
		}
		b := events.NewBroadcaster(&events.EventSinkImpl{Interface: cs.EventsV1()})
		Expect(b.StartRecordingToSinkWithContext(runCtx(f))).To(Succeed())
		DeferCleanup(b.Shutdown)
		rec := b.NewRecorder(scheme.Scheme, controller)
		record := func(which string) {
			rec.Eventf(cms[which], nil, corev1.EventTypeWarning, "Checked"+strings.ToUpper(which), "Check", "apiconform saw %s", cms[which].Name)
		}
		record("a")
		record("b")

		about := func(which string) fields.Set {
			cm := cms[which]
			return fields.Set{"involvedObject.kind": "ConfigMap", "involvedObject.namespace": cm.Namespace,
				"involvedObject.name": cm.Name, "involvedObject.uid": string(cm.UID)}
		}
		coreEvents := func(which string) []corev1.Event {
			l, err := cs.CoreV1().Events(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: about(which).String()})
			Expect(err).NotTo(HaveOccurred())
			return l.Items
		}
		Eventually(func() []corev1.Event { return coreEvents("a") }).Within(convergeBudget).ProbeEvery(pollEvery).
			ShouldNot(BeEmpty(), "the event recorded about a, listed through core/v1 by a's fields")
		got := coreEvents("a")
		Expect(got).To(HaveLen(1), "%+v", got)
		ev := got[0]
		Expect(ev.Reason).To(Equal("CheckedA"), "%+v", ev)
		Expect(ev.Message).To(Equal("apiconform saw "+cms["a"].Name), "note, read as message: %+v", ev)
		Expect(ev.ReportingController).To(Equal(controller), "reportingController, read as reportingComponent: %+v", ev)
		Expect(ev.Action).To(Equal("Check"), "%+v", ev)
		Expect(ev.EventTime.IsZero()).To(BeFalse(), "%+v", ev)
		Eventually(func() []corev1.Event { return coreEvents("b") }).Within(convergeBudget).ProbeEvery(pollEvery).
			Should(HaveLen(1), "b's own event")
		Expect(coreEvents("b")[0].Reason).To(Equal("CheckedB"))

		record("a")
		seriesCount := func(s *corev1.EventSeries) int32 {
			if s == nil {
				return 0
			}
			return s.Count
		}
		Eventually(func() int32 {
			got := coreEvents("a")
			Expect(got).To(HaveLen(1), "a repeat is the same event: %+v", got)
			return seriesCount(got[0].Series)
		}).Within(convergeBudget).ProbeEvery(pollEvery).Should(BeNumerically(">=", 2), "the repeat, as the event's series")

		regarding := fields.Set{"regarding.kind": "ConfigMap", "regarding.name": cms["a"].Name}.String()
		l, err := cs.EventsV1().Events(f.Namespace).List(ctx, metav1.ListOptions{FieldSelector: regarding})
		Expect(err).NotTo(HaveOccurred())
		Expect(l.Items).To(HaveLen(1), "events.k8s.io/v1 by regarding: %+v", l.Items)
		Expect(l.Items[0].Note).To(Equal(ev.Message))
		Expect(l.Items[0].Series).To(HaveField("Count", BeNumerically(">=", 2)), "%+v", l.Items[0])
		fw.Record("event", "%s %s %q, series %d", ev.Type, ev.Reason, ev.Message, l.Items[0].Series.Count)
	})
})
