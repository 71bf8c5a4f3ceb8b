package clients

import (
	"context"

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
		Expect(len(calls)).To(BeNumerically(">=", 3), "7 objects in pages of 3: %v", calls)
		for _, c := range calls {
			Expect(c.Opts.Limit).To(BeEquivalentTo(3), "%v", calls)
			Expect(c.Err).NotTo(HaveOccurred())
		}
		whole, err := cs.CoreV1().ConfigMaps(f.Namespace).List(f.Ctx(), metav1.ListOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(namesOf(obj)).To(Equal(namesOf(whole)), "the pager's items against one unpaged list")
		fw.Record("pages", "%v", calls)
	})

	It("falls back to one full list when its continue token has expired", fw.Req("CLIENT-PAGER-410-FALLBACK"), func() {
		cs := typedClient()
		seedConfigMaps(f, 5)
		var calls []lwCall
		var later string
		// Before the second page: a new object, then the first page's snapshot goes.
		beforeSecond := func(o metav1.ListOptions) {
			later = f.CreateObj(f.Name("later"), "v1", nil).Name
			f.ExpireHistory("the continue token's snapshot", func() *fw.Response {
				return f.Get(f.ConfigMapsPath(), fw.Query("limit", "2"), fw.Query("continue", o.Continue))
			})
		}
		p := pager.New(recordPages(cs, f.Namespace, &calls, beforeSecond))
		p.PageSize = 2
		obj, _, err := p.List(f.Ctx(), metav1.ListOptions{})
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
	})
})

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
