package compatibility

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	fw "github.com/apiconform/apiconform/suites/framework"
)

// frobbers is the changing-the-API document's example resource as the
// reference server serves it.
type frobbers struct{ f *fw.Framework }

func (fr frobbers) list(version string) string {
	return "/apis/" + fw.FrobberGroup + "/" + version + "/namespaces/" + fr.f.Namespace + "/frobbers"
}

func (fr frobbers) path(version, name string) string { return fr.list(version) + "/" + name }

func (fr frobbers) object(version, name string, fields map[string]any) map[string]any {
	obj := map[string]any{"apiVersion": fw.FrobberGroup + "/" + version, "kind": "Frobber",
		"metadata": map[string]any{"name": name}}
	for k, v := range fields {
		obj[k] = v
	}
	return obj
}

func (fr frobbers) create(version, name string, fields map[string]any) *fw.Response {
	return fr.f.Post(fr.list(version), fr.object(version, name, fields))
}

// put replaces the object, carrying the current resourceVersion.
func (fr frobbers) put(version, name string, fields map[string]any) *fw.Response {
	cur := fr.f.Get(fr.path(version, name))
	ExpectWithOffset(1, cur.Code).To(Equal(http.StatusOK), "%s", cur)
	obj := fr.object(version, name, fields)
	fw.SetMeta(obj, "resourceVersion", cur.Str("metadata.resourceVersion"))
	return fr.f.Put(fr.path(version, name), obj)
}

func params(r *fw.Response) []string {
	var out []string
	for _, p := range r.JSON("params").Array() {
		out = append(out, p.String())
	}
	return out
}

var _ = Describe("The Frobber param/params example", fw.Area(area), func() {
	BeforeEach(fw.RequireFrobbers) // before New's BeforeEach: no namespace when skipped
	f := fw.New(area)
	fr := frobbers{f}

	It("fills params from param on a v6 create by an old client", fw.Req("COMPAT-FROBBER-CREATE-SINGULAR"), func() {
		name := f.Name("fr")
		r := fr.create("v6", name, map[string]any{"height": 42, "width": 3, "param": "super"})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Str("param")).To(Equal("super"))
		Expect(params(r)).To(Equal([]string{"super"}))
		Expect(params(f.Get(fr.path("v6", name)))).To(Equal([]string{"super"}))
	})

	It("accepts param and params when params[0] matches and refuses a mismatch", fw.Req("COMPAT-FROBBER-CREATE-BOTH"), func() {
		ok := f.Name("fr")
		r := fr.create("v6", ok, map[string]any{"param": "a", "params": []string{"a", "b"}})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(params(r)).To(Equal([]string{"a", "b"}))

		bad := f.Name("fr")
		r = fr.create("v6", bad, map[string]any{"param": "a", "params": []string{"b", "a"}})
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(f.Get(fr.path("v6", bad)).Code).To(Equal(http.StatusNotFound))
	})

	It("refuses a v6 create with params but no param", fw.Req("COMPAT-FROBBER-CREATE-PLURAL-ONLY"), func() {
		name := f.Name("fr")
		r := fr.create("v6", name, map[string]any{"height": 1, "params": []string{"super"}})
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(f.Get(fr.path("v6", name)).Code).To(Equal(http.StatusNotFound))
	})

	It("clears params when an update clears param and leaves params unchanged", fw.Req("COMPAT-FROBBER-UPDATE-CLEAR-SINGULAR"), func() {
		name := f.Name("fr")
		Expect(fr.create("v6", name, map[string]any{"param": "a", "params": []string{"a", "b"}}).Code).To(Equal(http.StatusCreated))
		r := fr.put("v6", name, map[string]any{"param": "", "params": []string{"a", "b"}})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(params(r)).To(BeEmpty())
		Expect(r.Str("param")).To(BeEmpty())
	})

	It("clears params when a merge patch clears param (the singular/plural ambiguity)", fw.Req("COMPAT-FROBBER-UPDATE-CLEAR-SINGULAR"), func() {
		name := f.Name("fr")
		Expect(fr.create("v6", name, map[string]any{"height": 42, "width": 3, "param": "super"}).Code).To(Equal(http.StatusCreated))
		r := f.Patch(fr.path("v6", name), fw.MergePatch, `{"param":""}`)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("param")).To(BeEmpty(), "the server must not copy params[0] back into param")
		Expect(params(r)).To(BeEmpty())
	})

	It("keeps params when an old client's update omits them and leaves param unchanged", fw.Req("COMPAT-FROBBER-UPDATE-OLD-CLIENT"), func() {
		name := f.Name("fr")
		Expect(fr.create("v6", name, map[string]any{"height": 1, "param": "a", "params": []string{"a", "b"}}).Code).To(Equal(http.StatusCreated))
		r := fr.put("v6", name, map[string]any{"height": 2, "param": "a"})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Int("height")).To(BeEquivalentTo(2))
		Expect(params(r)).To(Equal([]string{"a", "b"}))
	})

	It("sets params to [param] when an update changes param and leaves params unchanged", fw.Req("COMPAT-FROBBER-UPDATE-CHANGE-SINGULAR"), func() {
		name := f.Name("fr")
		Expect(fr.create("v6", name, map[string]any{"param": "a", "params": []string{"a", "b"}}).Code).To(Equal(http.StatusCreated))
		r := fr.put("v6", name, map[string]any{"param": "c", "params": []string{"a", "b"}})
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("param")).To(Equal("c"))
		Expect(params(r)).To(Equal([]string{"c"}))
	})

	It("keeps every param across v7beta1 and v6", fw.Req("COMPAT-FROBBER-VERSIONS"), func() {
		name := f.Name("fr")
		r := fr.create("v7beta1", name, map[string]any{"height": 3, "width": 42, "params": []string{"x", "y"}})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Exists("param")).To(BeFalse(), "v7beta1 has no singular field")

		v6 := f.Get(fr.path("v6", name))
		Expect(v6.Code).To(Equal(http.StatusOK), "%s", v6)
		Expect(v6.Str("apiVersion")).To(Equal(fw.FrobberGroup + "/v6"))
		Expect(v6.Str("param")).To(Equal("x"))
		Expect(params(v6)).To(Equal([]string{"x", "y"}))

		v7 := f.Get(fr.path("v7beta1", name))
		Expect(v7.Str("apiVersion")).To(Equal(fw.FrobberGroup + "/v7beta1"))
		Expect(params(v7)).To(Equal([]string{"x", "y"}))
		Expect(v7.Int("height")).To(BeEquivalentTo(3))
		Expect(v7.Int("width")).To(BeEquivalentTo(42))
	})
})
