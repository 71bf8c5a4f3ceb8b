package clients

import (
	"context"
	"fmt"
	"maps"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("SharedInformer", fw.Area(area), func() {
	f := fw.New(area)

	It("with WatchList off lists, watches from the list's resourceVersion and follows every change", fw.Req("CLIENT-INFORMER-LIST-WATCH"), func() {
		cs := typedClient()
		initial := seedConfigMaps(f, 3)
		lw := configMapLW(cs, f.Namespace)
		lw.noWatchList = true
		inf := startInformer(f, lw)

		Expect(stateOf(inf.GetStore().List())).To(Equal(initial), "the synced cache")
		calls := lw.Calls()
		Expect(calls).NotTo(BeEmpty())
		Expect(calls[0].Watch).To(BeFalse(), "the first call is a list: %v", calls)
		Expect(calls[0].ResultRV).NotTo(BeEmpty(), "the list carries the resourceVersion to watch from: %v", calls)
		for _, c := range calls {
			Expect(c.Opts.SendInitialEvents).To(BeNil(), "WatchList is off, yet the informer streamed: %v", calls)
		}
		Eventually(lw.Calls).WithTimeout(convergeBudget).Should(ContainElement(HaveField("Watch", true)), "the informer never watched")
		calls = lw.Calls()
		w := calls[watchIndex(calls)]
		Expect(w.Opts.ResourceVersion).To(Equal(calls[0].ResultRV), "the watch starts at the list's resourceVersion: %v", calls)
		Expect(w.Err).NotTo(HaveOccurred())

		churn(f, initial)
		got := expectConverges(inf.GetStore(), listConfigMaps(cs, f.Namespace))
		fw.Record("calls", "%v; converged to %s", lw.Calls(), got)
	})

	It("with WatchList on fills its cache from one stream that matches a list at the synced resourceVersion", fw.Req("CLIENT-INFORMER-WATCHLIST"), func() {
		fw.RequireSince("CLIENT-INFORMER-WATCHLIST")
		fw.RequireWatchList()
		if !clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
			Skip("client-go's WatchListClient gate is off in this process (KUBE_FEATURE_WatchListClient=false)")
		}
		cs := typedClient()
		initial := seedConfigMaps(f, 3)
		lw := configMapLW(cs, f.Namespace)
		inf := startInformer(f, lw)

		calls := lw.Calls()
		Expect(calls).NotTo(BeEmpty())
		first := calls[0]
		Expect(first.Watch).To(BeTrue(), "WatchList is on: the first call streams: %v", calls)
		Expect(first.Opts.SendInitialEvents).To(HaveValue(BeTrue()), "%v", calls)
		Expect(first.Opts.ResourceVersionMatch).To(Equal(metav1.ResourceVersionMatchNotOlderThan), "%v", calls)
		Expect(first.Err).NotTo(HaveOccurred())
		for _, c := range calls {
			Expect(c.Watch).To(BeTrue(), "the informer fell back to a list: %v", calls)
		}
		Expect(stateOf(inf.GetStore().List())).To(Equal(initial), "the synced cache")

		// client-go's data consistency detector: the stream's objects must equal
		// a list at the synced resourceVersion, object for object.
		rv := inf.LastSyncResourceVersion()
		Expect(rv).NotTo(BeEmpty())
		list, err := cs.CoreV1().ConfigMaps(f.Namespace).List(f.Ctx(), metav1.ListOptions{ResourceVersion: rv,
			ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			// The history at rv was compacted meanwhile (by another spec of
			// the run, or the server's own schedule), which the documents
			// allow: nothing has written to this namespace since the sync, so
			// its current list holds the same objects.
			fw.Record("consistency list", "the synced resourceVersion %s was compacted before the exact list (%v); compared with the current list", rv, err)
			list, err = cs.CoreV1().ConfigMaps(f.Namespace).List(f.Ctx(), metav1.ListOptions{})
		}
		Expect(err).NotTo(HaveOccurred(), "list at the synced resourceVersion %s", rv)
		var fromList, fromStream []runtime.Object
		for i := range list.Items {
			fromList = append(fromList, &list.Items[i])
		}
		for _, o := range inf.GetStore().List() {
			fromStream = append(fromStream, o.(runtime.Object))
		}
		Expect(sortedByUID(fromStream)).To(Equal(sortedByUID(fromList)), "streamed objects differ from the list at resourceVersion %s", rv)

		churn(f, initial)
		got := expectConverges(inf.GetStore(), listConfigMaps(cs, f.Namespace))
		fw.Record("calls", "%v; synced at %s; converged to %s", lw.Calls(), rv, got)
	})
})

// seedConfigMaps creates n configmaps and returns their state.
func seedConfigMaps(f *fw.Framework, n int) state {
	s := state{}
	for i := 0; i < n; i++ {
		o := f.CreateObj(f.Name("seed"), "v1", nil)
		s[o.Name] = o.RV
	}
	return s
}

// churn creates one configmap, updates one and deletes another of initial.
func churn(f *fw.Framework, initial state) {
	names := sortedKeys(initial)
	Expect(len(names)).To(BeNumerically(">=", 2))
	f.CreateObj(f.Name("later"), "v1", nil)
	f.SetObj(names[0], "v2")
	f.DeleteObj(names[1])
}

func sortedKeys(s state) []string {
	return slices.Sorted(maps.Keys(s))
}

func configMapLW(cs kubernetes.Interface, ns string) *recordingLW {
	return &recordingLW{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return cs.CoreV1().ConfigMaps(ns).List(ctx, o)
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		},
	}
}

func listConfigMaps(cs kubernetes.Interface, ns string) func() (runtime.Object, error) {
	return func() (runtime.Object, error) {
		return cs.CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	}
}

// startInformer runs a SharedIndexInformer over lw until the spec ends and
// waits (bounded) for it to sync.
func startInformer(f *fw.Framework, lw *recordingLW) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	ctx := runCtx(f)
	go inf.RunWithContext(ctx)
	synced, cancel := context.WithTimeout(ctx, convergeBudget)
	defer cancel()
	ok := cache.WaitForCacheSync(synced.Done(), inf.HasSynced)
	ExpectWithOffset(1, ok).To(BeTrue(), "the informer did not sync within %s; calls: %v", convergeBudget, lw.Calls())
	return inf
}

func watchIndex(calls []lwCall) int {
	for i, c := range calls {
		if c.Watch {
			return i
		}
	}
	Fail(fmt.Sprintf("no watch call in %v", calls))
	return -1
}
