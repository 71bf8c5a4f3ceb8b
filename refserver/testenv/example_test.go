package testenv_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/apiconform/apiconform/refserver/testenv"
)

// mirror is the reconciler under test: every ConfigMap labelled mirror=yes
// gets a Secret of the same name holding the same data, owned by it.
type mirror struct{ client.Client }

func (m mirror) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cm corev1.ConfigMap
	if err := m.Get(ctx, req.NamespacedName, &cm); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if cm.Labels["mirror"] != "yes" {
		return ctrl.Result{}, nil
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: cm.Name, Namespace: cm.Namespace}}
	_, err := controllerutil.CreateOrUpdate(ctx, m.Client, sec, func() error {
		sec.StringData = nil
		sec.Data = map[string][]byte{}
		for k, v := range cm.Data {
			sec.Data[k] = []byte(v)
		}
		return controllerutil.SetControllerReference(&cm, sec, m.Scheme())
	})
	return ctrl.Result{}, err
}

// TestMirrorReconciler is the README's example: a controller-runtime manager
// against an in-process reference server, checked through the API.
func TestMirrorReconciler(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t)

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Owns(&corev1.Secret{}).Complete(mirror{mgr.GetClient()}); err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)

	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "default", Labels: map[string]string{"mirror": "yes"}},
		Data: map[string]string{"color": "blue"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitForSecret(t, c, map[string]string{"color": "blue"})

	cm.Data["color"] = "green"
	if err := c.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	waitForSecret(t, c, map[string]string{"color": "green"})
}

// startManager runs mgr until the test ends and fails the test if it
// stopped with an error.
func startManager(t *testing.T, mgr manager.Manager) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return ctx
}

// waitForSecret polls (bounded) until the mirrored Secret holds want.
func waitForSecret(t *testing.T, c client.Client, want map[string]string) {
	t.Helper()
	var last string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var sec corev1.Secret
		err := c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "settings"}, &sec)
		if apierrors.IsNotFound(err) {
			last = "no secret yet"
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for k, v := range sec.Data {
			got[k] = string(v)
		}
		if maps.Equal(got, want) {
			if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].Name != "settings" {
				t.Fatalf("secret owners: %+v", sec.OwnerReferences)
			}
			return
		}
		last = "secret data " + sec.String()
	}
	t.Fatalf("the reconciler did not mirror %v: %s", want, last)
}

// TestManagerLeaderElection: a manager with leader election on, as in a
// controller's main, takes its Lease and then starts its runnables.
func TestManagerLeaderElection(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"},
		LeaderElection: true, LeaderElectionID: "mirror.apiconform.io", LeaderElectionNamespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	leading := make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { close(leading); <-ctx.Done(); return nil })); err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)
	select {
	case <-leading:
	case <-time.After(20 * time.Second):
		t.Fatal("the manager never became leader")
	}
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var lease coordinationv1.Lease
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "mirror.apiconform.io"}, &lease); err != nil {
		t.Fatal(err)
	}
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Fatalf("lease without a holder: %+v", lease.Spec)
	}
}

// TestManagerEventRecorder: a manager's event recorder (GetEventRecorder,
// which writes events.k8s.io/v1 events) records an event about an object
// that a core/v1 reader, such as kubectl describe, finds by the object's
// fields; a repeat becomes the event's series.
func TestManagerEventRecorder(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	env := testenv.Start(t)
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startManager(t, mgr)
	c, err := client.New(env.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "recorded", Namespace: "default"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	rec := mgr.GetEventRecorder("mirror-controller")
	var got corev1.EventList
	for _, want := range []int32{0, 2} { // the first event has no series; the repeat's count is 2
		rec.Eventf(cm, nil, corev1.EventTypeNormal, "Mirrored", "Mirror", "mirrored %s", cm.Name)
		deadline := time.Now().Add(20 * time.Second)
		for {
			got = corev1.EventList{}
			if err := c.List(ctx, &got, client.InNamespace("default"),
				client.MatchingFieldsSelector{Selector: fields.SelectorFromSet(fields.Set{"involvedObject.name": cm.Name, "involvedObject.uid": string(cm.UID)})}); err != nil {
				t.Fatal(err)
			}
			if len(got.Items) == 1 && seriesCount(got.Items[0].Series) == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the events about %s: %+v, want one with series count %d", cm.Name, got.Items, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if e := got.Items[0]; e.Reason != "Mirrored" || e.Message != "mirrored recorded" || e.ReportingController != "mirror-controller" || e.Action != "Mirror" {
		t.Fatalf("event: %+v", e)
	}
}

func seriesCount(s *corev1.EventSeries) int32 {
	if s == nil {
		return 0
	}
	return s.Count
}
