package conventions

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("Object metadata", fw.Area(area), func() {
	f := fw.New(area)

	It("sets a uid that differs when an object is deleted and recreated", fw.Req("CONV-META-UID"), func() {
		name := f.Name("uid")
		first := f.CreateConfigMap(name, nil).Str("metadata.uid")
		Expect(first).NotTo(BeEmpty())
		Expect(f.GetConfigMap(name).Str("metadata.uid")).To(Equal(first))
		Expect(f.DeleteConfigMap(name).Code).To(Equal(http.StatusOK))
		second := f.CreateConfigMap(name, nil).Str("metadata.uid")
		Expect(second).NotTo(BeEmpty())
		Expect(second).NotTo(Equal(first))
	})

	It("sets creationTimestamp as an RFC 3339 date-time", fw.Req("CONV-META-CREATION-TIMESTAMP"), func() {
		r := f.CreateConfigMap(f.Name("ts"), nil)
		ts := r.Str("metadata.creationTimestamp")
		parsed, err := time.Parse(time.RFC3339, ts)
		Expect(err).NotTo(HaveOccurred(), "creationTimestamp %q", ts)
		Expect(parsed.IsZero()).To(BeFalse())
	})

	It("sets resourceVersion and changes it on every modification", fw.Req("CONV-META-RESOURCE-VERSION"), func() {
		name := f.Name("rv")
		rv1 := f.CreateConfigMap(name, map[string]string{"k": "1"}).Str("metadata.resourceVersion")
		Expect(rv1).NotTo(BeEmpty())
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"k":"2"}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		rv2 := r.Str("metadata.resourceVersion")
		Expect(rv2).NotTo(BeEmpty())
		Expect(rv2).NotTo(Equal(rv1))
		Expect(f.GetConfigMap(name).Str("metadata.resourceVersion")).To(Equal(rv2))
	})

	It("creates a unique name from generateName", fw.Req("CONV-META-GENERATE-NAME"), func() {
		prefix := f.Name("gen") + "-"
		body := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": prefix}}
		a := f.Post(f.ConfigMapsPath(), body)
		b := f.Post(f.ConfigMapsPath(), body)
		Expect(a.Code).To(Equal(http.StatusCreated), "%s", a)
		Expect(b.Code).To(Equal(http.StatusCreated), "%s", b)
		nameA, nameB := a.Str("metadata.name"), b.Str("metadata.name")
		Expect(nameA).To(HavePrefix(prefix))
		Expect(len(nameA)).To(BeNumerically(">", len(prefix)))
		Expect(nameB).To(HavePrefix(prefix))
		Expect(nameA).NotTo(Equal(nameB))
		Expect(f.GetConfigMap(nameA).Code).To(Equal(http.StatusOK))
	})

	It("increases generation on spec changes only", fw.Req("CONV-META-GENERATION"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("gen")
		created := crd.Create("v1", name, map[string]any{"replicas": 1})
		Expect(created.Int("metadata.generation")).To(BeEquivalentTo(1))

		r := f.Patch(crd.Path("v1", name), fw.MergePatch, `{"spec":{"replicas":2}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Int("metadata.generation")).To(BeEquivalentTo(2))

		r = f.Patch(crd.Path("v1", name), fw.MergePatch, `{"metadata":{"labels":{"a":"b"}}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Int("metadata.generation")).To(BeEquivalentTo(2), "a metadata change is not a spec change")

		r = f.Patch(crd.Path("v1", name)+"/status", fw.MergePatch, `{"status":{"ready":true}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Int("metadata.generation")).To(BeEquivalentTo(2), "a status change is not a spec change")
	})
})

var _ = Describe("PUT and the spec/status split", fw.Area(area), func() {
	f := fw.New(area)

	It("clears fields omitted from a PUT body", fw.Req("CONV-PUT-WHOLE-OBJECT"), func() {
		name := f.Name("put")
		created := f.CreateConfigMap(name, map[string]string{"keep": "1", "drop": "2"})
		obj := fw.ConfigMap(name, map[string]string{"keep": "1"})
		fw.SetMeta(obj, "resourceVersion", created.Str("metadata.resourceVersion"))
		r := f.Put(f.ConfigMapPath(name), obj)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Str("data.keep")).To(Equal("1"))
		Expect(got.Exists("data.drop")).To(BeFalse(), "omitted key must be cleared: %s", got)
	})

	It("ignores status on the main resource when a status subresource exists", fw.Req("CONV-STATUS-IGNORED-ON-MAIN"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("st")
		obj := crd.Object("v1", name, map[string]any{"replicas": 1})
		obj["status"] = map[string]any{"ready": true, "phase": "Posted"}
		r := f.Post(crd.ListPath("v1", f.Namespace), obj)
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Exists("status.phase")).To(BeFalse(), "POST must drop status: %s", r)

		r = f.Patch(crd.Path("v1", name)+"/status", fw.MergePatch, `{"status":{"phase":"Set"}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)

		cur := f.Get(crd.Path("v1", name))
		put := crd.Object("v1", name, map[string]any{"replicas": 3})
		fw.SetMeta(put, "resourceVersion", cur.Str("metadata.resourceVersion"))
		put["status"] = map[string]any{"phase": "Overwritten"}
		r = f.Put(crd.Path("v1", name), put)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Int("spec.replicas")).To(BeEquivalentTo(3))
		Expect(r.Str("status.phase")).To(Equal("Set"), "PUT must keep the stored status")
		Expect(f.Get(crd.Path("v1", name)).Str("status.phase")).To(Equal("Set"))
	})

	It("updates status and ignores spec through /status", fw.Req("CONV-STATUS-SUBRESOURCE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("sub")
		crd.Create("v1", name, map[string]any{"replicas": 1})
		cur := f.Get(crd.Path("v1", name))
		obj := crd.Object("v1", name, map[string]any{"replicas": 9})
		fw.SetMeta(obj, "resourceVersion", cur.Str("metadata.resourceVersion"))
		obj["status"] = map[string]any{"phase": "Running"}
		r := f.Put(crd.Path("v1", name)+"/status", obj)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("status.phase")).To(Equal("Running"))
		Expect(r.Int("spec.replicas")).To(BeEquivalentTo(1), "/status must ignore spec")
		got := f.Get(crd.Path("v1", name))
		Expect(got.Int("spec.replicas")).To(BeEquivalentTo(1))
		Expect(got.Str("status.phase")).To(Equal("Running"))
	})
})

var _ = Describe("PATCH types", fw.Area(area), func() {
	f := fw.New(area)

	It("applies a JSON Patch", fw.Req("CONV-PATCH-JSON"), func() {
		name := f.Name("jp")
		f.CreateConfigMap(name, map[string]string{"a": "1", "b": "2"})
		r := f.Patch(f.ConfigMapPath(name), fw.JSONPatch,
			`[{"op":"test","path":"/data/a","value":"1"},{"op":"replace","path":"/data/a","value":"10"},{"op":"remove","path":"/data/b"},{"op":"add","path":"/data/c","value":"3"}]`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.JSON("data").Map()).To(HaveLen(2))
		Expect(got.Str("data.a")).To(Equal("10"))
		Expect(got.Str("data.c")).To(Equal("3"))
	})

	It("refuses a JSON Patch whose test operation fails and changes nothing", fw.Req("CONV-PATCH-JSON-TEST-FAILS"), func() {
		name := f.Name("jpt")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		r := f.Patch(f.ConfigMapPath(name), fw.JSONPatch,
			`[{"op":"replace","path":"/data/a","value":"3"},{"op":"test","path":"/data/a","value":"2"}]`)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("1"))
	})

	It("applies a merge patch where null deletes a key", fw.Req("CONV-PATCH-MERGE"), func() {
		name := f.Name("mp")
		f.CreateConfigMap(name, map[string]string{"a": "1", "b": "2"})
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"a":"10","b":null,"c":"3"}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Str("data.a")).To(Equal("10"))
		Expect(got.Exists("data.b")).To(BeFalse())
		Expect(got.Str("data.c")).To(Equal("3"))
	})

	It("applies a strategic merge patch to a configmap", fw.Req("CONV-PATCH-STRATEGIC"), func() {
		name := f.Name("smp")
		f.CreateConfigMap(name, map[string]string{"a": "1", "b": "2"})
		r := f.Patch(f.ConfigMapPath(name), fw.StrategicMergePatch, `{"data":{"c":"3","b":null},"metadata":{"labels":{"x":"y"}}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Str("data.a")).To(Equal("1"))
		Expect(got.Exists("data.b")).To(BeFalse())
		Expect(got.Str("data.c")).To(Equal("3"))
		Expect(got.Str("metadata.labels.x")).To(Equal("y"))
	})
})

var _ = Describe("Deletion with finalizers", fw.Area(area), func() {
	f := fw.New(area)
	const finalizer = "apiconform.test/hold"

	It("sets deletionTimestamp and keeps the object while finalizers remain", fw.Req("CONV-DELETE-SETS-TIMESTAMP"), func() {
		name := f.Name("fin")
		f.CreateHeld(name, map[string]string{"a": "1"}, finalizer)
		r := f.DeleteConfigMap(name)
		Expect(r.Code).To(BeElementOf(http.StatusOK, http.StatusAccepted), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Code).To(Equal(http.StatusOK), "object must stay until its finalizers are removed")
		ts := got.Str("metadata.deletionTimestamp")
		_, err := time.Parse(time.RFC3339, ts)
		Expect(err).NotTo(HaveOccurred(), "deletionTimestamp %q", ts)
		Expect(got.JSON("metadata.finalizers").Array()).To(HaveLen(1))
		// Still listed, too.
		list := f.ListConfigMaps()
		Expect(list.JSON(`items.#(metadata.name=="` + name + `")`).Exists()).To(BeTrue())
	})

	It("does not let a client unset deletionTimestamp", fw.Req("CONV-DELETE-TIMESTAMP-IMMUTABLE"), func() {
		name := f.Name("fin")
		f.CreateHeld(name, map[string]string{"a": "1"}, finalizer)
		f.DeleteConfigMap(name)
		ts := f.GetConfigMap(name).Str("metadata.deletionTimestamp")
		Expect(ts).NotTo(BeEmpty())
		for _, p := range []struct{ ct, body string }{
			{fw.MergePatch, `{"metadata":{"deletionTimestamp":null}}`},
			{fw.JSONPatch, `[{"op":"remove","path":"/metadata/deletionTimestamp"}]`},
		} {
			r := f.Patch(f.ConfigMapPath(name), p.ct, p.body)
			// Either refused or silently ignored; never unset.
			Expect(r.Code).To(BeElementOf(http.StatusOK, http.StatusUnprocessableEntity, http.StatusBadRequest, http.StatusConflict), "%s", r)
			Expect(f.GetConfigMap(name).Str("metadata.deletionTimestamp")).To(Equal(ts), "after %s", p.ct)
		}
	})

	It("removes the object once the last finalizer is removed", fw.Req("CONV-DELETE-FINALIZERS-LAST"), func() {
		name := f.Name("fin")
		f.CreateHeld(name, nil, finalizer, "apiconform.test/second")
		f.DeleteConfigMap(name)

		r := f.Patch(f.ConfigMapPath(name), fw.JSONPatch, `[{"op":"remove","path":"/metadata/finalizers/0"}]`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusOK), "one finalizer is left")

		r = f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"metadata":{"finalizers":null}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Eventually(func() int { return f.GetConfigMap(name).Code }).WithTimeout(10 * time.Second).
			WithPolling(100 * time.Millisecond).Should(Equal(http.StatusNotFound))
	})
})

const tableAccept = "application/json;as=Table;g=meta.k8s.io;v=v1"

var _ = Describe("Table output", fw.Area(area), func() {
	f := fw.New(area)

	It("lists objects as a Table with one row per object", fw.Req("CONV-TABLE-LIST"), func() {
		a, b := f.Name("t"), f.Name("t")
		f.CreateConfigMap(a, map[string]string{"k": "v"})
		f.CreateConfigMap(b, nil)
		r := f.Get(f.ConfigMapsPath(), fw.Accept(tableAccept))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Table"))
		Expect(r.Str("apiVersion")).To(Equal("meta.k8s.io/v1"))
		Expect(r.Str("metadata.resourceVersion")).NotTo(BeEmpty())
		Expect(r.JSON("columnDefinitions.#").Int()).To(BeNumerically(">=", 1))
		Expect(r.Str("columnDefinitions.0.name")).To(Equal("Name"))
		Expect(r.JSON("rows.#").Int()).To(BeEquivalentTo(2))
		cols := int(r.JSON("columnDefinitions.#").Int())
		for _, row := range r.JSON("rows").Array() {
			Expect(row.Get("cells.#").Int()).To(BeEquivalentTo(cols))
			Expect(row.Get("object.metadata.name").String()).To(BeElementOf(a, b))
		}
	})

	It("gets one object as a Table with one row", fw.Req("CONV-TABLE-GET"), func() {
		name := f.Name("t")
		f.CreateConfigMap(name, nil)
		r := f.GetConfigMap(name, fw.Accept(tableAccept))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Table"))
		Expect(r.JSON("rows.#").Int()).To(BeEquivalentTo(1))
		Expect(r.Str("rows.0.cells.0")).To(Equal(name))
	})

	It("gives a custom resource without printer columns the default Name and creation columns", fw.Req("CONV-TABLE-DEFAULT-COLUMNS"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("t")
		crd.Create("v1", name, map[string]any{"replicas": 1})
		r := f.Get(crd.ListPath("v1", f.Namespace), fw.Accept(tableAccept))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Table"))
		cols := r.JSON("columnDefinitions").Array()
		Expect(cols).To(HaveLen(2), "%s", r)
		Expect(cols[0].Get("name").String()).To(Equal("Name"))
		Expect(cols[0].Get("format").String()).To(Equal("name"))
		Expect(cols[1].Get("type").String()).To(Equal("date"), "the second column shows creationTimestamp")
		Expect(r.Str("rows.0.cells.0")).To(Equal(name))
	})
})
