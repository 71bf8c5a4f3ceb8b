package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// TestStoredMayMatch: the cheap pass of the initial events over stored
// objects excludes exactly what the selector's labels, metadata.name and
// metadata.namespace exclude, and lets anything else through to the decode.
func TestStoredMayMatch(t *testing.T) {
	r, k := newTestRegistry(t)
	kv := storage.KeyValue{Key: keyOf(k, "ns", "a"), ModRevision: 7,
		Value: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns","labels":{"app":"web"}},"data":{"x":"1"}}`)}
	tests := []struct {
		labels, fields string
		want           bool
	}{
		{"app=web", "", true},
		{"app=db", "", false},
		{"tier", "", false},
		{"!tier", "", true},
		{"", "metadata.name=a", true},
		{"", "metadata.name=b", false},
		{"", "metadata.name!=a", false},
		{"", "metadata.namespace=ns", true},
		{"", "metadata.namespace=other", false},
		{"app=web", "metadata.name!=a", false},
		{"", "spec.kindSpecific=x", true}, // needs the whole object: may match
		{"", "metadata.name=a,spec.kindSpecific=x", true},
		{"", "metadata.name=b,spec.kindSpecific=x", false}, // the key decides its part
		{"", "metadata.name!=a,spec.kindSpecific=x", false},
		{"", "metadata.namespace=ns,spec.kindSpecific=x", true},
		{"app=db", "spec.kindSpecific=x", false},
	}
	for _, tt := range tests {
		ls, err := labels.Parse(tt.labels)
		if err != nil {
			t.Fatal(err)
		}
		fs, err := fields.ParseSelector(tt.fields)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.storedMayMatch(k, "v1", Selector{Labels: ls, Fields: fs}, kv); got != tt.want {
			t.Errorf("labels %q fields %q: %v, want %v", tt.labels, tt.fields, got, tt.want)
		}
	}
	bad := storage.KeyValue{Key: keyOf(k, "ns", "b"), ModRevision: 8, Value: []byte("not json")}
	if !r.storedMayMatch(k, "v1", Selector{Labels: labels.SelectorFromSet(labels.Set{"app": "web"})}, bad) {
		t.Error("undecodable bytes must go to the full decode, which reports them")
	}
	// At another version labels are left to the decode (a conversion could
	// change them); the key still decides name and namespace.
	db := labels.SelectorFromSet(labels.Set{"app": "db"})
	if !r.storedMayMatch(k, "v2", Selector{Labels: db}, kv) {
		t.Error("labels excluded an object at a version other than the storage version")
	}
	if r.storedMayMatch(k, "v2", Selector{Fields: fields.OneTermEqualSelector("metadata.name", "b")}, kv) {
		t.Error("the key did not exclude another name at another version")
	}
	// A kind that serves metadata.name itself, and a cluster-scoped kind's
	// metadata.namespace, are not read from the key.
	own := &Kind{Resource: k.Resource, Namespaced: true,
		Fields: map[string]func(Object) string{"metadata.name": func(Object) string { return "b" }}}
	cluster := &Kind{Resource: k.Resource}
	for _, c := range []struct {
		k      *Kind
		fields string
	}{{own, "metadata.name=b"}, {cluster, "metadata.namespace=other"}} {
		if !r.storedMayMatch(c.k, "v1", Selector{Fields: fields.ParseSelectorOrDie(c.fields)}, kv) {
			t.Errorf("%s: excluded by the key, want left to the decode", c.fields)
		}
	}
}

// TestWatchInitialState: the initial state honours the selector, the
// initialisation callback runs once when it is delivered, and a watch whose
// client leaves mid-way stops and releases its slot.
func TestWatchInitialState(t *testing.T) {
	st := storage.NewMemory(storage.Options{})
	r := New(Config{Store: st})
	r.Register(BuiltinKinds(r)...)
	defer func() { r.Close(); _ = st.Close() }()
	k := r.Lookup("", "configmaps")
	ctx := context.Background()
	for i := range 50 {
		app := []string{"web", "db"}[i%2]
		v := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%02d","namespace":"ns","labels":{"app":%q}}}`, i, app)
		if _, err := st.Create(ctx, keyOf(k, "ns", fmt.Sprintf("c%02d", i)), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	plan := rvplan.Plan{Mode: rvplan.Latest, InitialEvents: true}
	web, _ := labels.Parse("app=web")

	var done atomic.Int32
	wctx := WithInitDone(ctx, func() { done.Add(1) })
	w, err := r.Watch(wctx, k, "v1", "ns", plan, Selector{Labels: web})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 25 {
		ev := <-w.Events()
		if ev.Type != Added || meta(ev.Object)["name"] != fmt.Sprintf("c%02d", 2*i) {
			t.Fatalf("initial event %d: %s %v", i, ev.Type, meta(ev.Object)["name"])
		}
	}
	w.RequestBookmark()
	if ev := <-w.Events(); ev.Type != Bookmark {
		t.Fatalf("after the initial state: %s, want the requested BOOKMARK", ev.Type)
	}
	if done.Load() != 1 {
		t.Fatalf("initialisation callback ran %d times once the state was delivered, want 1", done.Load())
	}
	w.Stop()

	cctx, cancel := context.WithCancel(WithInitDone(ctx, func() { done.Add(1) }))
	w, err = r.Watch(cctx, k, "v1", "ns", plan, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	<-w.Events()
	cancel() // the client leaves after one of 50 objects
	n := 0
	for range w.Events() {
		n++
	}
	if n > initBatch {
		t.Errorf("%d more events after the client left", n)
	}
	if done.Load() != 2 {
		t.Errorf("initialisation callback ran %d times in all, want 2", done.Load())
	}
	if len(initSlots) != 0 {
		t.Errorf("%d decoding slots still held", len(initSlots))
	}
}

// TestWatchSharedSnapshot: watches that start at one revision of a
// collection share one list of it, a write gives later watches a new one,
// and the last watch done with a snapshot drops it.
func TestWatchSharedSnapshot(t *testing.T) {
	st := storage.NewMemory(storage.Options{})
	r := New(Config{Store: st})
	r.Register(BuiltinKinds(r)...)
	defer func() { r.Close(); _ = st.Close() }()
	k := r.Lookup("", "configmaps")
	ctx := context.Background()
	create := func(name string) {
		v := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns"}}`, name)
		if _, err := st.Create(ctx, keyOf(k, "ns", name), []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	create("a")
	create("b")
	prefix := prefixOf(k, "ns")
	s1, err := r.sharedSnapshot(ctx, prefix)
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := r.sharedSnapshot(ctx, prefix)
	if s1 != s2 || len(s1.items) != 2 {
		t.Fatalf("two watches at one revision: snapshots %p and %p of %d items, want one of 2", s1, s2, len(s1.items))
	}
	create("c")
	s3, _ := r.sharedSnapshot(ctx, prefix)
	if s3 == s1 || len(s3.items) != 3 || s3.revision != st.CurrentRevision() {
		t.Fatalf("after a write: %d items at %d, want a new snapshot of 3 at %d", len(s3.items), s3.revision, st.CurrentRevision())
	}
	other, _ := r.sharedSnapshot(ctx, prefixOf(k, "other"))
	if other == s3 || len(other.items) != 0 {
		t.Fatalf("another namespace shares a snapshot: %d items", len(other.items))
	}
	for _, s := range []*snapshot{s1, s2, s3, other} {
		s.release()
	}
	snapshots.mu.Lock()
	defer snapshots.mu.Unlock()
	for key := range snapshots.m {
		if key.store == st {
			t.Errorf("snapshot %v kept after its last watch released it", key)
		}
	}
}

// TestBurstTracker: memory is released once after a burst of at least
// threshold overlapping initialisations ends, not after smaller ones, and
// a burst that resumes cancels the pending release. Timers are not waited
// for: fire is called with the scheduled release's generation.
func TestBurstTracker(t *testing.T) {
	var released int
	b := &burstTracker{threshold: 3, quiet: time.Hour, interval: time.Hour, release: func() { released++ }}
	scheduled := func() (uint64, bool) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.gen, b.timer != nil
	}
	b.begin()
	b.begin()
	b.end()
	b.end()
	if _, ok := scheduled(); ok {
		t.Fatal("a release was scheduled after 2 overlapping initialisations, threshold 3")
	}
	for range 3 {
		b.begin()
	}
	for range 3 {
		b.end()
	}
	gen, ok := scheduled()
	if !ok {
		t.Fatal("no release scheduled after a burst of 3")
	}
	b.begin() // the burst resumes: the scheduled release is cancelled
	b.fire(gen)
	if released != 0 {
		t.Fatal("a cancelled release ran")
	}
	b.end()
	gen, ok = scheduled()
	if !ok {
		t.Fatal("no release scheduled when the resumed burst ended")
	}
	b.fire(gen)
	b.fire(gen)
	if released != 1 {
		t.Fatalf("released %d times, want 1", released)
	}
	b.begin()
	b.end()
	if _, ok := scheduled(); ok {
		t.Fatal("a release was scheduled for one initialisation after the burst was released")
	}
}

// TestWatchInitialStateFromFile: with the bbolt store the shared snapshot
// holds no values; each watch reads them as it sends them, and one whose
// snapshot revision is compacted under it while a key changes ends with a
// 410 ERROR event instead of a gap.
func TestWatchInitialStateFromFile(t *testing.T) {
	st, err := storage.OpenBolt(filepath.Join(t.TempDir(), "store.db"), storage.Options{HistoryWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	r := New(Config{Store: st})
	r.Register(BuiltinKinds(r)...)
	defer func() { r.Close(); _ = st.Close() }()
	k := r.Lookup("", "configmaps")
	ctx := context.Background()
	value := func(name, v string) []byte {
		return []byte(fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns"},"data":{"v":%q}}`, name, v))
	}
	for i := range 5 {
		if _, err := st.Create(ctx, keyOf(k, "ns", fmt.Sprintf("c%d", i)), value(fmt.Sprintf("c%d", i), "1")); err != nil {
			t.Fatal(err)
		}
	}
	plan := rvplan.Plan{Mode: rvplan.Latest, InitialEvents: true}
	w, err := r.Watch(ctx, k, "v1", "ns", plan, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ev := <-w.Events()
		data, _ := ev.Object["data"].(map[string]any)
		if ev.Type != Added || meta(ev.Object)["name"] != fmt.Sprintf("c%d", i) || data["v"] != "1" {
			t.Fatalf("initial event %d: %s %v", i, ev.Type, ev.Object)
		}
	}
	w.Stop()

	w, err = r.Watch(ctx, k, "v1", "ns", plan, Selector{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if ev := <-w.Events(); ev.Type != Added {
		t.Fatalf("first initial event: %s", ev.Type)
	}
	if _, err := st.Update(ctx, keyOf(k, "ns", "c3"), value("c3", "2"), 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Compact(st.CurrentRevision()); err != nil {
		t.Fatal(err)
	}
	var types []string
	for ev := range w.Events() {
		types = append(types, ev.Type)
		if ev.Type == Error {
			if code, _ := ev.Object["code"].(float64); code != 410 {
				t.Errorf("ERROR event: %v, want a 410", ev.Object)
			}
			break
		}
	}
	if want := []string{Added, Added, Error}; !slices.Equal(types, want) {
		t.Errorf("after the compaction: %v, want %v (c1, c2, then c3's revision is gone)", types, want)
	}
}

// TestStoredMayMatchAgreesWithDecode: over generated objects, the cheap pass
// never excludes an object the selector selects, and where the selector is
// made only of labels, metadata.name and metadata.namespace it decides
// exactly as matching the decoded object does.
func TestStoredMayMatchAgreesWithDecode(t *testing.T) {
	r, k := newTestRegistry(t)
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(of ...string) string { return of[rng.IntN(len(of))] }
	selectors := []struct {
		labels, fields string
		exact          bool
	}{
		{"app=web", "", true},
		{"app!=web", "", true},
		{"app in (web,db),tier", "", true},
		{"!tier", "", true},
		{"", "metadata.name=o-3", true},
		{"", "metadata.namespace!=ns-1", true},
		{"app=db", "metadata.name!=o-2,metadata.namespace=ns-0", true},
		{"", "spec.other=x", false},
		{"tier=1", "metadata.name=o-1,spec.other=x", false},
	}
	for i := range 400 {
		ns, name := pick("ns-0", "ns-1"), fmt.Sprintf("o-%d", rng.IntN(6))
		lbls := map[string]string{}
		for _, key := range []string{"app", "tier"} {
			if rng.IntN(3) > 0 {
				lbls[key] = pick("web", "db", "1", "2")
			}
		}
		lj, _ := json.Marshal(lbls)
		value := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"labels":%s,"name":%q,"namespace":%q}}`, lj, name, ns)
		kv := storage.KeyValue{Key: keyOf(k, ns, name), ModRevision: int64(i + 1), Value: value}
		obj, err := r.decode(k, "v1", kv, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range selectors {
			sel := Selector{Labels: labels.SelectorFromSet(nil), Fields: fields.Everything()}
			if sel.Labels, err = labels.Parse(c.labels); err != nil {
				t.Fatal(err)
			}
			if sel.Fields, err = fields.ParseSelector(c.fields); err != nil {
				t.Fatal(err)
			}
			may, does := r.storedMayMatch(k, "v1", sel, kv), sel.Matches(k, obj)
			if does && !may || c.exact && may != does {
				t.Fatalf("%s %s on %s: cheap pass %v, decoded match %v", c.labels, c.fields, value, may, does)
			}
		}
	}
}
