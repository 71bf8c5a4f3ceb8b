package clients

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("Reflector", fw.Area(area), func() {
	f := fw.New(area)

	It("relists after 410 Gone and converges to the server's state", fw.Req("CLIENT-REFLECTOR-RELIST-410"), fw.CompactsHistory, func() {
		crd := f.CreateCRD(fw.CRDOptions{})
		ri := dynamicClient().Resource(gvrOf(crd, "v1")).Namespace(f.Namespace)
		var names []string
		for i := 0; i < 3; i++ {
			names = append(names, f.Name("w"))
			crd.Create("v1", names[i], map[string]any{"replicas": i})
		}
		// LIST + WATCH, so the relist is a plain list to look for; the streaming
		// path relists the same way after a 410.
		lw := resourceLW(ri)
		lw.noWatchList = true
		store := cache.NewStore(cache.MetaNamespaceKeyFunc)
		// A short backoff: client-go's default waits 0.8–1.6 s before the
		// relist, which only slows the spec down.
		r := cache.NewReflectorWithOptions(lw, &unstructured.Unstructured{}, store, cache.ReflectorOptions{Name: "apiconform-clients",
			Backoff: &wait.Backoff{Duration: 50 * time.Millisecond, Factor: 2, Jitter: 0.5, Steps: 5, Cap: time.Second}})
		go r.RunWithContext(runCtx(f))
		expectConverges(store, listOf(ri))
		Eventually(lw.Calls).WithTimeout(convergeBudget).Should(ContainElement(HaveField("Watch", true)), "the reflector never watched")

		// The connection drops; while the reflector waits to watch again, the
		// collection changes and the history after its resourceVersion goes.
		release := lw.HoldAndCut()
		held := r.LastSyncResourceVersion()
		crd.Create("v1", f.Name("later"), nil)
		Expect(f.Patch(crd.Path("v1", names[0]), fw.MergePatch, `{"spec":{"replicas":10}}`).Code).To(Equal(http.StatusOK))
		Expect(f.Delete(crd.Path("v1", names[1]), nil).Code).To(Equal(http.StatusOK))
		how := expireWatchHistory(f, crd, crd.ListPath("v1", f.Namespace), held)
		before := len(lw.Calls())
		release()

		Eventually(func() []*metav1.Status { return lw.Errors() }).WithTimeout(convergeBudget).Should(ContainElement(Satisfy(isGone)),
			"the reflector's watch from %s got no 410 Gone it recognises; calls: %v; errors: %v", held, lw.Calls(), lw.Errors())
		Eventually(func() []lwCall { return lw.Calls()[before:] }).WithTimeout(convergeBudget).Should(ContainElement(HaveField("Watch", false)),
			"the reflector did not list again after 410 Gone")
		got := expectConverges(store, listOf(ri))
		fw.Record("relist", "history dropped by %s; the watch from %s ended with %q; calls after: %v; converged to %s",
			how, held, lw.Errors()[0].Message, lw.Calls()[before:], got)
	})
})

// resourceLW is a recording ListerWatcher over a dynamic resource.
func resourceLW(ri dynamic.ResourceInterface) *recordingLW {
	return &recordingLW{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return ri.Watch(ctx, o)
		},
	}
}

func listOf(ri dynamic.ResourceInterface) func() (runtime.Object, error) {
	return func() (runtime.Object, error) { return ri.List(context.Background(), metav1.ListOptions{}) }
}

// expireWatchHistory makes a watch of collection from rv answer 410 Gone and
// says how: the reference server compacts on request; on other targets the
// spec updates the CRD (kube-apiserver rebuilds the custom resource's watch
// cache at the current revision), then probes every 200ms within the
// framework's compaction budget, and skips when history outlives it.
func expireWatchHistory(f *fw.Framework, crd *fw.CRD, collection, rv string) string {
	if fw.Caps().RefServer {
		rev, err := fw.Compact(f.Ctx())
		Expect(err).NotTo(HaveOccurred())
		return fmt.Sprintf("the compaction hook (compacted to %d)", rev)
	}
	patch := fmt.Sprintf(`[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/description","value":"touched by apiconform %s"}]`, f.Name("t"))
	r := f.Patch("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+crd.Name, fw.JSONPatch, patch)
	Expect(r.Code).To(Equal(http.StatusOK), "update the CRD: %s", r)
	start := time.Now()
	budget := fw.CompactionWait()
	if !fw.PollUntil(budget, 200*time.Millisecond, func() bool { return watchGone(f, collection, rv) }) {
		Skip(fmt.Sprintf("a watch from resourceVersion %s was still served %s after a CRD update: the target keeps that history and has no compaction hook", rv, budget))
	}
	return fmt.Sprintf("a CRD update (410 after %s)", time.Since(start).Round(time.Millisecond))
}

// watchGone opens a short watch of collection from rv and reports whether
// the answer is 410 Gone, as an HTTP status or as the first event.
func watchGone(f *fw.Framework, collection, rv string) bool {
	q := url.Values{"resourceVersion": {rv}, "timeoutSeconds": {"2"}}
	w, err := fw.DefaultClient().OpenWatch(f.Ctx(), collection, q, 3*time.Second)
	if err != nil {
		return false
	}
	defer w.Close()
	if w.Code != http.StatusOK {
		return w.Code == http.StatusGone
	}
	ev, err := w.Next(3 * time.Second)
	return err == nil && ev.Type == "ERROR" && ev.Object.Get("code").Int() == http.StatusGone
}

// gvr of a test CRD version.
func gvrOf(crd *fw.CRD, version string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: crd.Group, Version: version, Resource: crd.Plural}
}
