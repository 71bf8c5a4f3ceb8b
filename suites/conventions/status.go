package conventions

import (
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("Status responses", fw.Area(area), func() {
	f := fw.New(area)

	It("answers 404 NotFound naming the kind and name of a missing object", fw.Req("CONV-STATUS-NOT-FOUND"), func() {
		name := f.Name("missing")
		r := f.GetConfigMap(name)
		fw.ExpectStatus(r, http.StatusNotFound, "NotFound")
		Expect(r.Str("details.name")).To(Equal(name))
		Expect(r.Str("details.kind")).To(Equal("configmaps"))
		Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/json"))
	})

	It("answers 409 AlreadyExists when the name is taken", fw.Req("CONV-STATUS-ALREADY-EXISTS"), func() {
		name := f.Name("dup")
		f.CreateConfigMap(name, nil)
		r := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil))
		fw.ExpectStatus(r, http.StatusConflict, "AlreadyExists")
		Expect(r.Str("details.name")).To(Equal(name))
		Expect(r.Str("details.kind")).To(Equal("configmaps"))
	})

	It("answers 409 Conflict to an update with a stale resourceVersion", fw.Req("CONV-STATUS-CONFLICT"), func() {
		name := f.Name("cas")
		created := f.CreateConfigMap(name, map[string]string{"k": "1"})
		staleRV := created.Str("metadata.resourceVersion")
		obj := fw.ConfigMap(name, map[string]string{"k": "2"})
		fw.SetMeta(obj, "resourceVersion", staleRV)
		Expect(f.Put(f.ConfigMapPath(name), obj).Code).To(Equal(http.StatusOK))
		obj["data"] = map[string]string{"k": "3"}
		r := f.Put(f.ConfigMapPath(name), obj) // still carries the first resourceVersion
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
		Expect(f.GetConfigMap(name).Str("data.k")).To(Equal("2"), "the refused update must not be applied")
	})

	It("answers 422 Invalid with causes naming the invalid field", fw.Req("CONV-STATUS-INVALID"), func() {
		r := f.Post(f.ConfigMapsPath(), fw.ConfigMap("Not_A_DNS_Name", nil))
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.kind")).To(Equal("ConfigMap"))
		Expect(r.JSON("details.causes.#(field==\"metadata.name\")").Exists()).To(BeTrue(), "%s", r)
		Expect(r.Str("details.causes.#(field==\"metadata.name\").reason")).NotTo(BeEmpty())
	})

	It("answers 400 BadRequest to a body that is not valid JSON", fw.Req("CONV-STATUS-BAD-REQUEST"), func() {
		r := f.Post(f.ConfigMapsPath(), []byte(`{"apiVersion":"v1","kind":"ConfigMap",`))
		fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
		Expect(r.Str("message")).NotTo(BeEmpty())
	})

	It("answers 400 BadRequest to a custom resource holding a number beyond float64's range", fw.Req("CONV-STATUS-BAD-REQUEST-NUMBER"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		// The same object with a number in range is taken: the refusal is
		// the number's.
		crd.Create("v1", f.Name("num"), map[string]any{"replicas": 3})
		name := f.Name("num")
		r := f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", name, map[string]any{"replicas": json.RawMessage("1e400")}))
		fw.ExpectStatus(r, http.StatusBadRequest, "BadRequest")
		Expect(r.Str("message")).NotTo(BeEmpty())
		Expect(f.Get(crd.Path("v1", name)).Code).To(Equal(http.StatusNotFound), "the refused object must not be stored")
	})

	It("answers 405 MethodNotAllowed to POST on an object URL", fw.Req("CONV-STATUS-METHOD-NOT-ALLOWED"), func() {
		name := f.Name("m")
		f.CreateConfigMap(name, nil)
		r := f.Post(f.ConfigMapPath(name), fw.ConfigMap(name, nil))
		fw.ExpectStatus(r, http.StatusMethodNotAllowed, "MethodNotAllowed")
	})

	It("answers 406 NotAcceptable to an Accept header it cannot serve", fw.Req("CONV-STATUS-NOT-ACCEPTABLE"), func() {
		name := f.Name("acc")
		f.CreateConfigMap(name, nil)
		r := f.GetConfigMap(name, fw.Accept("application/x-apiconform-unknown"))
		fw.ExpectStatus(r, http.StatusNotAcceptable, "NotAcceptable")
	})

	It("answers 413 RequestEntityTooLarge to a body over 3 MiB", fw.Req("CONV-STATUS-TOO-LARGE"), func() {
		name := f.Name("big")
		r := f.Post(f.ConfigMapsPath(), bigConfigMap(name))
		fw.ExpectStatus(r, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge")
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})

	It("answers 415 UnsupportedMediaType to a PATCH of an unknown patch type", fw.Req("CONV-STATUS-UNSUPPORTED-PATCH"), func() {
		name := f.Name("p")
		f.CreateConfigMap(name, map[string]string{"a": "1"})
		r := f.Patch(f.ConfigMapPath(name), "text/plain", `{"data":{"a":"2"}}`)
		fw.ExpectStatus(r, http.StatusUnsupportedMediaType, "UnsupportedMediaType")
		Expect(f.GetConfigMap(name).Str("data.a")).To(Equal("1"))
	})

	It("answers a Success Status to a DELETE that removes the object", fw.Req("CONV-STATUS-DELETE-SUCCESS"), func() {
		name := f.Name("del")
		created := f.CreateConfigMap(name, nil)
		r := f.DeleteConfigMap(name)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("Status"))
		Expect(r.Str("status")).To(Equal("Success"))
		Expect(r.Str("details.name")).To(Equal(name))
		Expect(r.Str("details.uid")).To(Equal(created.Str("metadata.uid")))
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound))
	})
})
