package registry

import (
	"context"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

const testCRDName = "widgets.example.com"

func testCRD(finalizers ...any) Object {
	md := map[string]any{"name": testCRDName}
	if len(finalizers) > 0 {
		md["finalizers"] = finalizers
	}
	return Object{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": md,
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}
}

func widget(name string, finalizers ...any) Object {
	md := map[string]any{"name": name}
	if len(finalizers) > 0 {
		md["finalizers"] = finalizers
	}
	return Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": md}
}

// crdFixture: a registry serving the widgets CRD with the given widgets in
// namespace default.
func crdFixture(t *testing.T, st storage.Store, crdFinalizers []any, widgets ...Object) (*Registry, *Kind) {
	t.Helper()
	r := startRegistry(t, st)
	ctx := context.Background()
	crdK := r.Lookup(crdGroup, "customresourcedefinitions")
	if _, err := r.Create(ctx, crdK, "v1", "", testCRD(crdFinalizers...), WriteOptions{}); err != nil {
		t.Fatalf("create CRD: %v", err)
	}
	wk := r.Lookup("example.com", "widgets")
	if wk == nil {
		t.Fatal("the CRD's kind is not served")
	}
	for _, w := range widgets {
		if _, err := r.Create(ctx, wk, "v1", "default", w, WriteOptions{}); err != nil {
			t.Fatalf("create widget: %v", err)
		}
	}
	return r, crdK
}

func terminating(obj Object) map[string]any {
	for _, c := range sliceOf(mapOf(obj["status"])["conditions"]) {
		if str(mapOf(c)["type"]) == "Terminating" {
			return mapOf(c)
		}
	}
	return nil
}

func finalizersOf(obj Object) []string {
	var out []string
	for _, f := range sliceOf(meta(obj)["finalizers"]) {
		out = append(out, str(f))
	}
	return out
}

// waitGone polls (bounded) until the CRD is gone.
func waitGone(t *testing.T, r *Registry, crdK *Kind) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := r.Get(context.Background(), crdK, "v1", "", testCRDName, rvplan.Plan{Mode: rvplan.Latest})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CRD is still there after its objects went (err %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Deleting a CRD, as kube-apiserver v1.36.3 was seen to: the DELETE answers
// the CRD marked deleted with the cleanup finalizer and a Terminating
// condition; its custom resources are deleted; the finalizer goes last and
// with it the CRD and its kind.
func TestCRDDeletion(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name          string
		crdFinalizers []any
		widgets       []Object
		// held: the CRD stays after the DELETE (a widget's or its own finalizer).
		held bool
	}{
		{"no custom resources", nil, nil, false},
		{"custom resources without finalizers", nil, []Object{widget("w1"), widget("w2")}, false},
		{"a custom resource with a finalizer", nil, []Object{widget("w1"), widget("w2", "example.com/hold")}, true},
		{"a finalizer of the CRD's own", []any{"example.com/keep"}, []Object{widget("w1")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, crdK := crdFixture(t, storage.NewMemory(storage.Options{}), tc.crdFinalizers, tc.widgets...)
			wk := r.Lookup("example.com", "widgets")
			start := r.store.CurrentRevision()
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			w, err := r.Watch(wctx, crdK, "v1", "", rvplan.Plan{Mode: rvplan.Exact, Revision: start}, Selector{})
			if err != nil {
				t.Fatal(err)
			}

			res, err := r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := res.Object
			if res.Finished || str(meta(got)["deletionTimestamp"]) == "" || !hasFinalizer(got, crdCleanupFinalizer) {
				t.Fatalf("DELETE answered %v (finished %v), want the CRD marked deleted with the cleanup finalizer", meta(got), res.Finished)
			}
			if _, ok := meta(got)["deletionGracePeriodSeconds"]; ok {
				t.Errorf("DELETE answered deletionGracePeriodSeconds %v; kube-apiserver sets none on a CRD", meta(got)["deletionGracePeriodSeconds"])
			}
			if c := terminating(got); str(c["status"]) != "True" || str(c["reason"]) != crdDeletionPending || str(c["message"]) != crdDeletionPendingMessage {
				t.Errorf("DELETE answered the Terminating condition %v", c)
			}

			// Widgets without finalizers are gone either way.
			if _, err := r.Get(ctx, wk, "v1", "default", "w1", rvplan.Plan{Mode: rvplan.Latest}); len(tc.widgets) > 0 && !apierrors.IsNotFound(err) {
				t.Errorf("widget w1 after the CRD's DELETE: %v, want NotFound", err)
			}
			if tc.held {
				cur, err := r.Get(ctx, crdK, "v1", "", testCRDName, rvplan.Plan{Mode: rvplan.Latest})
				if err != nil {
					t.Fatalf("a held CRD is gone: %v", err)
				}
				if c := terminating(cur); str(c["reason"]) != crdDeletionProgress || str(c["message"]) != crdDeletionProgressMessage {
					t.Errorf("terminating CRD's condition %v, want %s", c, crdDeletionProgress)
				}
				if r.Lookup("example.com", "widgets") == nil {
					t.Error("a terminating CRD's kind is no longer served")
				}
				// Release what holds it.
				if tc.crdFinalizers != nil {
					if fs := finalizersOf(cur); len(fs) != 1 || fs[0] != "example.com/keep" {
						t.Errorf("finalizers %v, want only the CRD's own once its objects are gone", fs)
					}
					_, err = r.Mutate(ctx, crdK, "v1", "", testCRDName, WriteOptions{}, func(o Object) (Object, error) {
						delete(meta(o), "finalizers")
						return o, nil
					})
				} else {
					_, err = r.Mutate(ctx, wk, "v1", "default", "w2", WriteOptions{}, func(o Object) (Object, error) {
						delete(meta(o), "finalizers")
						return o, nil
					})
				}
				if err != nil {
					t.Fatal(err)
				}
				waitGone(t, r, crdK)
			} else if _, err := r.Get(ctx, crdK, "v1", "", testCRDName, rvplan.Plan{Mode: rvplan.Latest}); !apierrors.IsNotFound(err) {
				t.Fatalf("a CRD whose objects went at once is still there after the DELETE: %v", err)
			}
			if r.Lookup("example.com", "widgets") != nil {
				t.Error("the deleted CRD's kind is still served")
			}

			// Watchers see Pending, InProgress, (the cleanup finalizer
			// going), then DELETED carrying the last stored state (as
			// kube-apiserver's DELETED event carries the CRD with its finalizer).
			var seen []string
			for ev := range w.Events() {
				c := terminating(ev.Object)
				seen = append(seen, ev.Type+" "+str(c["reason"])+" "+strconv.Itoa(len(finalizersOf(ev.Object))))
				if ev.Type == Deleted {
					break
				}
			}
			want := []string{"MODIFIED InstanceDeletionPending 1", "MODIFIED InstanceDeletionInProgress 1", "DELETED InstanceDeletionInProgress 1"}
			if tc.crdFinalizers != nil {
				want = []string{"MODIFIED InstanceDeletionPending 2", "MODIFIED InstanceDeletionInProgress 2", "MODIFIED InstanceDeletionInProgress 1",
					"DELETED InstanceDeletionInProgress 1"}
			}
			if !equalStrings(seen, want) {
				t.Errorf("CRD watch events\n got %q\nwant %q", seen, want)
			}
		})
	}
}

// A dry-run DELETE changes nothing; a second DELETE keeps the first mark.
func TestCRDDeletionDryRunAndRepeat(t *testing.T) {
	ctx := context.Background()
	r, crdK := crdFixture(t, storage.NewMemory(storage.Options{}), nil, widget("w", "example.com/hold"))
	res, err := r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{DryRun: true})
	if err != nil || !hasFinalizer(res.Object, crdCleanupFinalizer) {
		t.Fatalf("dry-run DELETE answered %v, %v; want the marked CRD", res, err)
	}
	cur, err := r.Get(ctx, crdK, "v1", "", testCRDName, rvplan.Plan{Mode: rvplan.Latest})
	if err != nil || str(meta(cur)["deletionTimestamp"]) != "" || hasFinalizer(cur, crdCleanupFinalizer) {
		t.Fatalf("after a dry-run DELETE: %v, %v; want the CRD unchanged", meta(cur), err)
	}
	first, err := r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if meta(again.Object)["deletionTimestamp"] != meta(first.Object)["deletionTimestamp"] || len(finalizersOf(again.Object)) != 1 {
		t.Errorf("second DELETE: %v, want the first mark and one cleanup finalizer", meta(again.Object))
	}
}

// A CRD deleted before a restart finishes its cleanup after it.
func TestCRDDeletionResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMemory(storage.Options{})
	t.Cleanup(func() { _ = st.Close() })
	r1, crdK := crdFixture(t, st, nil, widget("w", "example.com/hold"))
	if _, err := r1.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	r1.Close()

	r2 := New(Config{Store: st})
	r2.Register(BuiltinKinds(r2)...)
	t.Cleanup(r2.Close)
	if err := r2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	wk := r2.Lookup("example.com", "widgets")
	if wk == nil {
		t.Fatal("after a restart the terminating CRD's kind is not served")
	}
	if _, err := r2.Mutate(ctx, wk, "v1", "default", "w", WriteOptions{}, func(o Object) (Object, error) {
		delete(meta(o), "finalizers")
		return o, nil
	}); err != nil {
		t.Fatal(err)
	}
	waitGone(t, r2, r2.Lookup(crdGroup, "customresourcedefinitions"))
	if r2.Lookup("example.com", "widgets") != nil {
		t.Error("the deleted CRD's kind is still served")
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCRDTerminatingRefusesCreate: while a CRD is being deleted its kind is
// still served, but a create answers kube-apiserver's 403; reads go on.
func TestCRDTerminatingRefusesCreate(t *testing.T) {
	ctx := context.Background()
	r, crdK := crdFixture(t, storage.NewMemory(storage.Options{}), nil, widget("held", "example.com/hold"))
	wk := r.Lookup("example.com", "widgets")
	if _, err := r.Create(ctx, wk, "v1", "default", widget("before"), WriteOptions{}); err != nil {
		t.Fatalf("create before the DELETE: %v", err)
	}
	if _, err := r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Create(ctx, wk, "v1", "default", widget("new"), WriteOptions{})
	const want = `widgets.example.com "new" is forbidden: create not allowed while custom resource definition is terminating`
	if !apierrors.IsForbidden(err) || err.Error() != want {
		t.Fatalf("create while terminating: %v, want 403 %q", err, want)
	}
	if _, err := r.Get(ctx, wk, "v1", "default", "held", rvplan.Plan{Mode: rvplan.Latest}); err != nil {
		t.Errorf("the held widget is no longer readable: %v", err)
	}
}

// TestDeletionMarkGeneration: marking a custom resource deleted moves its
// generation on; the CRD's own DELETE (an update of its metadata) does not
// (both observed on kube-apiserver v1.36.3).
func TestDeletionMarkGeneration(t *testing.T) {
	ctx := context.Background()
	r, crdK := crdFixture(t, storage.NewMemory(storage.Options{}), nil, widget("held", "example.com/hold"))
	wk := r.Lookup("example.com", "widgets")
	res, err := r.Delete(ctx, wk, "v1", "default", "held", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := toInt(meta(res.Object)["generation"]); g != 2 {
		t.Errorf("custom resource marked deleted has generation %d, want 2", g)
	}
	res, err = r.Delete(ctx, crdK, "v1", "", testCRDName, DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := toInt(meta(res.Object)["generation"]); g != 1 {
		t.Errorf("CRD marked deleted has generation %d, want 1", g)
	}
}

// TestCRDUpdateKeepsStatus: an update keeps a CRD's status as stored (its
// conditions and their times), as kube-apiserver's PrepareForUpdate does,
// but for the names served and the storage version stored: a CRD written
// back as read is no change (the same resourceVersion, no manager owning
// its status), and a new storage version is added to storedVersions.
func TestCRDUpdateKeepsStatus(t *testing.T) {
	ctx := context.Background()
	r, crdK := crdFixture(t, storage.NewMemory(storage.Options{}), nil)
	// A status of its own, older than the test, through /status.
	set, err := r.Mutate(ctx, crdK, "v1", "", testCRDName, WriteOptions{Subresource: "status"}, func(cur Object) (Object, error) {
		for _, c := range sliceOf(mapOf(cur["status"])["conditions"]) {
			mapOf(c)["lastTransitionTime"] = "2020-01-01T00:00:00Z"
		}
		return cur, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	read := deepCopy(set)
	got, err := r.UpdateFrom(ctx, crdK, "v1", "", testCRDName, func() (Object, error) { return deepCopy(read), nil }, WriteOptions{FieldManager: "putter"})
	if err != nil {
		t.Fatal(err)
	}
	if rv, want := str(meta(got)["resourceVersion"]), str(meta(set)["resourceVersion"]); rv != want {
		t.Errorf("written back as read: resourceVersion %s, want %s (no change)", rv, want)
	}
	if !sameJSON(got["status"], set["status"]) {
		t.Errorf("status %v, want the stored %v", got["status"], set["status"])
	}
	for _, e := range sliceOf(meta(got)["managedFields"]) {
		if mapOf(e)["manager"] == "putter" {
			t.Errorf("the writer of no change has an entry: %v", e)
		}
	}

	// A second version as the storage version: stored beside the first,
	// the conditions still as they were.
	next := deepCopy(read)
	delete(meta(next), "resourceVersion")
	spec := mapOf(next["spec"])
	v1 := mapOf(sliceOf(spec["versions"])[0])
	v1["storage"] = false
	spec["versions"] = []any{v1, map[string]any{"name": "v2", "served": true, "storage": true,
		"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}
	got, err = r.UpdateFrom(ctx, crdK, "v1", "", testCRDName, func() (Object, error) { return deepCopy(next), nil }, WriteOptions{FieldManager: "putter"})
	if err != nil {
		t.Fatal(err)
	}
	st := mapOf(got["status"])
	if sv := sliceOf(st["storedVersions"]); len(sv) != 2 || sv[0] != "v1" || sv[1] != "v2" {
		t.Errorf("storedVersions %v, want [v1 v2]", sv)
	}
	for _, c := range sliceOf(st["conditions"]) {
		if lt := mapOf(c)["lastTransitionTime"]; lt != "2020-01-01T00:00:00Z" {
			t.Errorf("condition %v: lastTransitionTime %v, want the stored one", mapOf(c)["type"], lt)
		}
	}
}
