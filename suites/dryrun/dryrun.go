package dryrun

import (
	"fmt"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "dryrun"

var all = fw.Query("dryRun", "All")

var _ = Describe("Dry-run", fw.Area(area), func() {
	f := fw.New(area)

	It("answers a dry-run create with the object and persists nothing", fw.Req("DRYRUN-CREATE"), func() {
		name := f.Name("dr")
		r := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, map[string]string{"a": "1"}), all)
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Str("kind")).To(Equal("ConfigMap"))
		Expect(r.Str("metadata.name")).To(Equal(name))
		Expect(r.Str("data.a")).To(Equal("1"))
		fw.ExpectCode(f.GetConfigMap(name), http.StatusNotFound)
		Expect(f.ListConfigMaps().JSON("items.#").Int()).To(BeZero())
	})

	It("returns generated fields and a name from generateName", fw.Req("DRYRUN-GENERATED-FIELDS"), func() {
		prefix := f.Name("gen") + "-"
		body := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": prefix}}
		r := f.Post(f.ConfigMapsPath(), body, all)
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		name := r.Str("metadata.name")
		Expect(name).To(HavePrefix(prefix))
		Expect(len(name)).To(BeNumerically(">", len(prefix)))
		Expect(r.Str("metadata.uid")).NotTo(BeEmpty())
		_, err := time.Parse(time.RFC3339, r.Str("metadata.creationTimestamp"))
		Expect(err).NotTo(HaveOccurred(), "creationTimestamp %q", r.Str("metadata.creationTimestamp"))
		fw.ExpectCode(f.GetConfigMap(name), http.StatusNotFound)
	})

	It("answers a dry-run update with the new object and keeps the stored one", fw.Req("DRYRUN-UPDATE"), func() {
		name := f.Name("dr")
		created := f.CreateConfigMap(name, map[string]string{"a": "1"})
		rv := created.Str("metadata.resourceVersion")
		obj := fw.ConfigMap(name, map[string]string{"a": "2"})
		fw.SetMeta(obj, "resourceVersion", rv)
		r := f.Put(f.ConfigMapPath(name), obj, all)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("data.a")).To(Equal("2"))
		got := f.GetConfigMap(name)
		fw.ExpectField(got, "data.a", "1")
		Expect(got.Str("metadata.resourceVersion")).To(Equal(rv))
	})

	It("merges a dry-run patch without persisting it", fw.Req("DRYRUN-PATCH"), func() {
		name := f.Name("dr")
		created := f.CreateConfigMap(name, map[string]string{"a": "1", "b": "2"})
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"a":"10"}}`, all)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("data.a")).To(Equal("10"))
		Expect(r.Str("data.b")).To(Equal("2"), "the merge keeps untouched keys")
		got := f.GetConfigMap(name)
		fw.ExpectField(got, "data.a", "1")
		Expect(got.Str("metadata.resourceVersion")).To(Equal(created.Str("metadata.resourceVersion")))
	})

	It("applies server-side in dry run without creating or changing the object", fw.Req("DRYRUN-APPLY"), func() {
		name := f.Name("dr")
		manager := fw.Query("fieldManager", "apiconform-dryrun")
		apply := func(key, value string) *fw.Response {
			body := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  %s: %q\n", name, key, value)
			return f.Patch(f.ConfigMapPath(name), fw.ApplyPatch, body, manager, all)
		}
		// An apply that would create answers 201 with the object and creates nothing.
		r := apply("k", "created")
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Str("data.k")).To(Equal("created"))
		Expect(r.JSON(`metadata.managedFields.#(manager=="apiconform-dryrun").operation`).String()).To(Equal("Apply"), "%s", r)
		fw.ExpectCode(f.GetConfigMap(name), http.StatusNotFound) // a dry-run apply must not create

		// An apply to an existing object (a field no other manager owns, so no
		// conflict) answers the merged object and changes nothing.
		created := f.CreateConfigMap(name, map[string]string{"k": "v"})
		r = apply("added", "applied")
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("data.added")).To(Equal("applied"))
		Expect(r.Str("data.k")).To(Equal("v"), "the merge keeps fields other managers own")
		got := f.GetConfigMap(name)
		Expect(got.JSON("data.added").Exists()).To(BeFalse(), "a dry-run apply must not change the object")
		Expect(got.Str("metadata.resourceVersion")).To(Equal(created.Str("metadata.resourceVersion")))
		Expect(got.JSON(`metadata.managedFields.#(manager=="apiconform-dryrun")`).Exists()).To(BeFalse(), "the dry run's manager must not be recorded")
	})

	It("answers a dry-run delete like a delete and keeps the object", fw.Req("DRYRUN-DELETE"), func() {
		name := f.Name("dr")
		created := f.CreateConfigMap(name, nil)
		r := f.DeleteConfigMap(name, all)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Status"))
		Expect(r.Str("status")).To(Equal("Success"))
		Expect(r.Str("details.uid")).To(Equal(created.Str("metadata.uid")))
		got := f.GetConfigMap(name)
		fw.ExpectCode(got, http.StatusOK)
		Expect(got.Exists("metadata.deletionTimestamp")).To(BeFalse())
	})

	It("deletes nothing on a dry-run collection delete", fw.Req("DRYRUN-DELETE-COLLECTION"), func() {
		a, b := f.Name("dr"), f.Name("dr")
		f.CreateConfigMap(a, nil)
		f.CreateConfigMap(b, nil)
		r := f.Delete(f.ConfigMapsPath(), nil, all)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		fw.ExpectField(f.ListConfigMaps(), "items.#", "2")
	})

	It("validates a dry-run create like a real one", fw.Req("DRYRUN-VALIDATION"), func() {
		r := f.Post(f.ConfigMapsPath(), fw.ConfigMap("Bad_Name", nil), all)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str(`details.causes.#(field=="metadata.name").reason`)).NotTo(BeEmpty(), "%s", r)
	})

	It("refuses a dry-run update with a stale resourceVersion", fw.Req("DRYRUN-CONFLICT"), func() {
		name := f.Name("dr")
		stale := f.CreateConfigMap(name, map[string]string{"a": "1"}).Str("metadata.resourceVersion")
		Expect(f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"a":"2"}}`).Code).To(Equal(http.StatusOK))
		obj := fw.ConfigMap(name, map[string]string{"a": "3"})
		fw.SetMeta(obj, "resourceVersion", stale)
		r := f.Put(f.ConfigMapPath(name), obj, all)
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
	})

	It("produces no watch event", fw.Req("DRYRUN-NO-SIDE-EFFECTS"), func() {
		list := f.ListConfigMaps()
		w := f.Watch(f.ConfigMapsPath(), fw.Query("resourceVersion", list.Str("metadata.resourceVersion")))
		Expect(w.Code).To(Equal(http.StatusOK), "%s", w.Body)
		dry, real := f.Name("dry"), f.Name("real")
		Expect(f.Post(f.ConfigMapsPath(), fw.ConfigMap(dry, nil), all).Code).To(Equal(http.StatusCreated))
		f.CreateConfigMap(real, nil)
		// Events arrive in order: the first one must be the real create.
		for {
			ev, err := w.Next(30 * time.Second)
			Expect(err).NotTo(HaveOccurred())
			if ev.Type == "BOOKMARK" {
				continue
			}
			Expect(ev.Type).To(Equal("ADDED"))
			Expect(ev.Object.Get("metadata.name").String()).To(Equal(real), "the dry-run create must not be seen")
			break
		}
	})
})

var _ = Describe("Dry-run parameter values", fw.Area(area), func() {
	f := fw.New(area)

	// kube-apiserver refuses every value but All, including the empty value the
	// document calls "allow side effects" (catalogued deviation).
	DescribeTable("refuses a dryRun value other than All with 422 Invalid",
		func(query string, kind string, verb string) {
			name := f.Name("dr")
			f.CreateConfigMap(name, map[string]string{"a": "1"})
			var r *fw.Response
			switch verb {
			case "POST":
				r = f.Post(f.ConfigMapsPath()+"?"+query, fw.ConfigMap(f.Name("new"), nil))
			case "PUT":
				r = f.Put(f.ConfigMapPath(name)+"?"+query, fw.ConfigMap(name, map[string]string{"a": "2"}))
			case "PATCH":
				r = f.Patch(f.ConfigMapPath(name)+"?"+query, fw.MergePatch, `{"data":{"a":"2"}}`)
			case "DELETE":
				r = f.Delete(f.ConfigMapPath(name)+"?"+query, nil)
			}
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			Expect(r.Str("details.group")).To(Equal("meta.k8s.io"))
			Expect(r.Str("details.kind")).To(Equal(kind))
			Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueNotSupported"))
			Expect(r.Str("details.causes.0.field")).To(Equal("dryRun"))
			Expect(r.Str("message")).To(ContainSubstring(`supported values: "All"`))
			got := f.GetConfigMap(name)
			fw.ExpectCode(got, http.StatusOK)
			Expect(got.Str("data.a")).To(Equal("1"), "a refused request changes nothing")
		},
		Entry("POST ?dryRun=x", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=x", "CreateOptions", "POST"),
		Entry("POST ?dryRun=all (case matters)", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=all", "CreateOptions", "POST"),
		Entry("PUT ?dryRun=None", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=None", "UpdateOptions", "PUT"),
		Entry("PATCH ?dryRun=foo", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=foo", "PatchOptions", "PATCH"),
		Entry("DELETE ?dryRun=x", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=x", "DeleteOptions", "DELETE"),
		Entry("POST ?dryRun (empty, deviation)", fw.Req("DRYRUN-BAD-VALUE"), "dryRun", "CreateOptions", "POST"),
		Entry("PUT ?dryRun= (empty, deviation)", fw.Req("DRYRUN-BAD-VALUE"), "dryRun=", "UpdateOptions", "PUT"),
		Entry("DELETE ?dryRun (empty, deviation)", fw.Req("DRYRUN-BAD-VALUE"), "dryRun", "DeleteOptions", "DELETE"),
	)
})
