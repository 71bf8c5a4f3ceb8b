package refserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// TestLeaderElection runs client-go's leader election, as
// controller-runtime's manager does, with two candidates over one Lease:
// exactly one leads, and when it steps down (releasing the lease) the other
// takes over. A server without leases fails it at once.
func TestLeaderElection(t *testing.T) {
	s, _ := startTest(t)
	cs, err := kubernetes.NewForConfig(restConfig(t, s))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		leading = map[string]bool{}
		events  []string
	)
	started := make(chan string, 2)
	run := func(ctx context.Context, id string) *leaderelection.LeaderElector {
		lock, err := resourcelock.New(resourcelock.LeasesResourceLock, "default", "apiconform-test", cs.CoreV1(), cs.CoordinationV1(),
			resourcelock.ResourceLockConfig{Identity: id})
		if err != nil {
			t.Fatal(err)
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: 2 * time.Second, RenewDeadline: time.Second, RetryPeriod: 100 * time.Millisecond,
			ReleaseOnCancel: true, Name: id,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					mu.Lock()
					leading[id] = true
					events = append(events, id+" leads")
					mu.Unlock()
					started <- id
				},
				OnStoppedLeading: func() {
					mu.Lock()
					leading[id] = false
					events = append(events, id+" stops")
					mu.Unlock()
				},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		go le.Run(ctx)
		return le
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopA()
	defer stopB()
	run(ctxA, "a")
	var first string
	select {
	case first = <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no candidate took the lease")
	}
	if first != "a" {
		t.Fatalf("%s leads before a started", first)
	}
	run(ctxB, "b")
	time.Sleep(500 * time.Millisecond) // five of b's retries against a held lease
	mu.Lock()
	if leading["a"] && leading["b"] {
		t.Fatalf("two leaders: %v", events)
	}
	mu.Unlock()

	stopA() // a releases the lease as it stops
	select {
	case id := <-started:
		if id != "b" {
			t.Fatalf("%s took over", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("b never took over: %v", events)
	}
	l, err := cs.CoordinationV1().Leases("default").Get(ctxT(t), "apiconform-test", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "b" || l.Spec.LeaseTransitions == nil || *l.Spec.LeaseTransitions != 1 {
		t.Fatalf("lease after the hand-over: %+v", l.Spec)
	}
}

// TestLeasesAsKubeAPIServer holds what kube-apiserver v1.36.3 answered for
// leases (observed with curl): validation, a PUT that must name the
// resourceVersion it replaces unless it creates, and the two fields of
// coordinated leader election dropped (off by default) after the writer's
// entry recorded them.
func TestLeasesAsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	const path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	r := c.do("POST", path+"?fieldManager=m1", `{"metadata":{"name":"l1"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"strategy":"OldestEmulationVersion","preferredHolder":"b"}}`)
	if r.Code != 201 || r.get("spec.strategy") != nil || r.get("spec.preferredHolder") != nil {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	if fields := fmt.Sprint(r.get("metadata.managedFields.0.fieldsV1")); fields != "map[f:spec:map[f:holderIdentity:map[] f:leaseDurationSeconds:map[] f:preferredHolder:map[] f:strategy:map[]]]" {
		t.Errorf("the creator's entry: %s", fields)
	}
	for _, tc := range []struct{ method, path, body, msg string }{
		{"POST", path, `{"metadata":{"name":"l2"},"spec":{"leaseDurationSeconds":0,"leaseTransitions":-1}}`,
			`Lease.coordination.k8s.io "l2" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]`},
		{"PUT", path + "/l1", `{"metadata":{"name":"l1"},"spec":{"holderIdentity":"b"}}`,
			`leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
	} {
		if r := c.do(tc.method, tc.path, tc.body); r.Code != 422 || r.str("message") != tc.msg {
			t.Errorf("%s %s: %d %s, want 422 %s", tc.method, tc.path, r.Code, r.str("message"), tc.msg)
		}
	}
	if r := c.do("PUT", path+"/l4", `{"metadata":{"name":"l4"},"spec":{"holderIdentity":"c"}}`); r.Code != 201 {
		t.Errorf("PUT of a missing lease: %d %s", r.Code, r.Body)
	}
	// A lease without a spec reads with an empty one, and no entry (its
	// writer set nothing), as kube-apiserver answers.
	if r := c.do("POST", path, `{"metadata":{"name":"nospec"}}`); r.Code != 201 || !strings.Contains(string(r.Body), `"spec":{}`) || r.get("metadata.managedFields") != nil {
		t.Errorf("a lease without spec: %d %s", r.Code, r.Body)
	}
	if r := c.do("PATCH", path+"/l1?fieldManager=m3", `{"spec":{"holderIdentity":"z"}}`, "Content-Type", "application/merge-patch+json"); r.Code != 200 || r.str("spec.holderIdentity") != "z" {
		t.Errorf("a patch needs no resourceVersion: %d %s", r.Code, r.Body)
	}
	if r := c.do("GET", path+"?fieldSelector=spec.holderIdentity=z", nil); r.Code != 400 ||
		r.str("message") != `"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("a field label leases lack: %d %s", r.Code, r.Body)
	}
}
