package clients

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	fw "github.com/apiconform/apiconform/suites/framework"
)

// client-go's leader election (controller-runtime's managers run it) holds a
// coordination.k8s.io Lease and relies on optimistic concurrency: a candidate
// that read the lease before the leader renewed it must not overwrite it.
// Candidate a leads; a write of the lease as read before a's next renewal
// (the server's version has moved on) must be refused with 409, and a must
// still lead; b, started meanwhile, must not lead beside a, and takes over
// once a releases the lease.
var _ = Describe("client-go leader election", fw.Area(area), func() {
	f := fw.New(area)

	It("keeps one leader over a Lease and hands it over on release", fw.Req("CLIENT-LEADER-ELECTION"), func() {
		cs, err := kubernetes.NewForConfig(fw.RESTConfig())
		Expect(err).NotTo(HaveOccurred())
		name := f.Name("leader")
		var (
			mu      sync.Mutex
			leading = map[string]bool{}
		)
		started := make(chan string, 4)
		elect := func(id string) context.CancelFunc {
			lock, err := resourcelock.New(resourcelock.LeasesResourceLock, f.Namespace, name, cs.CoreV1(), cs.CoordinationV1(),
				resourcelock.ResourceLockConfig{Identity: id})
			Expect(err).NotTo(HaveOccurred())
			le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
				Lock: lock, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond,
				ReleaseOnCancel: true, Name: id,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(context.Context) {
						mu.Lock()
						leading[id] = true
						mu.Unlock()
						started <- id
					},
					OnStoppedLeading: func() {
						mu.Lock()
						leading[id] = false
						mu.Unlock()
					},
				},
			})
			Expect(err).NotTo(HaveOccurred())
			ctx, cancel := context.WithCancel(quietCtx(f.Ctx()))
			done := make(chan struct{})
			go func() { defer close(done); le.Run(ctx) }()
			DeferCleanup(func() { cancel(); <-done })
			return func() { cancel(); <-done }
		}
		leader := func(what string) string {
			select {
			case id := <-started:
				return id
			case <-time.After(convergeBudget):
				Fail("no candidate led within " + convergeBudget.String() + ": " + what)
				return ""
			}
		}

		stopA := elect("a")
		Expect(leader("a alone")).To(Equal("a"))
		path := "/apis/coordination.k8s.io/v1/namespaces/" + f.Namespace + "/leases/" + name
		read := f.Get(path)
		Expect(read.Code).To(Equal(http.StatusOK), "%s", read)
		Eventually(func() string { return f.Get(path).Str("metadata.resourceVersion") }).WithTimeout(convergeBudget).
			ShouldNot(Equal(read.Str("metadata.resourceVersion")), "a renews its lease")
		var stale map[string]any
		Expect(json.Unmarshal(read.Body, &stale)).To(Succeed())
		stale["spec"].(map[string]any)["holderIdentity"] = "intruder"
		r := f.Put(path, stale)
		fw.ExpectStatus(r, http.StatusConflict, "Conflict")
		Expect(f.Get(path).Str("spec.holderIdentity")).To(Equal("a"), "the stale write changed nothing")

		elect("b")
		Consistently(func() bool {
			mu.Lock()
			defer mu.Unlock()
			return leading["a"] && leading["b"]
		}).WithTimeout(400*time.Millisecond).WithPolling(50*time.Millisecond).Should(BeFalse(), "two leaders at once (two of b's retries)")

		// a releases the lease as it stops; should its last renewal race the
		// stop, the release conflicts and b waits out the 2 s lease instead.
		stopA()
		Expect(leader("after a released the lease")).To(Equal("b"))
		Expect(f.Get(path).Str("spec.holderIdentity")).To(Equal("b"))
	})
})
