package compatibility

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "compatibility"

func twoVersions() fw.CRDOptions {
	return fw.CRDOptions{Versions: []fw.CRDVersion{
		{Name: "v1", Served: true, Storage: true, StatusSubresource: true},
		{Name: "v2", Served: true, StatusSubresource: true},
	}}
}

var _ = Describe("Multi-version resources", fw.Area(area), func() {
	f := fw.New(area)

	It("round-trips an object between v1 and v2 without losing information", fw.Req("COMPAT-ROUND-TRIP"), func() {
		crd := f.CreateCRD(twoVersions())
		name := f.Name("rt")
		spec := map[string]any{"replicas": 2, "color": "red", "nested": map[string]any{"size": 3}}
		crd.Create("v1", name, spec)

		v2 := f.Get(crd.Path("v2", name))
		Expect(v2.Code).To(Equal(http.StatusOK), "%s", v2)
		Expect(v2.Str("apiVersion")).To(Equal(crd.APIVersion("v2")))
		Expect(v2.JSON("spec").Raw).To(MatchJSON(`{"replicas":2,"color":"red","nested":{"size":3}}`))

		// Modify through v2, read through v1.
		r := f.Patch(crd.Path("v2", name), fw.MergePatch, `{"spec":{"color":"blue"}}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("apiVersion")).To(Equal(crd.APIVersion("v2")))
		v1 := f.Get(crd.Path("v1", name))
		Expect(v1.Str("apiVersion")).To(Equal(crd.APIVersion("v1")))
		Expect(v1.JSON("spec").Raw).To(MatchJSON(`{"replicas":2,"color":"blue","nested":{"size":3}}`))
		Expect(v1.Str("metadata.uid")).To(Equal(v2.Str("metadata.uid")))

		// Lists in either version show the object in that version.
		l := f.Get(crd.ListPath("v2", f.Namespace))
		Expect(l.Code).To(Equal(http.StatusOK))
		Expect(l.Str("items.0.apiVersion")).To(Equal(crd.APIVersion("v2")))
		Expect(l.Str("items.0.spec.color")).To(Equal("blue"))
	})

	It("creates through the non-storage version and reads through the storage version", fw.Req("COMPAT-ROUND-TRIP"), func() {
		crd := f.CreateCRD(twoVersions())
		name := f.Name("rt")
		created := crd.Create("v2", name, map[string]any{"replicas": 5})
		Expect(created.Str("apiVersion")).To(Equal(crd.APIVersion("v2")))
		v1 := f.Get(crd.Path("v1", name))
		Expect(v1.Code).To(Equal(http.StatusOK))
		Expect(v1.Int("spec.replicas")).To(BeEquivalentTo(5))
		Expect(v1.Str("metadata.resourceVersion")).To(Equal(created.Str("metadata.resourceVersion")))
	})
})

var _ = Describe("Old and new clients", fw.Area(area), func() {
	f := fw.New(area)

	It("accepts a PUT of an unmodified GET of a configmap", fw.Req("COMPAT-GET-PUT"), func() {
		name := f.Name("gp")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		got := f.GetConfigMap(name)
		r := f.Put(f.ConfigMapPath(name), got.Body)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("data.a")).To(Equal("1"))
	})

	It("accepts a PUT of an unmodified GET of a custom resource in another version", fw.Req("COMPAT-GET-PUT", "COMPAT-ROUND-TRIP"), func() {
		crd := f.CreateCRD(twoVersions())
		name := f.Name("gp")
		crd.Create("v1", name, map[string]any{"replicas": 1, "color": "red"})
		got := f.Get(crd.Path("v2", name))
		r := f.Put(crd.Path("v2", name), got.Body)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.JSON("spec").Raw).To(MatchJSON(`{"replicas":1,"color":"red"}`))
	})

	DescribeTable("handles a field from a newer client per field-validation level",
		func(level string, wantCode int, wantWarning bool) {
			crd := f.CreateCRD(fw.CRDOptions{})
			name := f.Name("nc")
			obj := crd.Object("v1", name, map[string]any{"replicas": 1, "width": 3})
			opts := []fw.Option{}
			if level != "" {
				opts = append(opts, fw.Query("fieldValidation", level))
			}
			r := f.Post(crd.ListPath("v1", f.Namespace), obj, opts...)
			Expect(r.Code).To(Equal(wantCode), "%s", r)
			if wantWarning {
				fw.ExpectWarnings(r, `unknown field "spec.width"`)
			} else {
				Expect(r.Header.Values("Warning")).To(BeEmpty())
			}
			if wantCode == http.StatusCreated {
				got := f.Get(crd.Path("v1", name))
				Expect(got.Int("spec.replicas")).To(BeEquivalentTo(1))
				Expect(got.Exists("spec.width")).To(BeFalse(), "the unknown field is dropped")
			} else {
				fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
				Expect(r.Str("message")).To(ContainSubstring(`unknown field "spec.width"`))
			}
		},
		Entry("default", fw.Req("COMPAT-NEWER-CLIENT"), "", http.StatusCreated, true),
		Entry("Warn", fw.Req("COMPAT-NEWER-CLIENT"), "Warn", http.StatusCreated, true),
		Entry("Ignore", fw.Req("COMPAT-NEWER-CLIENT"), "Ignore", http.StatusCreated, false),
		Entry("Strict", fw.Req("COMPAT-NEWER-CLIENT"), "Strict", http.StatusBadRequest, false),
	)
})
