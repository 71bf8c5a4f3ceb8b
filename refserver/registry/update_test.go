package registry

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// newTestRegistry is a started registry of the built-in kinds on a memory store.
func newTestRegistry(tb testing.TB) (*Registry, *Kind) {
	tb.Helper()
	st := storage.NewMemory(storage.Options{})
	tb.Cleanup(func() { _ = st.Close() }) // after the registry's (cleanups run last first)
	r := startRegistry(tb, st)
	return r, r.Lookup("", "configmaps")
}

// startRegistry is a started registry over st serving the built-in kinds,
// closed when the test ends.
func startRegistry(tb testing.TB, st storage.Store) *Registry {
	tb.Helper()
	r := New(Config{Store: st})
	r.Register(BuiltinKinds(r)...)
	tb.Cleanup(r.Close)
	if err := r.Start(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return r
}

// TestReadModifyWrite covers the one read-modify-write loop through the
// verbs that use it: preconditions, lost races and dry runs.
func TestReadModifyWrite(t *testing.T) {
	ctx := context.Background()
	setData := func(v string) func(Object) (Object, error) {
		return func(cur Object) (Object, error) { cur["data"] = map[string]any{"k": v}; return cur, nil }
	}
	// overtake is the write that wins the race against the one under test.
	overtake := func(r *Registry, k *Kind) error {
		_, err := r.Mutate(ctx, k, "v1", "default", "cm", WriteOptions{}, setData("other"))
		return err
	}
	cases := []struct {
		name string
		// run acts on the object "cm" (resourceVersion rv, uid uid) and returns the error.
		run      func(r *Registry, k *Kind, rv, uid string) error
		wantErr  string // substring of the error ("" = success)
		wantData string // data.k stored afterwards
	}{
		{"update", func(r *Registry, k *Kind, rv, _ string) error {
			_, err := r.Update(ctx, k, "v1", "default", "cm", Object{"metadata": map[string]any{"name": "cm", "resourceVersion": rv}, "data": map[string]any{"k": "b"}}, WriteOptions{})
			return err
		}, "", "b"},
		{"update with a stale resourceVersion", func(r *Registry, k *Kind, _, _ string) error {
			_, err := r.Update(ctx, k, "v1", "default", "cm", Object{"metadata": map[string]any{"name": "cm", "resourceVersion": "1"}, "data": map[string]any{"k": "b"}}, WriteOptions{})
			return err
		}, conflictMsg, "a"},
		{"dry-run update", func(r *Registry, k *Kind, _, _ string) error {
			out, err := r.Mutate(ctx, k, "v1", "default", "cm", WriteOptions{DryRun: true}, setData("b"))
			if err == nil && mapOf(out["data"])["k"] != "b" {
				t.Errorf("dry run answered %v, want the changed object", out)
			}
			return err
		}, "", "a"},
		{"lost race, no precondition: retried", func(r *Registry, k *Kind, _, _ string) error {
			calls := 0
			_, err := r.Mutate(ctx, k, "v1", "default", "cm", WriteOptions{}, func(cur Object) (Object, error) {
				if calls++; calls == 1 {
					if err := overtake(r, k); err != nil {
						return nil, err
					}
				}
				return setData("b")(cur)
			})
			if calls != 2 {
				t.Errorf("fn ran %d times, want 2", calls)
			}
			return err
		}, "", "b"},
		{"lost race, UpdateFrom: retried with a new object", func(r *Registry, k *Kind, _, _ string) error {
			var given []Object
			_, err := r.UpdateFrom(ctx, k, "v1", "default", "cm", func() (Object, error) {
				if len(given) == 0 {
					if err := overtake(r, k); err != nil {
						return nil, err
					}
				}
				given = append(given, Object{"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "b"}})
				return given[len(given)-1], nil
			}, WriteOptions{})
			if len(given) != 2 {
				t.Errorf("next ran %d times, want 2", len(given))
			}
			return err
		}, "", "b"},
		{"lost race, MutateReading: retried", func(r *Registry, k *Kind, _, _ string) error {
			calls := 0
			_, err := r.MutateReading(ctx, k, "v1", "default", "cm", WriteOptions{}, func(cur Object) (Object, error) {
				if calls++; calls == 1 {
					if err := overtake(r, k); err != nil {
						return nil, err
					}
				}
				if mapOf(cur["data"])["k"] != map[int]string{1: "a", 2: "other"}[calls] {
					t.Errorf("call %d read %v", calls, cur["data"])
				}
				return Object{"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "b"}}, nil
			})
			if calls != 2 {
				t.Errorf("fn ran %d times, want 2", calls)
			}
			return err
		}, "", "b"},
		{"lost race, pinned resourceVersion: conflict", func(r *Registry, k *Kind, rv, _ string) error {
			calls := 0
			_, err := r.Mutate(ctx, k, "v1", "default", "cm", WriteOptions{}, func(cur Object) (Object, error) {
				if calls++; calls == 1 {
					if err := overtake(r, k); err != nil {
						return nil, err
					}
				}
				meta(cur)["resourceVersion"] = rv
				return setData("b")(cur)
			})
			return err
		}, conflictMsg, "other"},
		{"delete with another uid", func(r *Registry, k *Kind, _, _ string) error {
			_, err := r.Delete(ctx, k, "v1", "default", "cm", DeleteOptions{PreconditionUID: "x"})
			return err
		}, "the UID in the precondition (x) does not match the UID in record", "a"},
		{"delete with a stale resourceVersion", func(r *Registry, k *Kind, _, _ string) error {
			_, err := r.Delete(ctx, k, "v1", "default", "cm", DeleteOptions{PreconditionVersion: "1"})
			return err
		}, "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record", "a"},
		{"dry-run delete", func(r *Registry, k *Kind, _, uid string) error {
			res, err := r.Delete(ctx, k, "v1", "default", "cm", DeleteOptions{DryRun: true, PreconditionUID: uid})
			if err == nil && !res.Finished {
				t.Errorf("dry-run delete: Finished false, want true")
			}
			return err
		}, "", "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, k := newTestRegistry(t)
			cm, err := r.Create(ctx, k, "v1", "default", Object{"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "a"}}, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			err = c.run(r, k, str(meta(cm)["resourceVersion"]), str(meta(cm)["uid"]))
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case c.wantErr != "" && (!apierrors.IsConflict(err) || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("got %v, want a 409 with %q", err, c.wantErr)
			}
			got, err := r.Get(ctx, k, "v1", "default", "cm", rvplan.Plan{Mode: rvplan.Latest})
			if err != nil {
				t.Fatal(err)
			}
			if d := mapOf(got["data"])["k"]; d != c.wantData {
				t.Fatalf("stored data.k %v, want %q", d, c.wantData)
			}
		})
	}
}

// TestNamespaceDeleteHooks: the namespace kind's hooks mark it Terminating;
// the generic registry does not know namespaces by name.
func TestNamespaceDeleteHooks(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRegistry(t)
	ns := r.Lookup("", "namespaces")
	if _, err := r.Create(ctx, ns, "v1", "", Object{"metadata": map[string]any{"name": "gone"}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Delete(ctx, ns, "v1", "", "gone", DeleteOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	m := meta(res.Object)
	if res.Finished || str(m["deletionTimestamp"]) == "" || str(mapOf(res.Object["status"])["phase"]) != "Terminating" {
		t.Fatalf("dry-run namespace delete answered %v, want a Terminating mark", res.Object)
	}
	if _, has := m["deletionGracePeriodSeconds"]; has {
		t.Fatalf("a namespace mark has no deletionGracePeriodSeconds: %v", m)
	}
	got, err := r.Get(ctx, ns, "v1", "", "gone", rvplan.Plan{Mode: rvplan.Latest})
	if err != nil || str(meta(got)["deletionTimestamp"]) != "" {
		t.Fatalf("a dry run wrote the mark: %v, %v", got, err)
	}
}
