package deletion

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "deletion"

// Finalizers the specs hold objects with; nothing on any server acts on them,
// so an object carrying one stays until the spec removes it.
const (
	held   = "apiconform.test/held"
	second = "apiconform.test/second"
)

var _ = Describe("Deleting an object", fw.Area(area), func() {
	f := fw.New(area)

	deleteWith := func(name, body string) *fw.Response {
		return f.Delete(f.ConfigMapPath(name), body)
	}
	finalizersOf := func(r *fw.Response) []string {
		var out []string
		for _, v := range r.JSON("metadata.finalizers").Array() {
			out = append(out, v.String())
		}
		return out
	}

	It("answers a second DELETE with the object and keeps the first deletionTimestamp", fw.Req("DEL-SECOND-DELETE"), func() {
		name := f.Name("again")
		f.CreateHeld(name, map[string]string{"k": "v"}, held)
		first := f.DeleteConfigMap(name)
		Expect(first.Code).To(Equal(http.StatusOK), "%s", first)
		ts := first.Str("metadata.deletionTimestamp")
		Expect(ts).NotTo(BeEmpty(), "the first DELETE must set deletionTimestamp: %s", first)
		// deletionTimestamp has a resolution of one second: wait until the
		// server's clock (its Date header) has passed that second, so a
		// server that stamps the second DELETE anew is seen.
		waitPastSecond(f, name, ts)
		again := f.DeleteConfigMap(name)
		Expect(again.Code).To(Equal(http.StatusOK), "%s", again)
		Expect(again.Str("kind")).To(Equal("ConfigMap"), "the answer is the object still being deleted: %s", again)
		Expect(again.Str("metadata.deletionTimestamp")).To(Equal(ts))
		Expect(f.GetConfigMap(name).Str("metadata.deletionTimestamp")).To(Equal(ts))
	})

	It("lets any finalizer go first and removes the object after the last", fw.Req("DEL-FINALIZERS-ANY-ORDER"), func() {
		name := f.Name("order")
		f.CreateHeld(name, map[string]string{"k": "v"}, held, second)
		Expect(f.DeleteConfigMap(name).Code).To(Equal(http.StatusOK))
		// Remove the last-listed finalizer first.
		r := f.Patch(f.ConfigMapPath(name), fw.JSONPatch, `[{"op":"test","path":"/metadata/finalizers/1","value":"`+second+`"},{"op":"remove","path":"/metadata/finalizers/1"}]`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Code).To(Equal(http.StatusOK), "one finalizer is left, so the object stays")
		Expect(finalizersOf(got)).To(Equal([]string{held}))
		r = f.Patch(f.ConfigMapPath(name), fw.JSONPatch, `[{"op":"remove","path":"/metadata/finalizers/0"}]`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Eventually(func() int { return f.GetConfigMap(name).Code }).WithTimeout(10*time.Second).WithPolling(100*time.Millisecond).
			Should(Equal(http.StatusNotFound), "the object must be removed once its last finalizer is gone")
	})

	It("lets a client reorder the finalizers of an object being deleted", fw.Req("DEL-FINALIZERS-REORDER"), func() {
		name := f.Name("reorder")
		f.CreateHeld(name, map[string]string{"k": "v"}, held, second)
		Expect(f.DeleteConfigMap(name).Code).To(Equal(http.StatusOK))
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"metadata":{"finalizers":["`+second+`","`+held+`"]}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(finalizersOf(f.GetConfigMap(name))).To(Equal([]string{second, held}))
	})

	It("refuses a new finalizer on an object being deleted", fw.Req("DEL-NO-NEW-FINALIZERS"), func() {
		name := f.Name("nonew")
		f.CreateHeld(name, map[string]string{"k": "v"}, held)
		Expect(f.DeleteConfigMap(name).Code).To(Equal(http.StatusOK))
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"metadata":{"finalizers":["`+held+`","`+second+`"]}}`)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("metadata.finalizers"), "%s", r)
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueForbidden"), "%s", r)
		Expect(finalizersOf(f.GetConfigMap(name))).To(Equal([]string{held}))
	})

	DescribeTable("propagation policies that keep the object until a finalizer is removed",
		func(policy, finalizer string) {
			name := f.Name("prop")
			f.CreateHeld(name, map[string]string{"k": "v"}) // no finalizers of its own
			r := deleteWith(name, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"`+policy+`"}`)
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(r.Str("kind")).To(Equal("ConfigMap"), "the object is answered, marked for deletion: %s", r)
			Expect(r.Str("metadata.deletionTimestamp")).NotTo(BeEmpty(), "%s", r)
			Expect(finalizersOf(r)).To(ContainElement(finalizer), "%s", r)
		},
		Entry("Foreground adds foregroundDeletion", fw.Req("DEL-PROPAGATION-FOREGROUND"), "Foreground", "foregroundDeletion"),
		Entry("Orphan adds orphan", fw.Req("DEL-PROPAGATION-ORPHAN"), "Orphan", "orphan"),
	)

	It("removes an object without finalizers at once under Background propagation", fw.Req("DEL-PROPAGATION-BACKGROUND"), func() {
		name := f.Name("bg")
		f.CreateConfigMap(name, nil)
		r := deleteWith(name, `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background"}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})

	DescribeTable("preconditions that do not match",
		func(field, value string) {
			name := f.Name("pre")
			f.CreateConfigMap(name, nil)
			r := deleteWith(name, `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"`+field+`":"`+value+`"}}`)
			fw.ExpectStatus(r, http.StatusConflict, "Conflict")
			Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusOK), "a failed precondition deletes nothing")
		},
		Entry("uid", fw.Req("DEL-PRECONDITION-UID"), "uid", "00000000-0000-0000-0000-000000000000"),
		Entry("resourceVersion", fw.Req("DEL-PRECONDITION-RESOURCE-VERSION"), "resourceVersion", "1"),
	)
})

var _ = Describe("Deleting a collection", fw.Area(area), func() {
	f := fw.New(area)

	It("deletes exactly the objects the label selector matches", fw.Req("DEL-COLLECTION-SELECTOR"), func() {
		gone, kept := f.Name("gone"), f.Name("kept")
		for name, v := range map[string]string{gone: "yes", kept: "no"} {
			body := fw.ConfigMap(name, nil)
			fw.SetMeta(body, "labels", map[string]string{"apiconform.test/delete": v})
			Expect(f.Post(f.ConfigMapsPath(), body).Code).To(Equal(http.StatusCreated))
		}
		r := f.Delete(f.ConfigMapsPath(), nil, fw.Query("labelSelector", "apiconform.test/delete=yes"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("ConfigMapList"), "%s", r)
		Expect(r.JSON("items.#.metadata.name").Value()).To(ConsistOf(gone))
		Expect(f.GetConfigMap(gone).Code).To(Equal(http.StatusNotFound))
		Expect(f.GetConfigMap(kept).Code).To(Equal(http.StatusOK), "an object the selector excludes must stay")
	})
})

// waitPastSecond polls the object until the server's Date header is at
// least one second after stamp (RFC 3339), at most 1.1 s by the local clock
// (then the second has passed on any server that answered the first DELETE).
func waitPastSecond(f *fw.Framework, name, stamp string) {
	t0, err := time.Parse(time.RFC3339, stamp)
	Expect(err).NotTo(HaveOccurred(), "deletionTimestamp %q is not RFC 3339", stamp)
	deadline := time.Now().Add(1100 * time.Millisecond)
	for time.Now().Before(deadline) {
		r := f.GetConfigMap(name)
		if d, err := http.ParseTime(r.Header.Get("Date")); err == nil && !d.Before(t0.Add(time.Second)) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
