package fieldvalidation

import (
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "fieldvalidation"

func level(l string) fw.Option { return fw.Query("fieldValidation", l) }

// widgetWithExtras is a raw custom-object body with unknown fields at three
// depths and a duplicate field; it is raw text because encoding/json cannot
// produce duplicate keys.
func widgetWithExtras(apiVersion, name string) string {
	return fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q,"foo":1},`+
		`"spec":{"replicas":1,"replicas":2,"foo":"x","nested":{"size":1,"bar":2}},"top":1}`, apiVersion, name)
}

var wantExtras = []string{
	`unknown field "metadata.foo"`,
	`duplicate field "spec.replicas"`,
	`unknown field "spec.foo"`,
	`unknown field "spec.nested.bar"`,
	`unknown field "top"`,
}

var _ = Describe("Field validation levels", fw.Area(area), func() {
	f := fw.New(area)

	It("drops unknown and duplicate fields silently with Ignore", fw.Req("FV-IGNORE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("ign")
		r := f.Post(crd.ListPath("v1", f.Namespace), widgetWithExtras(crd.APIVersion("v1"), name), level("Ignore"))
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Header.Values("Warning")).To(BeEmpty())
		got := f.Get(crd.Path("v1", name))
		Expect(got.Exists("spec.foo")).To(BeFalse(), "unknown fields are dropped: %s", got)
		Expect(got.Exists("spec.nested.bar")).To(BeFalse())
		Expect(got.Exists("top")).To(BeFalse())
		Expect(got.Exists("metadata.foo")).To(BeFalse())
		Expect(got.Int("spec.nested.size")).To(BeEquivalentTo(1))
	})

	It("warns once per unknown or duplicate field with Warn", fw.Req("FV-WARN", "FV-NESTED-UNKNOWN"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("warn")
		r := f.Post(crd.ListPath("v1", f.Namespace), widgetWithExtras(crd.APIVersion("v1"), name), level("Warn"))
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		fw.ExpectWarnings(r, wantExtras...)
		for _, h := range r.Header.Values("Warning") {
			Expect(h).To(HavePrefix(`299 `), "warning header %q", h)
		}
		got := f.Get(crd.Path("v1", name))
		Expect(got.Exists("spec.foo")).To(BeFalse(), "unknown fields are dropped under Warn too")
	})

	It("behaves as Warn without fieldValidation", fw.Req("FV-WARN-DEFAULT"), func() {
		name := f.Name("def")
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":"1"},"data":{"a":"1"},"spec":{"x":1}}`, name)
		r := f.Post(f.ConfigMapsPath(), body)
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		fw.ExpectWarnings(r, `duplicate field "data"`, `unknown field "spec"`)
		Expect(f.GetConfigMap(name).Exists("spec")).To(BeFalse())
	})

	It("reports unknown fields nested in known objects with their full path", fw.Req("FV-NESTED-UNKNOWN"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("nest")
		body := fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q},"spec":{"nested":{"size":1,"bar":2,"deep":{"x":1}}}}`,
			crd.APIVersion("v1"), name)
		r := f.Post(crd.ListPath("v1", f.Namespace), body, level("Warn"))
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		fw.ExpectWarnings(r, `unknown field "spec.nested.bar"`, `unknown field "spec.nested.deep"`)
	})

	It("refuses a create with unknown or duplicate fields with Strict, naming all of them", fw.Req("FV-STRICT-CREATE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		name := f.Name("strict")
		r := f.Post(crd.ListPath("v1", f.Namespace), widgetWithExtras(crd.APIVersion("v1"), name), level("Strict"))
		fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
		Expect(r.Str("message")).To(ContainSubstring("strict decoding error: "))
		for _, w := range wantExtras {
			Expect(r.Str("message")).To(ContainSubstring(w))
		}
		Expect(f.Get(crd.Path("v1", name)).Code).To(Equal(http.StatusNotFound))
	})

	It("refuses a configmap create with a duplicate field with Strict", fw.Req("FV-STRICT-CREATE"), func() {
		name := f.Name("strict")
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":"1"},"data":{"b":"2"}}`, name)
		r := f.Post(f.ConfigMapsPath(), body, level("Strict"))
		fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
		Expect(r.Str("message")).To(ContainSubstring(`strict decoding error: duplicate field "data"`))
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})

	It("refuses a PUT with unknown fields with Strict", fw.Req("FV-STRICT-UPDATE"), func() {
		name := f.Name("put")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":"2"},"bogus":1}`, name)
		r := f.Put(f.ConfigMapPath(name), body, level("Strict"))
		fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
		Expect(r.Str("message")).To(ContainSubstring(`strict decoding error: unknown field "bogus"`))
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("1"))
	})

	DescribeTable("refuses a PATCH that adds unknown fields with Strict (422 Invalid, cause field patch)",
		func(contentType, patch string) {
			name := f.Name("patch")
			f.CreateConfigMap(name, map[string]string{"a": "1"})
			r := f.Patch(f.ConfigMapPath(name), contentType, patch, level("Strict"))
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			Expect(r.Str(`details.causes.0.field`)).To(Equal("patch"), "%s", r)
			Expect(r.Str(`details.causes.0.reason`)).To(Equal("FieldValueInvalid"))
			Expect(r.Str("message")).To(ContainSubstring(`strict decoding error: unknown field "bogus"`))
			Expect(f.GetConfigMap(name).Exists("bogus")).To(BeFalse())
		},
		Entry("merge patch", fw.Req("FV-STRICT-PATCH"), fw.MergePatch, `{"bogus":1,"data":{"a":"2"}}`),
		Entry("strategic merge patch", fw.Req("FV-STRICT-PATCH"), fw.StrategicMergePatch, `{"bogus":1}`),
		Entry("JSON patch", fw.Req("FV-STRICT-PATCH"), fw.JSONPatch, `[{"op":"add","path":"/bogus","value":1}]`),
	)

	It("warns about unknown fields of a merge patch with Warn and applies the rest", fw.Req("FV-WARN"), func() {
		name := f.Name("patch")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"bogus":1,"data":{"a":"2"}}`, level("Warn"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		fw.ExpectWarnings(r, `unknown field "bogus"`)
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("2"))
	})

	It("refuses an unknown fieldValidation value with 422 Invalid", fw.Req("FV-BAD-VALUE"), func() {
		name := f.Name("bad")
		r := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil), level("Bogus"))
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("fieldValidation"))
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueNotSupported"))
		Expect(r.Str("message")).To(ContainSubstring(`Unsupported value: "Bogus"`))
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})
})

var _ = Describe("Field type errors", fw.Area(area), func() {
	f := fw.New(area)

	levels := []string{"", "Ignore", "Warn", "Strict"}

	DescribeTable("refuses a built-in kind's value of the wrong type with 400 BadRequest at every level",
		func(body string) {
			for _, l := range levels {
				name := f.Name("typ")
				opts := []fw.Option{}
				if l != "" {
					opts = append(opts, level(l))
				}
				r := f.Post(f.ConfigMapsPath(), fmt.Sprintf(body, name), opts...)
				fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
				Expect(r.Str("message")).To(ContainSubstring("cannot be handled as a ConfigMap"), "fieldValidation=%q", l)
				Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
			}
		},
		Entry("top level: data is a string", fw.Req("FV-TYPE-ERROR"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":"x"}`),
		Entry("second level: metadata.labels is a string", fw.Req("FV-TYPE-ERROR"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":"x"}}`),
		Entry("third level: a label value is a number", fw.Req("FV-TYPE-ERROR"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"labels":{"a":1}}}`),
		Entry("map value: a data value is a number", fw.Req("FV-TYPE-ERROR"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":1}}`),
		Entry("with an unknown field too", fw.Req("FV-TYPE-AND-UNKNOWN"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{"a":1},"bogus":1}`),
	)

	DescribeTable("refuses a custom resource value of the wrong type at every level",
		func(spec string, field string) {
			crd := f.CreateCRD(fw.CRDOptions{})
			for _, l := range levels {
				name := f.Name("typ")
				body := fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q},"spec":%s}`, crd.APIVersion("v1"), name, spec)
				opts := []fw.Option{}
				if l != "" {
					opts = append(opts, level(l))
				}
				r := f.Post(crd.ListPath("v1", f.Namespace), body, opts...)
				fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
				Expect(r.Str(fmt.Sprintf(`details.causes.#(field==%q).reason`, field))).To(Equal("FieldValueTypeInvalid"), "fieldValidation=%q: %s", l, r)
				Expect(f.Get(crd.Path("v1", name)).Code).To(Equal(http.StatusNotFound))
			}
		},
		Entry("spec is a string", fw.Req("FV-TYPE-ERROR-CUSTOM"), `"x"`, "spec"),
		Entry("spec.replicas is a string", fw.Req("FV-TYPE-ERROR-CUSTOM"), `{"replicas":"x"}`, "spec.replicas"),
		Entry("spec.nested.size is a string", fw.Req("FV-TYPE-ERROR-CUSTOM"), `{"nested":{"size":"big"}}`, "spec.nested.size"),
	)

	It("answers an error at every level to a custom resource with an unknown field and a type error", fw.Req("FV-TYPE-AND-UNKNOWN"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		want := map[string]struct {
			code   int
			reason string
		}{
			"":       {http.StatusUnprocessableEntity, "Invalid"},
			"Ignore": {http.StatusUnprocessableEntity, "Invalid"},
			"Warn":   {http.StatusUnprocessableEntity, "Invalid"},
			"Strict": {http.StatusBadRequest, "BadRequest"},
		}
		for _, l := range levels {
			name := f.Name("both")
			body := fmt.Sprintf(`{"apiVersion":%q,"kind":"Widget","metadata":{"name":%q},"spec":{"replicas":"x","foo":1}}`, crd.APIVersion("v1"), name)
			opts := []fw.Option{}
			if l != "" {
				opts = append(opts, level(l))
			}
			r := f.Post(crd.ListPath("v1", f.Namespace), body, opts...)
			fw.ExpectStatus(r, want[l].code, want[l].reason)
			Expect(f.Get(crd.Path("v1", name)).Code).To(Equal(http.StatusNotFound))
		}
	})
})
