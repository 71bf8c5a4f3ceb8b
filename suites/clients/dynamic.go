package clients

import (
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/openapi3"
	"k8s.io/client-go/restmapper"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("dynamic client", fw.Area(area), func() {
	f := fw.New(area)

	It("applies server-side, reports a conflicting manager and forces", fw.Req("CLIENT-DYNAMIC-SSA"), func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		ri := dynamicClient().Resource(gvrOf(crd, "v1")).Namespace(f.Namespace)
		name := f.Name("ssa")
		intent := func(spec map[string]any) *unstructured.Unstructured {
			return &unstructured.Unstructured{Object: crd.Object("v1", name, spec)}
		}

		got, err := ri.Apply(f.Ctx(), name, intent(map[string]any{"replicas": int64(1), "color": "red"}), metav1.ApplyOptions{FieldManager: "alice"})
		Expect(err).NotTo(HaveOccurred(), "alice's first apply creates the object")
		Expect(got.Object["spec"]).To(Equal(map[string]any{"replicas": int64(1), "color": "red"}))
		Expect(managers(got)).To(ContainElement("alice/Apply"))

		_, conflict := ri.Apply(f.Ctx(), name, intent(map[string]any{"color": "blue"}), metav1.ApplyOptions{FieldManager: "bob"})
		Expect(apierrors.IsConflict(conflict)).To(BeTrue(), "bob's apply of a field alice owns is a 409 Conflict: %v", conflict)
		Expect(conflict.Error()).To(And(ContainSubstring(".spec.color"), ContainSubstring("alice")), "the conflict names the field and its manager")

		got, err = ri.Apply(f.Ctx(), name, intent(map[string]any{"color": "blue"}), metav1.ApplyOptions{FieldManager: "bob", Force: true})
		Expect(err).NotTo(HaveOccurred(), "bob forces")
		Expect(got.Object["spec"]).To(Equal(map[string]any{"replicas": int64(1), "color": "blue"}))
		Expect(managers(got)).To(ContainElements("alice/Apply", "bob/Apply"))
		fw.Record("conflict", "%v", conflict)
	})
})

var _ = Describe("discovery and RESTMapper", fw.Area(area), func() {
	f := fw.New(area)

	It("map every served kind to its resource and find a new CRD after a reset", fw.Req("CLIENT-DISCOVERY-RESTMAPPER"), func() {
		dc, err := discovery.NewDiscoveryClientForConfig(fw.RESTConfig())
		Expect(err).NotTo(HaveOccurred())
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))

		_, lists, err := dc.ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred(), "discovery")
		var wrong []string
		n := 0
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			Expect(err).NotTo(HaveOccurred())
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") {
					continue
				}
				n++
				m, err := mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: r.Kind}, gv.Version)
				switch {
				case err != nil:
					wrong = append(wrong, gv.WithKind(r.Kind).String()+": "+err.Error())
				case m.Resource != gv.WithResource(r.Name):
					wrong = append(wrong, gv.WithKind(r.Kind).String()+" -> "+m.Resource.String())
				case (m.Scope.Name() == meta.RESTScopeNameNamespace) != r.Namespaced:
					wrong = append(wrong, gv.WithKind(r.Kind).String()+": scope "+string(m.Scope.Name()))
				}
			}
		}
		Expect(n).To(BeNumerically(">", 0))
		Expect(wrong).To(BeEmpty(), "kinds the RESTMapper does not map as discovery lists them")
		// Configmaps live in namespaces (every area creates them in one), so
		// the mapper must scope them so.
		cm, err := mapper.RESTMapping(schema.GroupKind{Kind: "ConfigMap"}, "v1")
		Expect(err).NotTo(HaveOccurred(), "map ConfigMap")
		Expect(cm.Scope.Name()).To(Equal(meta.RESTScopeNameNamespace), "ConfigMap's scope as discovery makes the RESTMapper see it")

		crd := f.CreateCRD(fw.CRDOptions{Kind: "Gadget"})
		gk := schema.GroupKind{Group: crd.Group, Kind: "Gadget"}
		_, stale := mapper.RESTMapping(gk, "v1")
		mapper.Reset()
		m, err := mapper.RESTMapping(gk, "v1")
		Expect(err).NotTo(HaveOccurred(), "after Reset the new CRD's kind maps")
		Expect(m.Resource).To(Equal(gvrOf(crd, "v1")))
		Expect(m.Scope.Name()).To(Equal(meta.RESTScopeNameNamespace), "the namespaced CRD's scope")
		fw.Record("mapper", "%d kinds mapped; the new CRD before Reset: %v", n, stale)
	})
})

var _ = Describe("OpenAPI v3 client", fw.Area(area), func() {
	fw.New(area)

	It("resolves a schema with x-kubernetes-group-version-kind for every served kind", fw.Req("CLIENT-OPENAPI-V3"), func() {
		dc, err := discovery.NewDiscoveryClientForConfig(fw.RESTConfig())
		Expect(err).NotTo(HaveOccurred())
		// A CRD another spec is creating or deleting can be in discovery and
		// not (yet, or any more) in /openapi/v3: only gaps that last count.
		var missing []string
		kinds := 0
		fw.PollUntil(convergeBudget, 500*time.Millisecond, func() bool {
			missing, kinds = openAPIGaps(dc)
			return len(missing) == 0
		})
		Expect(missing).To(BeEmpty(), "served kinds without a schema in /openapi/v3 (for %s)", convergeBudget)
		fw.Record("kinds", "%d served kinds resolved", kinds)
	})
})

// openAPIGaps lists the kinds discovery serves that client-go's OpenAPI v3
// client finds no schema with their x-kubernetes-group-version-kind for,
// reading both afresh, and counts the kinds.
func openAPIGaps(dc *discovery.DiscoveryClient) (missing []string, kinds int) {
	root := openapi3.NewRoot(dc.OpenAPIV3())
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil {
		return []string{"discovery: " + err.Error()}, 0
	}
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			missing = append(missing, err.Error())
			continue
		}
		spec, err := root.GVSpec(gv)
		if err != nil {
			missing = append(missing, gv.String()+": "+err.Error())
			continue
		}
		have := map[schema.GroupVersionKind]bool{}
		if spec.Components != nil {
			for _, s := range spec.Components.Schemas {
				for _, gvk := range gvksOf(s.Extensions["x-kubernetes-group-version-kind"]) {
					have[gvk] = true
				}
			}
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			kinds++
			if gvk := gv.WithKind(r.Kind); !have[gvk] {
				missing = append(missing, gvk.String())
			}
		}
	}
	slices.Sort(missing)
	return missing, kinds
}

// gvksOf reads an x-kubernetes-group-version-kind extension value.
func gvksOf(v any) []schema.GroupVersionKind {
	list, _ := v.([]any)
	var out []schema.GroupVersionKind
	for _, e := range list {
		m, _ := e.(map[string]any)
		g, _ := m["group"].(string)
		ver, _ := m["version"].(string)
		k, _ := m["kind"].(string)
		out = append(out, schema.GroupVersionKind{Group: g, Version: ver, Kind: k})
	}
	return out
}

// managers lists an object's field managers as manager/operation.
func managers(u *unstructured.Unstructured) []string {
	var out []string
	for _, m := range u.GetManagedFields() {
		out = append(out, m.Manager+"/"+string(m.Operation))
	}
	return out
}
