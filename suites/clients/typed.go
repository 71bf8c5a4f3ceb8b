package clients

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apiextensionsinformers "k8s.io/apiextensions-apiserver/pkg/client/informers/externalversions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	fw "github.com/apiconform/apiconform/suites/framework"
)

const protobuf = "application/vnd.kubernetes.protobuf"

var _ = Describe("typed clientsets", fw.Area(area), func() {
	f := fw.New(area)

	It("list and watch every served built-in resource with their default (protobuf) content types", fw.Req("CLIENT-TYPED-PROTOBUF"), func() {
		cfg, log := contentTypeConfig()
		cs, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		ext, err := apiextensionsclient.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		// Namespaced resources in the spec's namespace only: a large cluster's
		// pods or events are not this spec's business.
		core := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(f.Namespace))
		extf := apiextensionsinformers.NewSharedInformerFactory(ext, 0)

		_, lists, err := cs.Discovery().ServerGroupsAndResources()
		Expect(err).NotTo(HaveOccurred(), "discovery")
		var builtins []schema.GroupVersionResource
		namespaced := map[schema.GroupVersionResource]bool{}
		var notInFactory []string
		for _, l := range lists {
			gv, err := schema.ParseGroupVersion(l.GroupVersion)
			Expect(err).NotTo(HaveOccurred())
			for _, r := range l.APIResources {
				if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
					continue
				}
				gvr := gv.WithResource(r.Name)
				namespaced[gvr] = r.Namespaced
				if _, err := core.ForResource(gvr); err == nil {
					builtins = append(builtins, gvr)
				} else if _, err := extf.ForResource(gvr); err == nil {
					builtins = append(builtins, gvr)
				} else if isBuiltinGroup(gv.Group) {
					notInFactory = append(notInFactory, gvr.String())
				}
			}
		}
		Expect(builtins).NotTo(BeEmpty(), "discovery lists no built-in resource client-go has a typed client for")

		ctx, cancel := context.WithCancel(quietCtx(f.Ctx()))
		DeferCleanup(func() { cancel(); core.Shutdown(); extf.Shutdown() })
		core.Start(ctx.Done())
		extf.Start(ctx.Done())
		synced, stop := context.WithTimeout(ctx, convergeBudget)
		defer stop()
		var unsynced []string
		for t, ok := range core.WaitForCacheSync(synced.Done()) {
			if !ok {
				unsynced = append(unsynced, t.String())
			}
		}
		for t, ok := range extf.WaitForCacheSync(synced.Done()) {
			if !ok {
				unsynced = append(unsynced, t.String())
			}
		}
		Expect(unsynced).To(BeEmpty(), "informers over typed clients that did not sync within %s", convergeBudget)

		// Every built-in answered its typed client in protobuf (list or watch).
		var notProto []string
		for _, gvr := range builtins {
			path := collectionPath(gvr, "")
			if namespaced[gvr] {
				path = collectionPath(gvr, f.Namespace)
			}
			ans := log.answers(path)
			if !slices.ContainsFunc(ans, func(a ctAnswer) bool { return a.code == http.StatusOK && strings.HasPrefix(a.contentType, protobuf) }) {
				notProto = append(notProto, fmt.Sprintf("%s: %v", gvr, ans))
			}
		}
		Expect(notProto).To(BeEmpty(), "built-in resources that did not answer a protobuf-preferring client in protobuf")
		fw.Record("resources", "%d built-in resources listed and watched over protobuf (namespaced ones in %s); served but without a client-go informer: %v",
			len(builtins), f.Namespace, notInFactory)
	})

	It("write configmaps, secrets and CRDs in protobuf", fw.Req("CLIENT-TYPED-PROTOBUF"), func() {
		cfg, log := contentTypeConfig()
		cs, err := kubernetes.NewForConfig(cfg)
		Expect(err).NotTo(HaveOccurred())
		ctx, ns := f.Ctx(), f.Namespace

		cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: f.Name("pb")},
			Data: map[string]string{"k": "v1"}}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "create a configmap")
		cm.Data["k"] = "v2"
		cm, err = cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{})
		Expect(err).NotTo(HaveOccurred(), "update it")
		got, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, cm.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred(), "get it")
		Expect(got.Data).To(Equal(map[string]string{"k": "v2"}))
		Expect(got.ResourceVersion).To(Equal(cm.ResourceVersion))

		sec, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: f.Name("pb")},
			Data: map[string][]byte{"b": {0, 1, 2, 255}}, Type: corev1.SecretTypeOpaque}, metav1.CreateOptions{})
		Expect(err).NotTo(HaveOccurred(), "create a secret")
		gotSec, err := cs.CoreV1().Secrets(ns).Get(ctx, sec.Name, metav1.GetOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(gotSec.Data).To(Equal(map[string][]byte{"b": {0, 1, 2, 255}}), "binary data round trip")
		Expect(cs.CoreV1().ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{})).To(Succeed())

		if fw.Caps().CRDs {
			ext, err := apiextensionsclient.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			group := strings.TrimPrefix(f.Name("pb"), "pb-") + ".apiconform.test"
			crd := &apiextensionsv1.CustomResourceDefinition{
				ObjectMeta: metav1.ObjectMeta{Name: "things." + group},
				Spec: apiextensionsv1.CustomResourceDefinitionSpec{Group: group, Scope: apiextensionsv1.NamespaceScoped,
					Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "things", Singular: "thing", Kind: "Thing", ListKind: "ThingList"},
					Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1", Served: true, Storage: true,
						Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{Type: "object",
							Properties: map[string]apiextensionsv1.JSONSchemaProps{"spec": {Type: "object",
								Properties: map[string]apiextensionsv1.JSONSchemaProps{"size": {Type: "integer"}}}}}}}}},
			}
			created, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred(), "create a CRD")
			DeferCleanup(func() {
				_ = ext.ApiextensionsV1().CustomResourceDefinitions().Delete(context.Background(), crd.Name, metav1.DeleteOptions{})
			})
			Expect(created.Spec.Names.Kind).To(Equal("Thing"))
			Expect(created.UID).NotTo(BeEmpty())
		}

		var bad []string
		for _, a := range log.all() {
			if a.method == http.MethodGet && a.code == http.StatusOK && !strings.HasPrefix(a.contentType, protobuf) {
				bad = append(bad, a.String())
			}
			if (a.method == http.MethodPost || a.method == http.MethodPut) && (!strings.HasPrefix(a.requestType, protobuf) || !strings.HasPrefix(a.contentType, protobuf)) {
				bad = append(bad, a.String())
			}
		}
		Expect(bad).To(BeEmpty(), "typed-client exchanges not in protobuf")
		fw.Record("exchanges", "%v", log.all())
	})
})

// isBuiltinGroup tells whether a group is served by kube-apiserver itself
// (no dot, or a k8s.io group), as opposed to CRDs and aggregated APIs.
func isBuiltinGroup(g string) bool {
	return g == "" || !strings.Contains(g, ".") || strings.HasSuffix(g, ".k8s.io")
}

// collectionPath is the URL path of a collection, in namespace ns when set.
func collectionPath(gvr schema.GroupVersionResource, ns string) string {
	prefix := "/apis/" + gvr.Group + "/" + gvr.Version
	if gvr.Group == "" {
		prefix = "/api/" + gvr.Version
	}
	if ns != "" {
		prefix += "/namespaces/" + ns
	}
	return prefix + "/" + gvr.Resource
}

// ctAnswer is one exchange as content negotiation saw it.
type ctAnswer struct {
	method, path, requestType, contentType string
	code                                   int
}

func (a ctAnswer) String() string {
	return fmt.Sprintf("%s %s [%s] -> %d [%s]", a.method, a.path, a.requestType, a.code, a.contentType)
}

// ctLog records the content types of client-go's requests and answers.
type ctLog struct {
	mu  sync.Mutex
	log []ctAnswer
}

func (l *ctLog) all() []ctAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

func (l *ctLog) answers(path string) []ctAnswer {
	var out []ctAnswer
	for _, a := range l.all() {
		if a.path == path {
			out = append(out, a)
		}
	}
	return out
}

type ctTransport struct {
	next http.RoundTripper
	log  *ctLog
}

func (t ctTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	a := ctAnswer{method: req.Method, path: req.URL.Path, requestType: req.Header.Get("Content-Type")}
	if err == nil {
		a.code, a.contentType = resp.StatusCode, resp.Header.Get("Content-Type")
	}
	t.log.mu.Lock()
	t.log.log = append(t.log.log, a)
	t.log.mu.Unlock()
	return resp, err
}

// contentTypeConfig is the target's config, content types left to each
// client's defaults, logging what was sent and answered.
func contentTypeConfig() (*rest.Config, *ctLog) {
	cfg := fw.RESTConfig()
	log := &ctLog{}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return ctTransport{next: rt, log: log} })
	return cfg, log
}
