package clients

import (
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	fw "github.com/apiconform/apiconform/suites/framework"
)

var _ = Describe("tools/pager", fw.Area(area), func() {
	f := fw.New(area)

	It("walks a collection over several pages and yields every item once, in list order", fw.Req("CLIENT-PAGER-CHUNKS"), func() {
		cs := typedClient()
		seedConfigMaps(f, 7)
		var calls []lwCall
		p := pager.New(recordPages(cs, f.Namespace, &calls, nil))
		p.PageSize = 3
		obj, paginated, err := p.List(f.Ctx(), metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred(), "pages: %v", calls)
		Expect(paginated).To(BeTrue())
		whole, err := cs.CoreV1().ConfigMaps(f.Namespace).List(f.Ctx(), metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(namesOf(obj)).To(Equal(namesOf(whole)), "the pager's items against one unpaged list; pages: %v", calls)
		Expect(len(calls)).To(BeNumerically(">=", 3), "7 objects in pages of 3: %v", calls)
		for _, c := range calls {
			Expect(c.Opts.Limit).To(BeEquivalentTo(3), "%v", calls)
			Expect(c.Err).NotTo(HaveOccurred())
		}
		fw.Record("pages", "%v", calls)
	})
})

// The fallback spec waits for the target to drop history; on a target
// without a compaction hook it runs after the others (framework expiry.go).
var _ = Describe("tools/pager", fw.Area(area), func() {
	f := fw.New(area)

	f.ItAfterExpiry("falls back to one full list when its continue token has expired", fw.Req("CLIENT-PAGER-410-FALLBACK"),
		func(f *fw.Framework) fw.History {
			cs := typedClient()
			seedConfigMaps(f, 5)
			p := startHeldPager(f, cs, 2)
			// Before the second page: a new object, then the first page's snapshot goes.
			later := f.CreateObj(f.Name("later"), "v1", nil).Name
			return fw.History{What: "the continue token's snapshot", Probe: p.probe(f), Check: func() {
				calls, obj, err := p.finish()
				Expect(err).NotTo(HaveOccurred(), "pages: %v", calls)
				Expect(len(calls)).To(BeNumerically(">=", 3), "%v", calls)
				Expect(apierrors.IsResourceExpired(calls[1].Err)).To(BeTrue(), "the second page answers 410 Expired: %v", calls)
				Expect(calls[2].Opts.Limit).To(BeZero(), "the fallback lists without limit: %v", calls)
				Expect(calls[2].Opts.Continue).To(BeEmpty(), "%v", calls)
				Expect(calls[2].Err).NotTo(HaveOccurred())
				whole, err := cs.CoreV1().ConfigMaps(f.Namespace).List(f.Ctx(), metav1.ListOptions{})
				Expect(err).NotTo(HaveOccurred())
				Expect(namesOf(obj)).To(Equal(namesOf(whole)), "the fallback's items against one unpaged list")
				Expect(namesOf(obj)).To(ContainElement(later), "the fallback is a fresh list")
				fw.Record("pages", "%v", calls)
			}}
		})
})

// heldPager is a tools/pager list of the configmaps of a namespace that runs
// in its own goroutine and stops before its second page until released.
type heldPager struct {
	token   string // the first page's continue token
	calls   []lwCall
	obj     runtime.Object
	err     error
	release chan struct{}
	done    chan struct{}
}

// startHeldPager starts the list in pages of size and returns once it asks
// for its second page. Nothing in the pager's goroutine asserts: finish
// hands its outcome to the spec. It asserts only with Gomega, as an early
// preparation must (framework expiry.go).
func startHeldPager(f *fw.Framework, cs kubernetes.Interface, size int64) *heldPager {
	h := &heldPager{release: make(chan struct{}), done: make(chan struct{})}
	reached := make(chan string, 1)
	ctx := f.Ctx()
	hold := fw.CompactionWait() + convergeBudget // bounds the goroutine of a spec that never finishes it
	before := func(o metav1.ListOptions) {
		reached <- o.Continue
		select {
		case <-h.release:
		case <-ctx.Done():
		case <-time.After(hold):
		}
	}
	p := pager.New(recordPages(cs, f.Namespace, &h.calls, before))
	p.PageSize = size
	go func() {
		defer close(h.done)
		h.obj, _, h.err = p.List(ctx, metav1.ListOptions{})
	}()
	select {
	case h.token = <-reached:
	case <-h.done:
		Expect(h.err).NotTo(HaveOccurred(), "pages: %v", h.calls)
		Expect(h.token).NotTo(BeEmpty(), "the pager asked for no second page: %v", h.calls)
	case <-time.After(convergeBudget):
		Expect(h.token).NotTo(BeEmpty(), "the pager did not finish its first page within %s", convergeBudget)
	}
	return h
}

// probe reads the second page with the held continue token.
func (h *heldPager) probe(f *fw.Framework) func() *fw.Response {
	return func() *fw.Response {
		return f.Get(f.ConfigMapsPath(), fw.Query("limit", "2"), fw.Query("continue", h.token))
	}
}

// finish releases the pager and returns its calls and outcome.
func (h *heldPager) finish() ([]lwCall, runtime.Object, error) {
	close(h.release)
	select {
	case <-h.done:
	case <-time.After(convergeBudget):
		Fail(fmt.Sprintf("the pager did not finish within %s of its second page", convergeBudget))
	}
	return h.calls, h.obj, h.err
}

// recordPages is the pager's page function over configmaps in ns: it records
// each call and runs before (when set) once, ahead of the first continued page.
func recordPages(cs kubernetes.Interface, ns string, calls *[]lwCall, before func(metav1.ListOptions)) pager.ListPageFunc {
	return func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		if before != nil && o.Continue != "" {
			before(o)
			before = nil
		}
		obj, err := cs.CoreV1().ConfigMaps(ns).List(ctx, o)
		c := lwCall{Opts: o, Err: err}
		if err == nil {
			lm, _ := meta.ListAccessor(obj)
			c.ResultRV = lm.GetResourceVersion()
		}
		*calls = append(*calls, c)
		return obj, err
	}
}

// namesOf lists the item names of a list object, in order.
func namesOf(obj runtime.Object) []string {
	items, err := meta.ExtractList(obj)
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	out := make([]string, len(items))
	for i, it := range items {
		m, err := meta.Accessor(it)
		ExpectWithOffset(1, err).NotTo(HaveOccurred())
		out[i] = m.GetName()
	}
	return out
}
