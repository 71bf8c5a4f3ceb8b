package resources

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/apiconform/apiconform/reports/result"
	fw "github.com/apiconform/apiconform/suites/framework"
)

const area = "resources"

// names lists the metadata.name of every item of a list answer.
func names(r *fw.Response) []string {
	out := []string{}
	for _, v := range r.JSON("items.#.metadata.name").Array() {
		out = append(out, v.String())
	}
	return out
}

// setData merge-patches data.v of configmap name and expects it to succeed.
func setData(f *fw.Framework, name, v string) {
	r := f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"v":"`+v+`"}}`)
	Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
}

// otherNamespace creates a second namespace for the spec, deleted after it.
// Its name sorts after the spec's own, so a server that stops at the first
// namespace is seen.
func otherNamespace(f *fw.Framework) string {
	ns := f.Namespace + "-z"
	r := f.Post("/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	Expect(r.Code).To(Equal(http.StatusCreated), "create namespace: %s", r)
	DeferCleanup(func() { f.Delete("/api/v1/namespaces/"+ns, nil) })
	return ns
}

var _ = Describe("Object names", fw.Area(area), func() {
	f := fw.New(area)

	It("keeps names unique per namespace, not across namespaces", fw.Req("RES-NAME-UNIQUE-PER-NAMESPACE"), func() {
		name := f.Name("same")
		f.CreateConfigMap(name, nil)
		fw.ExpectStatus(f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil)), http.StatusConflict, "AlreadyExists")
		other := otherNamespace(f)
		r := f.Post("/api/v1/namespaces/"+other+"/configmaps", fw.ConfigMap(name, nil))
		Expect(r.Code).To(Equal(http.StatusCreated), "the same name in another namespace: %s", r)
	})

	DescribeTable("refuses names that are not DNS subdomains", fw.Req("RES-NAME-DNS-SUBDOMAIN"),
		func(name string) {
			r := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil))
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			Expect(r.Str("details.causes.0.field")).To(Equal("metadata.name"), "%s", r)
			Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueInvalid"), "%s", r)
		},
		Entry("upper case and underscore", "Bad_Name"),
		Entry("longer than 253 characters", strings.Repeat("a", 254)),
		Entry("ends with a dash", "trailing-"),
	)

	It("requires a name or a generateName", fw.Req("RES-NAME-REQUIRED"), func() {
		r := f.Post(f.ConfigMapsPath(), map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{}})
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("metadata.name"), "%s", r)
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueRequired"), "%s", r)
	})
})

var _ = Describe("Verbs and URIs", fw.Area(area), func() {
	f := fw.New(area)

	It("answers 405 to PUT on a collection", fw.Req("RES-VERB-PUT-COLLECTION"), func() {
		fw.ExpectStatus(f.Put(f.ConfigMapsPath(), fw.ConfigMap("x", nil)), http.StatusMethodNotAllowed, "MethodNotAllowed")
	})

	It("answers 404 to PUT of a configmap that does not exist", fw.Req("RES-VERB-PUT-MISSING"), func() {
		name := f.Name("missing")
		fw.ExpectStatus(f.Put(f.ConfigMapPath(name), fw.ConfigMap(name, nil)), http.StatusNotFound, "NotFound")
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound), "nothing was created")
	})

	It("answers 404 for a subresource the resource does not have", fw.Req("RES-URI-UNKNOWN-SUBRESOURCE"), func() {
		name := f.Name("sub")
		f.CreateConfigMap(name, nil)
		fw.ExpectStatus(f.Get(f.ConfigMapPath(name)+"/nosuchsubresource"), http.StatusNotFound, "NotFound")
	})

	It("answers 404 for a cluster-scoped resource under a namespace", fw.Req("RES-URI-CLUSTER-SCOPED-IN-NAMESPACE"), func() {
		fw.ExpectStatus(f.Get("/api/v1/namespaces/"+f.Namespace+"/namespaces"), http.StatusNotFound, "NotFound")
		fw.ExpectStatus(f.Get("/api/v1/namespaces/"+f.Namespace+"/namespaces/"+f.Namespace), http.StatusNotFound, "NotFound")
	})

	It("lists a namespaced type across every namespace without a namespace in the path", fw.Req("RES-URI-ALL-NAMESPACES"), func() {
		label := f.Name("all")
		other := otherNamespace(f)
		for _, ns := range []string{f.Namespace, other} {
			body := fw.ConfigMap("cm", nil)
			fw.SetMeta(body, "labels", map[string]string{"apiconform.test/all": label})
			Expect(f.Post("/api/v1/namespaces/"+ns+"/configmaps", body).Code).To(Equal(http.StatusCreated))
		}
		r := f.Get("/api/v1/configmaps", fw.Query("labelSelector", "apiconform.test/all="+label))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.JSON("items.#.metadata.namespace").Value()).To(ConsistOf(f.Namespace, other))
	})

	It("answers 404 naming the namespace for a create in a namespace that does not exist", fw.Req("RES-URI-NAMESPACE-MISSING"), func() {
		ns := f.Namespace + "-absent"
		r := f.Post("/api/v1/namespaces/"+ns+"/configmaps", fw.ConfigMap("x", nil))
		fw.ExpectStatus(r, http.StatusNotFound, "NotFound")
		Expect(r.Str("details.name")).To(Equal(ns), "%s", r)
		Expect(r.Str("details.kind")).To(Equal("namespaces"), "%s", r)
	})
})

var _ = Describe("Collections", fw.Area(area), func() {
	f := fw.New(area)

	It("answers a list as <Kind>List in the resource's apiVersion", fw.Req("RES-LIST-KIND"), func() {
		f.CreateConfigMap(f.Name("k"), nil)
		r := f.ListConfigMaps()
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("kind")).To(Equal("ConfigMapList"))
		Expect(r.Str("apiVersion")).To(Equal("v1"))
	})

	It("answers an empty items array, never null, when nothing matches", fw.Req("RES-LIST-EMPTY-ITEMS"), func() {
		f.CreateConfigMap(f.Name("k"), nil) // something the selector excludes
		r := f.ListConfigMaps(fw.Query("labelSelector", "apiconform.test/none=none"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.JSON("items").IsArray()).To(BeTrue(), "items must be an array: %s", r)
		Expect(r.JSON("items").Array()).To(BeEmpty())
	})

	It("carries the collection's resourceVersion in the list metadata", fw.Req("RES-LIST-METADATA"), func() {
		created := f.CreateConfigMap(f.Name("k"), nil)
		r := f.ListConfigMaps()
		Expect(r.Str("metadata.resourceVersion")).NotTo(BeEmpty(), "%s", r)
		if listRV, ok := fw.RVInt(r.Str("metadata.resourceVersion")); ok {
			objRV, _ := fw.RVInt(created.Str("metadata.resourceVersion"))
			Expect(listRV).To(BeNumerically(">=", objRV), "the list is at least as new as the object it contains")
		}
	})

	It("refuses a list of objects as the body of a create", fw.Req("RES-SINGLE-NO-LIST-BODY"), func() {
		name := f.Name("item")
		body := map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "items": []any{fw.ConfigMap(name, nil)}}
		fw.ExpectStatus(f.Post(f.ConfigMapsPath(), body), http.StatusBadRequest, "BadRequest")
		Expect(f.GetConfigMap(name).Code).To(Equal(http.StatusNotFound), "no item of the list was created")
	})
})

var _ = Describe("Selectors", fw.Area(area), func() {
	f := fw.New(area)

	// Three objects: a and c carry tier=a / tier=c, plain carries no tier.
	var a, c, plain string
	BeforeEach(func() {
		a, c, plain = f.Name("a"), f.Name("c"), f.Name("plain")
		for name, tier := range map[string]string{a: "a", c: "c", plain: ""} {
			body := fw.ConfigMap(name, nil)
			if tier != "" {
				fw.SetMeta(body, "labels", map[string]string{"tier": tier})
			}
			Expect(f.Post(f.ConfigMapsPath(), body).Code).To(Equal(http.StatusCreated))
		}
	})

	It("selects one object by fieldSelector=metadata.name", fw.Req("RES-FIELD-SELECTOR-NAME-LIST"), func() {
		r := f.ListConfigMaps(fw.Query("fieldSelector", "metadata.name="+c))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(names(r)).To(ConsistOf(c))
	})

	It("excludes one object by fieldSelector=metadata.name!=", fw.Req("RES-FIELD-SELECTOR-NOT-EQUAL"), func() {
		r := f.ListConfigMaps(fw.Query("fieldSelector", "metadata.name!="+a))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(names(r)).To(ContainElements(c, plain))
		Expect(names(r)).NotTo(ContainElement(a))
	})

	It("watches one object by fieldSelector=metadata.name", fw.Req("RES-FIELD-SELECTOR-NAME-WATCH"), func() {
		rv := f.ListConfigMaps().Str("metadata.resourceVersion")
		w := f.Watch(f.ConfigMapsPath(), fw.Query("resourceVersion", rv), fw.Query("fieldSelector", "metadata.name="+c))
		defer w.Close()
		// Write the excluded object first: its event would arrive before the
		// watched one's on a server that ignores the selector.
		setData(f, a, "1")
		setData(f, c, "1")
		ev, err := w.Next(10 * time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(ev.Type).To(Equal("MODIFIED"))
		Expect(ev.Object.Get("metadata.name").String()).To(Equal(c))
		// Once more: the excluded object's change must not come first.
		setData(f, a, "2")
		setData(f, c, "2")
		ev, err = w.Next(10 * time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(ev.Object.Get("metadata.name").String()).To(Equal(c), "no event for an object the selector excludes")
		Expect(ev.Object.Get("data.v").String()).To(Equal("2"))
	})

	It("refuses a field selector on a field the resource does not support", fw.Req("RES-FIELD-SELECTOR-UNSUPPORTED"), func() {
		fw.ExpectStatus(f.Get(f.ConfigMapsPath(), fw.Query("fieldSelector", "data.x=y")), http.StatusBadRequest, "BadRequest")
	})

	DescribeTable("label selector operators", fw.Req("RES-LABEL-SELECTOR-OPERATORS"),
		func(selector string, want func() []string) {
			r := f.ListConfigMaps(fw.Query("labelSelector", selector))
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(names(r)).To(ConsistOf(want()), "labelSelector %q", selector)
		},
		Entry("=", "tier=a", func() []string { return []string{a} }),
		Entry("==", "tier==a", func() []string { return []string{a} }),
		Entry("!= also matches objects without the key", "tier!=a", func() []string { return []string{c, plain} }),
		Entry("in", "tier in (a,c)", func() []string { return []string{a, c} }),
		Entry("notin also matches objects without the key", "tier notin (a)", func() []string { return []string{c, plain} }),
		Entry("exists", "tier", func() []string { return []string{a, c} }),
		Entry("!exists", "!tier", func() []string { return []string{plain} }),
		Entry("a comma is AND", "tier,tier!=c", func() []string { return []string{a} }),
	)

	DescribeTable("label selectors that do not parse", fw.Req("RES-LABEL-SELECTOR-INVALID"),
		func(selector string) {
			fw.ExpectStatus(f.Get(f.ConfigMapsPath(), fw.Query("labelSelector", selector)), http.StatusBadRequest, "BadRequest")
		},
		Entry("===", "tier===a"),
		Entry("in without parentheses", "tier in a"),
		Entry("unclosed parenthesis", "tier in (a"),
	)
})

var _ = Describe("Label and annotation syntax", fw.Area(area), func() {
	f := fw.New(area)

	DescribeTable("refuses malformed labels", fw.Req("RES-LABEL-SYNTAX"),
		func(key, value string) {
			body := fw.ConfigMap(f.Name("l"), nil)
			fw.SetMeta(body, "labels", map[string]string{key: value})
			r := f.Post(f.ConfigMapsPath(), body)
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			Expect(r.Str("details.causes.0.field")).To(HavePrefix("metadata.labels"), "%s", r)
		},
		Entry("key with a space and !", "bad key!", "v"),
		Entry("value over 63 characters", "k", strings.Repeat("v", 64)),
		Entry("prefix that is not a DNS subdomain", "Bad_Prefix/k", "v"),
	)

	It("refuses a malformed annotation key", fw.Req("RES-ANNOTATION-SYNTAX"), func() {
		body := fw.ConfigMap(f.Name("a"), nil)
		fw.SetMeta(body, "annotations", map[string]string{"bad key!": "v"})
		r := f.Post(f.ConfigMapsPath(), body)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(HavePrefix("metadata.annotations"), "%s", r)
	})
})

const tableType = "application/json;as=Table;g=meta.k8s.io;v=v1"

var _ = Describe("Alternate representations", fw.Area(area), func() {
	f := fw.New(area)

	It("answers a Table when the Table type is listed before JSON", fw.Req("RES-TABLE-PREFERRED"), func() {
		f.CreateConfigMap(f.Name("t"), nil)
		// Media type parameters have no order: v before g is the same type.
		for _, table := range []string{tableType, "application/json;as=Table;v=v1;g=meta.k8s.io"} {
			r := f.Get(f.ConfigMapsPath(), fw.Accept(table+", application/json"))
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(r.Str("kind")).To(Equal("Table"), "%s", r)
		}
	})

	DescribeTable("Table rows by includeObject", fw.Req("RES-TABLE-INCLUDE-OBJECT"),
		func(includeObject, wantKind string) {
			name := f.Name("t")
			f.CreateConfigMap(name, map[string]string{"k": "v"})
			opts := []fw.Option{fw.Accept(tableType)}
			if includeObject != "" {
				opts = append(opts, fw.Query("includeObject", includeObject))
			}
			r := f.Get(f.ConfigMapsPath(), opts...)
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(r.JSON("rows").Array()).To(HaveLen(1), "%s", r)
			obj := r.JSON("rows.0.object")
			if wantKind == "" {
				Expect(obj.Exists() && obj.Type.String() != "Null").To(BeFalse(), "no object with includeObject=None: %s", r)
				return
			}
			Expect(obj.Get("kind").String()).To(Equal(wantKind), "%s", r)
			Expect(obj.Get("metadata.name").String()).To(Equal(name))
			Expect(obj.Get("data.k").Exists()).To(Equal(wantKind == "ConfigMap"), "only the full object carries data: %s", r)
		},
		Entry("None", "None", ""),
		Entry("Metadata", "Metadata", "PartialObjectMetadata"),
		Entry("default is Metadata", "", "PartialObjectMetadata"),
		Entry("Object", "Object", "ConfigMap"),
	)

	It("pages a Table with limit and continue", fw.Req("RES-TABLE-PAGING"), func() {
		var want []string
		for i := 0; i < 3; i++ {
			want = append(want, f.CreateConfigMap(f.Name("t"), nil).Str("metadata.name"))
		}
		var got []string
		r := f.Get(f.ConfigMapsPath(), fw.Accept(tableType), fw.Query("limit", "2"))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.JSON("rows").Array()).To(HaveLen(2), "%s", r)
		Expect(r.Int("metadata.remainingItemCount")).To(BeEquivalentTo(1), "%s", r)
		cont := r.Str("metadata.continue")
		Expect(cont).NotTo(BeEmpty(), "%s", r)
		for _, v := range r.JSON("rows.#.object.metadata.name").Array() {
			got = append(got, v.String())
		}
		r = f.Get(f.ConfigMapsPath(), fw.Accept(tableType), fw.Query("limit", "2"), fw.Query("continue", cont))
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		Expect(r.Str("metadata.continue")).To(BeEmpty(), "%s", r)
		for _, v := range r.JSON("rows.#.object.metadata.name").Array() {
			got = append(got, v.String())
		}
		Expect(got).To(ConsistOf(want))
	})

	It("answers YAML for Accept application/yaml", fw.Req("RES-YAML"), func() {
		name := f.Name("y")
		f.CreateConfigMap(name, map[string]string{"k": "v"})
		for _, path := range []string{f.ConfigMapPath(name), f.ConfigMapsPath()} {
			r := f.Get(path, fw.Accept("application/yaml"))
			Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
			Expect(r.Header.Get("Content-Type")).To(HavePrefix("application/yaml"), "%s", r)
			Expect(string(r.Body)).To(ContainSubstring("apiVersion: v1"), "%s", r)
			Expect(string(r.Body)).To(ContainSubstring(name))
			Expect(string(r.Body)).NotTo(HavePrefix("{"), "YAML, not JSON: %s", r)
		}
	})
})

var _ = Describe("Success codes", fw.Area(area), func() {
	f := fw.New(area)

	It("answers 201 to a create and 200 to get, update, patch and delete", fw.Req("RES-SUCCESS-CODES"), func() {
		name := f.Name("s")
		created := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil))
		Expect(created.Code).To(Equal(http.StatusCreated), "create: %s", created)
		got := f.GetConfigMap(name)
		Expect(got.Code).To(Equal(http.StatusOK), "get: %s", got)
		body := fw.ConfigMap(name, map[string]string{"k": "v"})
		fw.SetMeta(body, "resourceVersion", got.Str("metadata.resourceVersion"))
		Expect(f.Put(f.ConfigMapPath(name), body).Code).To(Equal(http.StatusOK), "update")
		Expect(f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"data":{"k":"w"}}`).Code).To(Equal(http.StatusOK), "patch")
		Expect(f.DeleteConfigMap(name).Code).To(Equal(http.StatusOK), "delete")
	})

	// The document says 204; kube-apiserver answers 405 (catalogued deviation),
	// and the reference server does what kube-apiserver does.
	It("answers OPTIONS on a resource URL as kube-apiserver does", fw.Req("RES-OPTIONS"), func() {
		r := f.Do(http.MethodOptions, f.ConfigMapsPath(), nil)
		fw.ExpectStatus(r, http.StatusMethodNotAllowed, "MethodNotAllowed")
	})
})

// getNaming sends GET path with Accept accept (none when "") on the
// target's transport and returns the status, Content-Type and body. A
// transport failure is a harness error, not a conformance failure.
func getNaming(f *fw.Framework, path, accept string) (int, string, []byte) {
	GinkgoHelper()
	cfg := fw.RESTConfig()
	hc, err := rest.HTTPClientFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	host := strings.TrimSuffix(cfg.Host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	ctx, cancel := context.WithTimeout(f.Ctx(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+strings.TrimSuffix(cfg.APIPath, "/")+path, nil)
	Expect(err).NotTo(HaveOccurred())
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := hc.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		_ = resp.Body.Close()
	}
	if err != nil {
		reason := "harness error, not a conformance failure: GET " + path + ": " + err.Error()
		AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.Errored, reason))
		Fail(reason)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), body
}

// requiredSchema has spec.size required, spec.note optional and spec.mode
// defaulted to "auto".
func requiredSchema() map[string]any {
	return fw.SpecSchema(map[string]any{
		"type":     "object",
		"required": []any{"size"},
		"properties": map[string]any{
			"size": map[string]any{"type": "integer"},
			"note": map[string]any{"type": "string"},
			"mode": map[string]any{"type": "string", "default": "auto"},
		},
	})
}

// constrainedSchema has one constraint of each kind on spec: size within
// 1..10, mode one of auto and manual, name of at most 5 lower-case letters,
// at most 2 tags, email an email address.
func constrainedSchema() map[string]any {
	return fw.SpecSchema(map[string]any{
		"type": "object",
		"properties": map[string]any{
			"size":  map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
			"mode":  map[string]any{"type": "string", "enum": []any{"auto", "manual"}},
			"name":  map[string]any{"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
			"tags":  map[string]any{"type": "array", "maxItems": 2, "items": map[string]any{"type": "string"}},
			"email": map[string]any{"type": "string", "format": "email"},
		},
	})
}

var _ = Describe("Required fields, defaults and the default serialization", fw.Area(area), func() {
	f := fw.New(area)

	It("refuses a custom resource without its required field and accepts one without an optional field", fw.Req("RES-REQUIRED-FIELD"), func() {
		crd := f.CreateCRD(fw.CRDOptions{Versions: []fw.CRDVersion{{Name: "v1", Served: true, Storage: true, Schema: requiredSchema()}}})
		r := f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", f.Name("w"), map[string]any{"note": "no size"}))
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("spec.size"), "%s", r)
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueRequired"), "%s", r)

		name := f.Name("w")
		ok := crd.Create("v1", name, map[string]any{"size": 1})
		Expect(ok.Code).To(Equal(http.StatusCreated), "note is optional: %s", ok)
		// An update that drops the required field is refused too.
		put := crd.Object("v1", name, map[string]any{"note": "dropped size"})
		fw.SetMeta(put, "resourceVersion", ok.Str("metadata.resourceVersion"))
		fw.ExpectStatus(f.Put(crd.Path("v1", name), put), http.StatusUnprocessableEntity, "Invalid")
	})

	It("shows defaults in the create answer and in later reads", fw.Req("RES-DEFAULTS-VISIBLE"), func() {
		crd := f.CreateCRD(fw.CRDOptions{Versions: []fw.CRDVersion{{Name: "v1", Served: true, Storage: true, Schema: requiredSchema()}}})
		name := f.Name("w")
		r := crd.Create("v1", name, map[string]any{"size": 1})
		Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
		Expect(r.Str("spec.mode")).To(Equal("auto"), "the create answer carries the default: %s", r)
		got := f.Get(crd.Path("v1", name))
		Expect(got.Str("spec.mode")).To(Equal("auto"), "a later GET carries the default: %s", got)
		// A value the client sets is not overwritten by the default.
		explicit := crd.Create("v1", f.Name("w"), map[string]any{"size": 1, "mode": "manual"})
		Expect(explicit.Str("spec.mode")).To(Equal("manual"), "%s", explicit)
	})

	It("treats a null field as unset: the default, or nothing", fw.Req("RES-DEFAULT-NULL"), func() {
		crd := f.CreateCRD(fw.CRDOptions{Versions: []fw.CRDVersion{{Name: "v1", Served: true, Storage: true, Schema: requiredSchema()}}})
		name := f.Name("n")
		r := f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", name, map[string]any{"size": 1, "mode": nil, "note": nil}))
		Expect(r.Code).To(Equal(http.StatusCreated), "a null field is no type error: %s", r)
		expectNullsUnset := func(what string, r *fw.Response) {
			Expect(r.Str("spec.mode")).To(Equal("auto"), "%s: mode sent as null gets its default: %s", what, r)
			Expect(r.JSON("spec.note").Exists()).To(BeFalse(), "%s: note sent as null, with no default, is left out: %s", what, r)
			Expect(r.JSON("spec.size").Int()).To(Equal(int64(1)), "%s: %s", what, r)
		}
		expectNullsUnset("create answer", r)
		expectNullsUnset("later GET", f.Get(crd.Path("v1", name)))
		// An update that sends mode as null puts the default back.
		put := crd.Object("v1", name, map[string]any{"size": 1, "mode": "manual"})
		fw.SetMeta(put, "resourceVersion", r.Str("metadata.resourceVersion"))
		manual := f.Put(crd.Path("v1", name), put)
		Expect(manual.Code).To(Equal(http.StatusOK), "%s", manual)
		Expect(manual.Str("spec.mode")).To(Equal("manual"), "%s", manual)
		put = crd.Object("v1", name, map[string]any{"size": 1, "mode": nil, "note": nil})
		fw.SetMeta(put, "resourceVersion", manual.Str("metadata.resourceVersion"))
		again := f.Put(crd.Path("v1", name), put)
		Expect(again.Code).To(Equal(http.StatusOK), "%s", again)
		expectNullsUnset("update answer", again)
	})

	It("refuses a custom resource that breaks its schema's constraints, one cause per broken constraint", fw.Req("RES-SCHEMA-CONSTRAINTS"), func() {
		crd := f.CreateCRD(fw.CRDOptions{Versions: []fw.CRDVersion{{Name: "v1", Served: true, Storage: true, Schema: constrainedSchema()}}})
		ok := crd.Create("v1", f.Name("c"), map[string]any{"size": 10, "mode": "manual", "name": "abcde", "tags": []any{"a", "b"}, "email": "a@example.com"})
		Expect(ok.Code).To(Equal(http.StatusCreated), "an object within every constraint: %s", ok)
		type cause struct{ field, reason string }
		for _, tc := range []struct {
			what string
			spec map[string]any
			want []cause
		}{
			{"below minimum", map[string]any{"size": 0}, []cause{{"spec.size", "FieldValueInvalid"}}},
			{"above maximum", map[string]any{"size": 11}, []cause{{"spec.size", "FieldValueInvalid"}}},
			{"not in enum", map[string]any{"size": 3, "mode": "other"}, []cause{{"spec.mode", "FieldValueNotSupported"}}},
			{"over maxLength", map[string]any{"size": 3, "name": "abcdefg"}, []cause{{"spec.name", "FieldValueTooLong"}}},
			{"not matching pattern", map[string]any{"size": 3, "name": "ab1"}, []cause{{"spec.name", "FieldValueInvalid"}}},
			{"over maxItems", map[string]any{"size": 3, "tags": []any{"a", "b", "c"}}, []cause{{"spec.tags", "FieldValueTooMany"}}},
			{"not an email", map[string]any{"size": 3, "email": "not-an-email"}, []cause{{"spec.email", "FieldValueTypeInvalid"}}},
			{"three at once", map[string]any{"size": 11, "mode": "other", "tags": []any{"a", "b", "c"}},
				[]cause{{"spec.size", "FieldValueInvalid"}, {"spec.mode", "FieldValueNotSupported"}, {"spec.tags", "FieldValueTooMany"}}},
		} {
			r := f.Post(crd.ListPath("v1", f.Namespace), crd.Object("v1", f.Name("c"), tc.spec))
			fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
			var got []cause
			for _, c := range r.JSON("details.causes").Array() {
				Expect(c.Get("message").String()).NotTo(BeEmpty(), "%s: %s", tc.what, r)
				got = append(got, cause{c.Get("field").String(), c.Get("reason").String()})
			}
			Expect(got).To(ConsistOf(tc.want), "%s: %s", tc.what, r)
		}
		// An update is held to the same constraints.
		put := crd.Object("v1", ok.Str("metadata.name"), map[string]any{"size": 0})
		fw.SetMeta(put, "resourceVersion", ok.Str("metadata.resourceVersion"))
		r := f.Put(crd.Path("v1", ok.Str("metadata.name")), put)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("spec.size"), "%s", r)
	})

	It("answers JSON when the request names no Accept type", fw.Req("RES-JSON-DEFAULT"), func() {
		name := f.Name("j")
		f.CreateConfigMap(name, nil)
		// The framework's client always names a type, so this goes out on
		// the target's own transport: once without Accept, once with */*.
		for _, accept := range []string{"", "*/*"} {
			code, ct, body := getNaming(f, f.ConfigMapPath(name), accept)
			Expect(code).To(Equal(http.StatusOK), "Accept %q: %s", accept, body)
			Expect(ct).To(HavePrefix("application/json"), "Accept %q: %s", accept, body)
			var o struct{ Metadata struct{ Name string } }
			Expect(json.Unmarshal(body, &o)).To(Succeed(), "Accept %q: the body parses as JSON: %s", accept, body)
			Expect(o.Metadata.Name).To(Equal(name))
		}
	})
})

var _ = Describe("Resource types and object shape", fw.Area(area), func() {
	f := fw.New(area)

	It("names resource types in discovery with their kind and scope", fw.Req("RES-DISCOVERY-RESOURCE-NAMES"), func() {
		r := f.Get("/api/v1")
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		for name, want := range map[string]struct {
			kind       string
			namespaced bool
		}{"configmaps": {"ConfigMap", true}, "namespaces": {"Namespace", false}} {
			res := r.JSON(`resources.#(name=="` + name + `")`)
			Expect(res.Exists()).To(BeTrue(), "discovery lists %s: %s", name, r)
			Expect(res.Get("kind").String()).To(Equal(want.kind), name)
			Expect(res.Get("namespaced").Bool()).To(Equal(want.namespaced), name)
		}
	})

	It("puts kind and apiVersion on objects, lists, Status answers and watch event objects", fw.Req("RES-KIND-APIVERSION"), func() {
		name := f.Name("k")
		rv := f.ListConfigMaps().Str("metadata.resourceVersion")
		w := f.Watch(f.ConfigMapsPath(), fw.Query("resourceVersion", rv))
		defer w.Close()
		for what, r := range map[string]*fw.Response{
			"create answer": f.CreateConfigMap(name, nil),
			"get":           f.GetConfigMap(name),
			"list":          f.ListConfigMaps(),
			"error Status":  f.GetConfigMap(name + "-missing"),
		} {
			Expect(r.Str("kind")).NotTo(BeEmpty(), "%s: %s", what, r)
			Expect(r.Str("apiVersion")).NotTo(BeEmpty(), "%s: %s", what, r)
		}
		ev, err := w.Next(10 * time.Second)
		Expect(err).NotTo(HaveOccurred())
		Expect(ev.Object.Get("kind").String()).To(Equal("ConfigMap"))
		Expect(ev.Object.Get("apiVersion").String()).To(Equal("v1"))
	})

	It("streams changes for GET with watch=true or watch=1", fw.Req("RES-WATCH-PARAM"), func() {
		for _, v := range []string{"true", "1"} {
			rv := f.ListConfigMaps().Str("metadata.resourceVersion")
			w := f.Watch(f.ConfigMapsPath(), fw.Query("watch", v), fw.Query("resourceVersion", rv))
			name := f.Name("w")
			f.CreateConfigMap(name, nil)
			ev, err := w.Next(10 * time.Second)
			w.Close()
			Expect(err).NotTo(HaveOccurred(), "watch=%s", v)
			Expect(ev.Type).To(Equal("ADDED"), "watch=%s", v)
			Expect(ev.Object.Get("metadata.name").String()).To(Equal(name), "watch=%s", v)
		}
	})

	It("answers every error with a Status whose code is the HTTP status", fw.Req("RES-ERROR-STATUS-CODE"), func() {
		name := f.Name("e")
		f.CreateConfigMap(name, nil)
		for what, r := range map[string]*fw.Response{
			"400": f.Get(f.ConfigMapsPath(), fw.Query("labelSelector", "a===b")),
			"404": f.GetConfigMap(name + "-missing"),
			"405": f.Put(f.ConfigMapsPath(), fw.ConfigMap(name, nil)),
			"409": f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, nil)),
			"422": f.Post(f.ConfigMapsPath(), fw.ConfigMap("Bad_Name", nil)),
		} {
			Expect(r.Code).To(BeNumerically(">=", 400), "%s: %s", what, r)
			Expect(r.Str("kind")).To(Equal("Status"), "%s: %s", what, r)
			Expect(r.Str("status")).To(Equal("Failure"), "%s: %s", what, r)
			Expect(r.Int("code")).To(BeEquivalentTo(r.Code), "%s: %s", what, r)
			Expect(what).To(Equal(strconv.Itoa(r.Code)), "%s provoked %d: %s", what, r.Code, r)
		}
	})

	It("answers validation errors with reason Invalid, one cause per field, stated with must", fw.Req("RES-VALIDATION-FAILURE"), func() {
		body := fw.ConfigMap(f.Name("v"), nil)
		fw.SetMeta(body, "labels", map[string]string{"k": strings.Repeat("v", 64)})
		fw.SetMeta(body, "annotations", map[string]string{"bad key!": "v"})
		r := f.Post(f.ConfigMapsPath(), body)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("status")).To(Equal("Failure"))
		var fields []string
		for _, c := range r.JSON("details.causes").Array() {
			fields = append(fields, c.Get("field").String())
			Expect(c.Get("message").String()).To(ContainSubstring("must"), "%s", r)
			Expect(c.Get("message").String()).NotTo(ContainSubstring("should"), "%s", r)
		}
		Expect(fields).To(ContainElements(HavePrefix("metadata.labels"), HavePrefix("metadata.annotations")), "%s", r)
	})
})

var _ = Describe("resourceVersion parameters", fw.Area(area), func() {
	f := fw.New(area)

	It("refuses an unsupported resourceVersionMatch", fw.Req("RES-RV-MATCH-UNSUPPORTED"), func() {
		rv := f.CreateConfigMap(f.Name("m"), nil).Str("metadata.resourceVersion")
		r := f.Get(f.ConfigMapsPath(), fw.Query("resourceVersion", rv), fw.Query("resourceVersionMatch", "Bogus"))
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.field")).To(Equal("resourceVersionMatch"), "%s", r)
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueNotSupported"), "%s", r)
	})

	It("refuses a list at a resourceVersion it cannot parse", fw.Req("RES-RV-MALFORMED-LIST"), func() {
		f.CreateConfigMap(f.Name("m"), nil)
		for _, rv := range []string{"abc", "-1"} {
			fw.ExpectStatus(f.Get(f.ConfigMapsPath(), fw.Query("resourceVersion", rv)), http.StatusBadRequest, "BadRequest")
		}
	})
})

var _ = Describe("Strategic merge patch directives", fw.Area(area), func() {
	f := fw.New(area)
	var name string

	// A configmap whose metadata has a merged primitive list (finalizers) and
	// a list of maps with a merge key (ownerReferences, keyed by uid).
	BeforeEach(func() {
		name = f.Name("smp")
		body := fw.ConfigMap(name, map[string]string{"a": "1", "b": "2"})
		fw.SetMeta(body, "finalizers", []string{"apiconform.test/x", "apiconform.test/y", "apiconform.test/z"})
		fw.SetMeta(body, "ownerReferences", []map[string]string{
			{"apiVersion": "v1", "kind": "ConfigMap", "name": "o1", "uid": "00000000-0000-0000-0000-000000000001"},
			{"apiVersion": "v1", "kind": "ConfigMap", "name": "o2", "uid": "00000000-0000-0000-0000-000000000002"},
		})
		Expect(f.Post(f.ConfigMapsPath(), body).Code).To(Equal(http.StatusCreated))
		DeferCleanup(func() { f.Patch(f.ConfigMapPath(name), fw.MergePatch, `{"metadata":{"finalizers":null}}`) })
	})
	smp := func(patch string) *fw.Response {
		r := f.Patch(f.ConfigMapPath(name), fw.StrategicMergePatch, patch)
		Expect(r.Code).To(Equal(http.StatusOK), "%s", r)
		return r
	}
	listOf := func(r *fw.Response, path string) []string {
		var out []string
		for _, v := range r.JSON(path).Array() {
			out = append(out, v.String())
		}
		return out
	}

	It("merges items into a list with merge strategy", fw.Req("RES-SMP-MERGE-PRIMITIVE-LIST"), func() {
		r := smp(`{"metadata":{"finalizers":["apiconform.test/w"]}}`)
		Expect(listOf(r, "metadata.finalizers")).To(ConsistOf("apiconform.test/w", "apiconform.test/x", "apiconform.test/y", "apiconform.test/z"))
	})

	It("deletes the named items with $deleteFromPrimitiveList", fw.Req("RES-SMP-DELETE-FROM-PRIMITIVE-LIST"), func() {
		r := smp(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["apiconform.test/y"]}}`)
		Expect(listOf(r, "metadata.finalizers")).To(Equal([]string{"apiconform.test/x", "apiconform.test/z"}))
	})

	It("orders a merged list with $setElementOrder", fw.Req("RES-SMP-SET-ELEMENT-ORDER"), func() {
		r := smp(`{"metadata":{"$setElementOrder/finalizers":["apiconform.test/z","apiconform.test/x","apiconform.test/y"]}}`)
		Expect(listOf(r, "metadata.finalizers")).To(Equal([]string{"apiconform.test/z", "apiconform.test/x", "apiconform.test/y"}))
	})

	It("deletes a list item by its merge key with $patch: delete", fw.Req("RES-SMP-DELETE-BY-KEY"), func() {
		r := smp(`{"metadata":{"ownerReferences":[{"uid":"00000000-0000-0000-0000-000000000001","$patch":"delete"}]}}`)
		Expect(listOf(r, "metadata.ownerReferences.#.name")).To(Equal([]string{"o2"}))
	})

	It("replaces a whole map with $patch: replace", fw.Req("RES-SMP-REPLACE-MAP"), func() {
		r := smp(`{"data":{"$patch":"replace","c":"3"}}`)
		Expect(r.JSON("data").Map()).To(HaveLen(1), "%s", r)
		Expect(r.Str("data.c")).To(Equal("3"))
	})
})

var _ = Describe("Size limits", fw.Area(area), func() {
	f := fw.New(area)
	const mib = 1 << 20

	It("refuses a ConfigMap or Secret over 1 MiB and accepts one at the limit", fw.Req("RES-DATA-SIZE-LIMIT"), func() {
		at := f.Post(f.ConfigMapsPath(), fw.ConfigMap(f.Name("at"), map[string]string{"k": strings.Repeat("x", mib)}))
		Expect(at.Code).To(Equal(http.StatusCreated), "exactly 1 MiB of values is allowed: %d", at.Code)

		// Over the limit only together: each map alone is under it.
		over := fw.ConfigMap(f.Name("over"), map[string]string{"k": strings.Repeat("x", mib/2+1)})
		over["binaryData"] = map[string]string{"b": base64.StdEncoding.EncodeToString(make([]byte, mib/2))}
		r := f.Post(f.ConfigMapsPath(), over)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueTooLong"), "%s", r.Str("message"))

		secret := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": f.Name("s")},
			"data": map[string]string{"k": base64.StdEncoding.EncodeToString(make([]byte, mib+1))}}
		r = f.Post("/api/v1/namespaces/"+f.Namespace+"/secrets", secret)
		fw.ExpectStatus(r, http.StatusUnprocessableEntity, "Invalid")
		Expect(r.Str("details.causes.0.reason")).To(Equal("FieldValueTooLong"), "%s", r.Str("message"))
	})
})
