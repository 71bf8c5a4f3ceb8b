package registry

import (
	"context"
	"fmt"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/storage"
)

// namespaceValue is a stored namespace, terminating or not.
func namespaceValue(name string, terminating bool) []byte {
	if terminating {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Terminating"}}`, name)
	}
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q},"status":{"phase":"Active"}}`, name)
}

// createIn creates a configmap in ns and returns the error's kind.
func createIn(t *testing.T, r *Registry, ns string) string {
	t.Helper()
	cm := r.Lookup("", "configmaps")
	_, err := r.Create(context.Background(), cm, "v1", ns, Object{"metadata": map[string]any{"generateName": "x-"}}, WriteOptions{})
	switch {
	case err == nil:
		return "created"
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsNotFound(err):
		return "notfound"
	}
	t.Fatalf("create in %s: %v", ns, err)
	return ""
}

// TestNamespaceStates: a create in a namespace is refused exactly as a read
// of the stored namespace would refuse it, whether the registry learned
// the namespace's state from its writes or from the store.
func TestNamespaceStates(t *testing.T) {
	ctx := context.Background()
	st := storage.NewMemory(storage.Options{})
	t.Cleanup(func() { _ = st.Close() })
	// Written before the registry starts: it learns these from the store.
	for name, terminating := range map[string]bool{"old-live": false, "old-terminating": true} {
		if _, err := st.Create(ctx, "/registry/core/namespaces/"+name, namespaceValue(name, terminating)); err != nil {
			t.Fatal(err)
		}
	}
	r := startRegistry(t, st)
	key := "/registry/core/namespaces/ns"
	steps := []struct {
		name  string
		write func() error // through the registry's store
		ns    string
		want  string
	}{
		{"learned live", nil, "old-live", "created"},
		{"learned live, held", nil, "old-live", "created"},
		{"learned terminating", nil, "old-terminating", "forbidden"},
		{"learned terminating, held", nil, "old-terminating", "forbidden"},
		{"absent", nil, "ns", "notfound"},
		{"created", func() error { _, err := r.store.Create(ctx, key, namespaceValue("ns", false)); return err }, "ns", "created"},
		{"marked", func() error { _, err := r.store.Update(ctx, key, namespaceValue("ns", true), 0); return err }, "ns", "forbidden"},
		{"unmarked", func() error { _, err := r.store.Update(ctx, key, namespaceValue("ns", false), 0); return err }, "ns", "created"},
		{"failed write keeps the state", func() error {
			if _, err := r.store.Update(ctx, key, namespaceValue("ns", true), 1); err == nil {
				return fmt.Errorf("a stale precondition was accepted")
			}
			return nil
		}, "ns", "created"},
		{"deleted", func() error { _, _, err := r.store.Delete(ctx, key, 0); return err }, "ns", "notfound"},
		{"created terminating", func() error { _, err := r.store.Create(ctx, key, namespaceValue("ns", true)); return err }, "ns", "forbidden"},
	}
	for _, s := range steps {
		if s.write != nil {
			if err := s.write(); err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
		}
		if got := createIn(t, r, s.ns); got != s.want {
			t.Fatalf("%s: create in %s: %s, want %s", s.name, s.ns, got, s.want)
		}
	}
}

// TestNamespaceStatesConcurrent: namespace writes racing creates and
// first reads leave every namespace's state the stored one.
func TestNamespaceStatesConcurrent(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRegistry(t)
	names := []string{"n0", "n1", "n2"}
	var wg sync.WaitGroup
	for w, name := range names {
		wg.Add(2)
		go func() { // flips the namespace through every state
			defer wg.Done()
			key := "/registry/core/namespaces/" + name
			for i := range 60 {
				var err error
				switch i % 3 {
				case 0:
					_, err = r.store.Create(ctx, key, namespaceValue(name, w%2 == 0))
				case 1:
					_, err = r.store.Update(ctx, key, namespaceValue(name, i%2 == 0), 0)
				case 2:
					_, _, err = r.store.Delete(ctx, key, 0)
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
			_, err := r.store.Create(ctx, key, namespaceValue(name, w == 1))
			if err != nil {
				t.Error(err)
			}
		}()
		go func() { // checks, learning from the store whenever the state is unknown
			defer wg.Done()
			for range 200 {
				_ = r.namespaceWritable(ctx, name)
			}
		}()
	}
	wg.Wait()
	for w, name := range names {
		want := "created"
		if w == 1 {
			want = "forbidden"
		}
		if got := createIn(t, r, name); got != want {
			t.Fatalf("%s ends %s, want %s", name, got, want)
		}
	}
}

// TestNamespaceStatesLearn: a state read from the store is kept only if no
// namespace write began or ended since the lookup.
func TestNamespaceStatesLearn(t *testing.T) {
	n := newNamespaceStates()
	_, known, gen := n.lookup("a")
	if known {
		t.Fatal("a new set knows a namespace")
	}
	name, ok := n.writing("/registry/core/namespaces/a")
	if !ok || name != "a" {
		t.Fatalf("writing: %q %v", name, ok)
	}
	n.written(name, namespaceValue("a", true), true)
	n.done()
	n.learn("a", false, gen) // read before the write: stale
	if terminating, known, _ := n.lookup("a"); !known || !terminating {
		t.Fatalf("a stale read replaced the written state: known %v terminating %v", known, terminating)
	}
	for _, key := range []string{"/registry/core/configmaps/a/b", "/registry/core/namespaces/", "/registry/core/namespacesx/a"} {
		if _, ok := n.writing(key); ok {
			t.Fatalf("%s taken for a namespace", key)
		}
	}
}
