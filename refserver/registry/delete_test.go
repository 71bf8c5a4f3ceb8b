package registry

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

func TestWithPropagation(t *testing.T) {
	fs := func(s ...string) []any {
		if len(s) == 0 {
			return nil
		}
		out := make([]any, len(s))
		for i, v := range s {
			out[i] = v
		}
		return out
	}
	cases := []struct {
		policy string
		in     []any
		want   []any
	}{
		{"", fs("a.io/x"), fs("a.io/x")},
		{"", nil, nil},
		{"Foreground", nil, fs("foregroundDeletion")},
		{"Foreground", fs("a.io/x"), fs("a.io/x", "foregroundDeletion")},
		{"Foreground", fs("orphan", "a.io/x"), fs("a.io/x", "foregroundDeletion")},
		{"Foreground", fs("foregroundDeletion"), fs("foregroundDeletion")},
		{"Orphan", fs("foregroundDeletion", "a.io/x"), fs("a.io/x", "orphan")},
		{"Orphan", nil, fs("orphan")},
		{"Background", fs("orphan", "a.io/x", "foregroundDeletion"), fs("a.io/x")},
		{"Background", nil, nil},
	}
	for _, c := range cases {
		if got := withPropagation(c.in, c.policy); !reflect.DeepEqual(got, c.want) {
			t.Errorf("withPropagation(%v, %q) = %v, want %v", c.in, c.policy, got, c.want)
		}
	}
}

func TestNewFinalizers(t *testing.T) {
	cases := []struct {
		cur, old any
		want     []string
	}{
		{[]any{"a", "b"}, []any{"a"}, []string{"b"}},
		{[]any{"b", "a"}, []any{"a", "b"}, nil},
		{[]any{"a"}, []any{"a", "b"}, nil},
		{nil, []any{"a"}, nil},
		{[]any{"a"}, nil, []string{"a"}},
	}
	for _, c := range cases {
		if got := newFinalizers(c.cur, c.old); !reflect.DeepEqual(got, c.want) {
			t.Errorf("newFinalizers(%v, %v) = %v, want %v", c.cur, c.old, got, c.want)
		}
	}
}

func TestRemovableAsStored(t *testing.T) {
	cases := []struct {
		name, value string
		uid         string
		ok          bool
	}{
		{"plain", `{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","uid":"u-1"}}`, "u-1", true},
		{"no uid", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`, "", true},
		{"escaped uid", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u\"1"}}`, `u"1`, true},
		{"needless escape", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u\u002d1"}}`, "", false},
		{"finalizers", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"finalizers":["a.io/x"],"name":"a","uid":"u-1"}}`, "", false},
		{"empty finalizers", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"finalizers":[],"name":"a","uid":"u-1"}}`, "", false},
		{"marked", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z","name":"a","uid":"u-1"}}`, "", false},
		{"uid not a string", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":7}}`, "", false},
		{"keys out of order", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","uid":"u-1"}}`, "", false},
		{"duplicate uid", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u-1","uid":"u-2"}}`, "", false},
		{"escaped key", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","\u0075id":"u-1"}}`, "", false},
		{"no metadata", `{"apiVersion":"v1","kind":"ConfigMap"}`, "", false},
		{"trailing bytes", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"uid":"u-1"}} x`, "", false},
		{"not JSON", `not json`, "", false},
	}
	for _, c := range cases {
		uid, ok := removableAsStored([]byte(c.value))
		if ok != c.ok || ok && uid != c.uid {
			t.Errorf("%s: %q %v, want %q %v", c.name, uid, ok, c.uid, c.ok)
		}
	}
}

// TestDeleteStatusOnly: a DELETE answered with a Status removes the object
// without decoding it where the stored bytes decide, with the uid and the
// watch event the full path gives; anything else takes the full path.
func TestDeleteStatusOnly(t *testing.T) {
	r, k := newTestRegistry(t)
	ctx := context.Background()
	create := func(name string, finalizers ...any) Object {
		t.Helper()
		obj := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{"a": "b"}}
		if len(finalizers) > 0 {
			meta(obj)["finalizers"] = finalizers
		}
		out, err := r.Create(ctx, k, "v1", "default", obj, WriteOptions{FieldManager: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	w, err := r.Watch(ctx, k, "v1", "default", rvplan.Plan{Mode: rvplan.Latest}, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	events := func(n int) []string {
		t.Helper()
		var got []string
		for range n {
			select {
			case ev := <-w.Events():
				got = append(got, ev.Type+" "+str(meta(ev.Object)["name"])+" "+str(meta(ev.Object)["uid"]))
			case <-time.After(10 * time.Second):
				t.Fatalf("%d events of %d", len(got), n)
			}
		}
		return got
	}

	for _, c := range []struct {
		name string
		o    DeleteOptions
		fast bool
	}{
		{"plain", DeleteOptions{StatusOnly: true}, true},
		{"background", DeleteOptions{StatusOnly: true, PropagationPolicy: "Background"}, true},
		{"an object answered", DeleteOptions{}, false},
		{"dry run", DeleteOptions{StatusOnly: true, DryRun: true}, false},
		{"precondition", DeleteOptions{StatusOnly: true, PreconditionUID: "*"}, false},
		{"orphan", DeleteOptions{StatusOnly: true, PropagationPolicy: "Orphan"}, false},
	} {
		obj := create("cm-" + strings.ToLower(strings.ReplaceAll(c.name, " ", "-")))
		name, uid := str(meta(obj)["name"]), str(meta(obj)["uid"])
		if c.o.PreconditionUID != "" {
			c.o.PreconditionUID = uid
		}
		events(1) // ADDED
		res, err := r.Delete(ctx, k, "v1", "default", name, c.o)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fast := res.Object == nil; fast != c.fast {
			t.Errorf("%s: decoded %v, want the fast path %v", c.name, !fast, c.fast)
		}
		if c.o.PropagationPolicy == "Orphan" {
			if res.Finished || res.UID != uid {
				t.Errorf("%s: finished %v uid %q, want a marked object of uid %q", c.name, res.Finished, res.UID, uid)
			}
			events(1) // MODIFIED: marked
			continue
		}
		if !res.Finished || res.UID != uid {
			t.Errorf("%s: finished %v uid %q, want true and %q", c.name, res.Finished, res.UID, uid)
		}
		_, getErr := r.Get(ctx, k, "v1", "default", name, rvplan.Plan{Mode: rvplan.Latest})
		if c.o.DryRun {
			if getErr != nil {
				t.Errorf("%s: the dry run removed the object: %v", c.name, getErr)
			}
			continue
		}
		if !apierrors.IsNotFound(getErr) {
			t.Errorf("%s: after the DELETE, get: %v", c.name, getErr)
		}
		if got, want := events(1)[0], "DELETED "+name+" "+uid; got != want {
			t.Errorf("%s: event %q, want %q", c.name, got, want)
		}
	}

	// Finalizers keep the object: the full path marks it.
	obj := create("cm-finalized", "a.io/x")
	events(1)
	res, err := r.Delete(ctx, k, "v1", "default", "cm-finalized", DeleteOptions{StatusOnly: true})
	if err != nil || res.Finished || res.Object == nil || res.UID != str(meta(obj)["uid"]) {
		t.Fatalf("finalized: %+v, %v; want a marked object", res, err)
	}
	// A missing object is a 404 either way.
	if _, err := r.Delete(ctx, k, "v1", "default", "cm-missing", DeleteOptions{StatusOnly: true}); !apierrors.IsNotFound(err) {
		t.Fatalf("missing: %v, want 404", err)
	}
}

// FuzzRemovableAsStored: what the one pass reads is what decoding shows.
func FuzzRemovableAsStored(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","data":{"a":"b"},"kind":"ConfigMap","metadata":{"name":"a","uid":"u-1"}}`,
		`{"metadata":{"finalizers":[],"uid":"x"}}`,
		`{"metadata":{"uid":"a\"b\u003c"}}`,
		`{"a":[1,{"b":null}],"metadata":{"deletionTimestamp":null}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		uid, ok := removableAsStored(value)
		if !ok {
			return
		}
		obj, err := parseStored(value)
		if err != nil || obj == nil {
			t.Fatalf("accepted %q, which does not decode: %v", value, err)
		}
		m, isMap := obj["metadata"].(map[string]any)
		if !isMap {
			t.Fatalf("accepted %q without a metadata object", value)
		}
		if _, has := m["finalizers"]; has {
			t.Fatalf("accepted %q with finalizers", value)
		}
		if _, has := m["deletionTimestamp"]; has {
			t.Fatalf("accepted %q with a deletionTimestamp", value)
		}
		if got, _ := m["uid"].(string); got != uid {
			t.Fatalf("%q: uid %q, decoded %q", value, uid, got)
		}
	})
}

// conflictOnce fails the first Delete with a conflict, as a write between
// a DELETE's read and its removal does.
type conflictOnce struct {
	storage.Store
	failed bool
}

func (s *conflictOnce) Delete(ctx context.Context, key string, expectModRevision int64) (storage.KeyValue, int64, error) {
	if !s.failed {
		s.failed = true
		return storage.KeyValue{}, 0, storage.ErrConflict
	}
	return s.Store.Delete(ctx, key, expectModRevision)
}

func TestDeleteStatusOnlyConflict(t *testing.T) {
	st := storage.NewMemory(storage.Options{})
	t.Cleanup(func() { _ = st.Close() })
	cs := &conflictOnce{Store: st}
	r := startRegistry(t, cs)
	k := r.Lookup("", "configmaps")
	ctx := context.Background()
	obj, err := r.Create(ctx, k, "v1", "default", Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Delete(ctx, k, "v1", "default", "a", DeleteOptions{StatusOnly: true})
	if err != nil || !res.Finished || res.UID != str(meta(obj)["uid"]) || !cs.failed {
		t.Fatalf("%+v, %v (conflict given %v); want the removal of uid %v", res, err, cs.failed, meta(obj)["uid"])
	}
	if res.Object == nil {
		t.Error("after the conflict the full path did not take over")
	}
	if _, err := r.Get(ctx, k, "v1", "default", "a", rvplan.Plan{Mode: rvplan.Latest}); !apierrors.IsNotFound(err) {
		t.Errorf("after the DELETE, get: %v", err)
	}
}
