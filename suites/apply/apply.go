package apply

import (
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "apply"

// applyYAML is an apply configuration for a configmap written as YAML, the
// format the apply content type is named after.
func applyYAML(name string, data map[string]string) string {
	s := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name)
	if len(data) > 0 {
		s += "data:\n"
		for k, v := range data {
			s += fmt.Sprintf("  %s: %q\n", k, v)
		}
	}
	return s
}

var _ = Describe("Server-Side Apply", fw.Area(area), func() {
	f := fw.New(area)

	apply := func(name, manager string, data map[string]string, opts ...fw.Option) *fw.Response {
		if manager != "" {
			opts = append(opts, fw.Query("fieldManager", manager))
		}
		return f.Patch(f.ConfigMapPath(name), fw.ApplyPatch, applyYAML(name, data), opts...)
	}

	It("requires a fieldManager", fw.Req("APPLY-FIELD-MANAGER-REQUIRED"), func() {
		name := f.Name("ap")
		r := apply(name, "", map[string]string{"a": "1"})
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("fieldManager"))
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueRequired"))
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})

	It("creates the object when it does not exist", fw.Req("APPLY-CREATES"), func() {
		name := f.Name("ap")
		r := apply(name, "alice", map[string]string{"a": "1"})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Str("data.a")).To(Equal("1"))
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("1"))
		r = apply(name, "alice", map[string]string{"a": "2"})
		Expect(r.Code).To(Equal(http.StatusOK), "a second apply updates: %s", r)
	})

	It("records managedFields per manager and operation", fw.Req("APPLY-MANAGED-FIELDS"), func() {
		name := f.Name("ap")
		Expect(apply(name, "alice", map[string]string{"a": "1"}).Code).To(Equal(http.StatusCreated))
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"b":"2"}}`, fw.Query("fieldManager", "bob"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		alice := got.JSON(`metadata.managedFields.#(manager=="alice")`)
		Expect(alice.Exists()).To(BeTrue(), "%s", got)
		Expect(alice.Get("operation").String()).To(Equal("Apply"))
		Expect(alice.Get("apiVersion").String()).To(Equal("v1"))
		Expect(alice.Get("fieldsType").String()).To(Equal("FieldsV1"))
		Expect(alice.Get(`fieldsV1.f:data.f:a`).Exists()).To(BeTrue())
		Expect(alice.Get(`fieldsV1.f:data.f:b`).Exists()).To(BeFalse())
		bob := got.JSON(`metadata.managedFields.#(manager=="bob")`)
		Expect(bob.Get("operation").String()).To(Equal("Update"))
		Expect(bob.Get(`fieldsV1.f:data.f:b`).Exists()).To(BeTrue())
	})

	// The common first apply: a manager applies a field of its own to an
	// object another client created (and so tracks with an Update entry).
	// Each owns what it wrote: the applier nothing of the writer's, the
	// writer nothing of the applier's, and the writer's entry is kept.
	It("gives a first applier its own fields and leaves the writer's entry", fw.Req("APPLY-MANAGED-FIELDS"), func() {
		name := f.Name("ap")
		f.CreateConfigMap(name, map[string]string{"c": "1"}, fw.Query("fieldManager", "carol"))
		r := apply(name, "dave", map[string]string{"d": "2"})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		for _, got := range []*fw.Response{r, f.GetConfigMap(name)} {
			Expect(got.Str("data.c")).To(Equal("1"), "%s", got)
			Expect(got.Str("data.d")).To(Equal("2"), "%s", got)
			carol := got.JSON(`metadata.managedFields.#(manager=="carol")`)
			Expect(carol.Get("operation").String()).To(Equal("Update"), "%s", got)
			Expect(carol.Get(`fieldsV1.f:data.f:c`).Exists()).To(BeTrue(), "%s", got)
			Expect(carol.Get(`fieldsV1.f:data.f:d`).Exists()).To(BeFalse(), "%s", got)
			dave := got.JSON(`metadata.managedFields.#(manager=="dave")`)
			Expect(dave.Get("operation").String()).To(Equal("Apply"), "%s", got)
			Expect(dave.Get(`fieldsV1.f:data.f:d`).Exists()).To(BeTrue(), "%s", got)
			Expect(dave.Get(`fieldsV1.f:data.f:c`).Exists()).To(BeFalse(), "%s", got)
		}
	})

	// A namespace's creator owns what it sent (and the label defaulting
	// adds), not the finalizer and phase the server's strategy sets: an
	// applier may then take spec.finalizers without a conflict. A server
	// that records the writer's fields after setting its own makes the
	// creator own them, and the apply a 409.
	It("leaves the fields the server sets on a create to no manager", fw.Req("APPLY-MANAGED-FIELDS"), func() {
		ns := f.Namespace + "-own"
		r := f.Post("/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": ns, "labels": map[string]any{"x": "1"}}}, fw.Query("fieldManager", "carol"))
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		DeferCleanup(func() { f.Delete("/api/v1/namespaces/"+ns, nil) })
		Expect(r.Str("status.phase")).To(Equal("Active"), "%s", r)
		Expect(r.JSON("spec.finalizers").Array()).NotTo(BeEmpty(), "%s", r)
		carol := r.JSON(`metadata.managedFields.#(manager=="carol")`)
		Expect(carol.Get(`fieldsV1.f:metadata.f:labels.f:x`).Exists()).To(BeTrue(), "%s", r)
		Expect(carol.Get(`fieldsV1.f:spec`).Exists()).To(BeFalse(), "the finalizer is the server's: %s", r)
		Expect(carol.Get(`fieldsV1.f:status`).Exists()).To(BeFalse(), "the phase is the server's: %s", r)
		a := f.Patch("/api/v1/namespaces/"+ns, fw.ApplyPatch,
			fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q},"spec":{"finalizers":["kubernetes","example.com/x"]}}`, ns),
			fw.Query("fieldManager", "dave"))
		Expect(a.Code).To(Equal(http.StatusOK), "%s", a)
		Expect(a.JSON(`metadata.managedFields.#(manager=="dave").fieldsV1.f:spec.f:finalizers`).Exists()).To(BeTrue(), "%s", a)
	})

	// A client may set the entries itself with an update: erin's PUT sends
	// a list in which zed owns data.a, so carol's entry (which the stored
	// list has) goes and erin gets what it changed; a patch sending one
	// empty entry then clears them all. A server that keeps the stored
	// list whatever a write sends answers carol's entry both times.
	It("takes the managedFields an update sends, and clears them for one empty entry", fw.Req("APPLY-MANAGED-FIELDS-SENT"), func() {
		name := f.Name("ap")
		f.CreateConfigMap(name, map[string]string{"a": "1"}, fw.Query("fieldManager", "carol"))
		sent := fw.ConfigMap(name, map[string]string{"a": "1", "x": "2"})
		sent["metadata"].(map[string]any)["managedFields"] = []any{map[string]any{
			"manager": "zed", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1",
			"fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}}}}
		r := f.Put(f.ConfigMapPath(name), sent, fw.Query("fieldManager", "erin"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		for _, got := range []*fw.Response{r, f.GetConfigMap(name)} {
			Expect(got.JSON("metadata.managedFields.#.manager").Array()).To(HaveLen(2), "%s", got)
			zed := got.JSON(`metadata.managedFields.#(manager=="zed")`)
			Expect(zed.Get(`fieldsV1.f:data.f:a`).Exists()).To(BeTrue(), "the entry sent: %s", got)
			erin := got.JSON(`metadata.managedFields.#(manager=="erin")`)
			Expect(erin.Get(`fieldsV1.f:data.f:x`).Exists()).To(BeTrue(), "the writer's entry: %s", got)
			Expect(erin.Get(`fieldsV1.f:data.f:a`).Exists()).To(BeFalse(), "%s", got)
		}
		r = f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"metadata":{"managedFields":[{}]},"data":{"y":"3"}}`, fw.Query("fieldManager", "frank"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		for _, got := range []*fw.Response{r, f.GetConfigMap(name)} {
			Expect(got.Str("data.y")).To(Equal("3"), "%s", got)
			Expect(got.JSON("metadata.managedFields").Array()).To(BeEmpty(), "cleared: %s", got)
		}
	})

	It("answers 409 Conflict naming the field and its manager", fw.Req("APPLY-CONFLICT"), func() {
		name := f.Name("ap")
		Expect(apply(name, "alice", map[string]string{"a": "1", "b": "1"}).Code).To(Equal(http.StatusCreated))
		r := apply(name, "bob", map[string]string{"a": "2", "b": "2"})
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
		Expect(r.Str("message")).To(ContainSubstring("Apply failed with 2 conflicts"))
		Expect(r.Str("message")).To(ContainSubstring(`conflicts with "alice"`))
		Expect(r.Str("message")).To(ContainSubstring(".data.a"))
		Expect(r.Str("message")).To(ContainSubstring(".data.b"))
		fields := []string{}
		for _, c := range r.JSON("details.causes").Array() {
			Expect(c.Get("reason").String()).To(Equal("FieldManagerConflict"))
			Expect(c.Get("message").String()).To(ContainSubstring(`"alice"`))
			fields = append(fields, c.Get("field").String())
		}
		Expect(fields).To(ConsistOf(".data.a", ".data.b"))
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("1"))
	})

	It("names an Update owner with its apiVersion in a conflict", fw.Req("APPLY-CONFLICT"), func() {
		name := f.Name("ap")
		f.CreateConfigMap(name, map[string]string{"c": "1"}, fw.Query("fieldManager", "carol"))
		r := apply(name, "bob", map[string]string{"c": "9"})
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
		Expect(r.Str("details.causes.0.field")).To(Equal(".data.c"))
		Expect(r.Str("details.causes.0.message")).To(Equal(`conflict with "carol" using v1`))
	})

	It("takes ownership with force=true", fw.Req("APPLY-FORCE"), func() {
		name := f.Name("ap")
		Expect(apply(name, "alice", map[string]string{"a": "1"}).Code).To(Equal(http.StatusCreated))
		r := apply(name, "bob", map[string]string{"a": "2"}, fw.Query("force", "true"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("data.a")).To(Equal("2"))
		bob := r.JSON(`metadata.managedFields.#(manager=="bob")`)
		Expect(bob.Get(`fieldsV1.f:data.f:a`).Exists()).To(BeTrue())
		alice := r.JSON(`metadata.managedFields.#(manager=="alice")`)
		Expect(alice.Get(`fieldsV1.f:data.f:a`).Exists()).To(BeFalse(), "alice lost the field: %s", r)
	})

	It("refuses force on a non-apply patch", fw.Req("APPLY-FORCE"), func() {
		name := f.Name("ap")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"a":"2"}}`, fw.Query("force", "true"))
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("force"))
	})

	It("shares ownership when two managers apply the same value", fw.Req("APPLY-SHARED-OWNERSHIP"), func() {
		name := f.Name("ap")
		Expect(apply(name, "alice", map[string]string{"a": "1"}).Code).To(Equal(http.StatusCreated))
		r := apply(name, "dave", map[string]string{"a": "1"})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		for _, m := range []string{"alice", "dave"} {
			Expect(r.JSON(`metadata.managedFields.#(manager=="`+m+`").fieldsV1.f:data.f:a`).Exists()).To(BeTrue(), "manager %s", m)
		}
	})

	It("removes a field its sole manager stops applying", fw.Req("APPLY-REMOVES-UNAPPLIED"), func() {
		name := f.Name("ap")
		Expect(apply(name, "alice", map[string]string{"a": "1", "b": "2"}).Code).To(Equal(http.StatusCreated))
		r := apply(name, "alice", map[string]string{"a": "1"})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.GetConfigMap(name)
		Expect(got.Str("data.a")).To(Equal("1"))
		Expect(got.Exists("data.b")).To(BeFalse(), "%s", got)
	})
})

// Field ownership through subresources, on a custom resource with them. ada's apply through /status brings spec and a label too, which the
// status strategy resets, so it applies and owns status alone (a server
// recording it as a main-resource apply answers 409 for the creator's
// spec.replicas); its entry names the subresource, and ben, applying status
// through the main resource, changes and owns nothing there and conflicts
// with no one; cy applying another phase through /status is refused with a
// conflict that names ada's subresource.
var _ = Describe("Server-Side Apply through subresources", fw.Area(area), func() {
	f := fw.New(area)

	It("records a /status write's fields apart from the main resource's", fw.Req("APPLY-SUBRESOURCE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("st")
		path := crd.Path("v1", name)
		Expect(f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", name, map[string]any{"replicas": 1}),
			fw.Query("fieldManager", "creator")).Code).To(Equal(http.StatusCreated))
		applied := func(spec, status map[string]any, labels map[string]any) map[string]any {
			obj := crd.Object("v1", name, spec)
			if labels != nil {
				obj["metadata"].(map[string]any)["labels"] = labels
			}
			obj["status"] = status
			return obj
		}

		r := f.Patch(path+"/status", fw.ApplyPatch, applied(map[string]any{"replicas": 5}, map[string]any{"phase": "Ready"},
			map[string]any{"by": "ada"}), fw.Query("fieldManager", "ada"))
		Expect(r.Code).To(Equal(http.StatusOK), "an apply through /status leaves spec and metadata alone: %s", r)
		Expect(r.Str("status.phase")).To(Equal("Ready"), "%s", r)
		Expect(r.JSON("spec.replicas").Int()).To(Equal(int64(1)), "%s", r)
		Expect(r.Exists("metadata.labels.by")).To(BeFalse(), "%s", r)
		ada := r.JSON(`metadata.managedFields.#(manager=="ada")`)
		Expect(ada.Get("subresource").String()).To(Equal("status"), "the entry names the subresource: %s", r)
		Expect(ada.Get("operation").String()).To(Equal("Apply"), "%s", r)
		Expect(ada.Get(`fieldsV1.f:status.f:phase`).Exists()).To(BeTrue(), "%s", r)
		Expect(ada.Get(`fieldsV1.f:spec`).Exists()).To(BeFalse(), "spec is reset through /status: %s", r)
		Expect(ada.Get(`fieldsV1.f:metadata`).Exists()).To(BeFalse(), "metadata is reset through /status: %s", r)

		r = f.Patch(path, fw.ApplyPatch, applied(map[string]any{"color": "red"}, map[string]any{"phase": "Main"}, nil),
			fw.Query("fieldManager", "ben"))
		Expect(r.Code).To(Equal(http.StatusOK), "status applied through the main resource conflicts with no one: %s", r)
		Expect(r.Str("status.phase")).To(Equal("Ready"), "%s", r)
		Expect(r.Str("spec.color")).To(Equal("red"), "%s", r)
		ben := r.JSON(`metadata.managedFields.#(manager=="ben")`)
		Expect(ben.Get("subresource").Exists()).To(BeFalse(), "%s", r)
		Expect(ben.Get(`fieldsV1.f:status`).Exists()).To(BeFalse(), "status is reset through the main resource: %s", r)

		r = f.Patch(path+"/status", fw.ApplyPatch, applied(nil, map[string]any{"phase": "Gone"}, nil), fw.Query("fieldManager", "cy"))
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
		Expect(r.Str("message")).To(ContainSubstring(`conflict with "ada" with subresource "status"`), "%s", r)
		Expect(r.Str("details.causes.0.field")).To(Equal(".status.phase"), "%s", r)
		fw.Record("conflict", "%s", r.Str("message"))
	})

	// A namespace's status strategy resets spec alone: nina's /status patch
	// changes a label too, which is kept and owned through the subresource,
	// while the finalizer it adds is not (a server resetting metadata as for
	// a custom resource drops the label).
	It("keeps and records the labels a namespace's /status write changes, not its spec", fw.Req("APPLY-SUBRESOURCE"), func() {
		ns := f.Namespace + "-st"
		r := f.Post("/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		DeferCleanup(func() { f.Delete("/api/v1/namespaces/"+ns, nil) })
		r = f.Patch("/api/v1/namespaces/"+ns+"/status", fw.MergePatch,
			`{"metadata":{"labels":{"by":"nina"}},"spec":{"finalizers":["kubernetes","example.com/x"]},"status":{"phase":"Active"}}`,
			fw.Query("fieldManager", "nina"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		got := f.Get("/api/v1/namespaces/" + ns)
		Expect(got.Str("metadata.labels.by")).To(Equal("nina"), "the label is kept: %s", got)
		Expect(got.JSON("spec.finalizers").Array()).To(HaveLen(1), "spec is reset: %s", got)
		nina := got.JSON(`metadata.managedFields.#(manager=="nina")`)
		Expect(nina.Get("subresource").String()).To(Equal("status"), "the entry names the subresource: %s", got)
		Expect(nina.Get(`fieldsV1.f:metadata.f:labels.f:by`).Exists()).To(BeTrue(), "%s", got)
		Expect(nina.Get(`fieldsV1.f:spec`).Exists()).To(BeFalse(), "%s", got)
	})

	// dee scales the custom resource through /scale: its entry names the
	// subresource and owns the object's replicas field, which the creator's
	// entry no longer does.
	It("records a /scale write as the subresource's, owning the object's replicas field", fw.Req("APPLY-SUBRESOURCE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{Versions: []fw.CRDVersion{{Name: "v1", Served: true, Storage: true, StatusSubresource: true, ScaleSubresource: true}}})
		name := f.Name("sc")
		Expect(f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", name, map[string]any{"replicas": 1, "color": "red"}),
			fw.Query("fieldManager", "creator")).Code).To(Equal(http.StatusCreated))
		r := f.Patch(crd.Path("v1", name)+"/scale", fw.MergePatch, `{"spec":{"replicas":3}}`, fw.Query("fieldManager", "dee"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Scale"), "%s", r)
		got := f.Get(crd.Path("v1", name))
		Expect(got.JSON("spec.replicas").Int()).To(Equal(int64(3)), "%s", got)
		dee := got.JSON(`metadata.managedFields.#(manager=="dee")`)
		Expect(dee.Get("subresource").String()).To(Equal("scale"), "the entry names the subresource: %s", got)
		Expect(dee.Get(`fieldsV1.f:spec.f:replicas`).Exists()).To(BeTrue(), "%s", got)
		creator := got.JSON(`metadata.managedFields.#(manager=="creator")`)
		Expect(creator.Get(`fieldsV1.f:spec.f:replicas`).Exists()).To(BeFalse(), "the field changed hands: %s", got)
		Expect(creator.Get(`fieldsV1.f:spec.f:color`).Exists()).To(BeTrue(), "%s", got)
	})
})
