package registry

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// indexFixture is a registry over st serving configmaps, with namespaces a
// and b (b sorts after a, the namespace most lists read).
func indexFixture(t testing.TB, st storage.Store) (*Registry, *Kind) {
	t.Helper()
	r := startRegistry(t, st)
	ctx := context.Background()
	nsK := r.Lookup("", "namespaces")
	for _, ns := range []string{"a", "b"} {
		if _, err := r.Create(ctx, nsK, "v1", "", Object{"metadata": map[string]any{"name": ns}}, WriteOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return r, r.Lookup("", "configmaps")
}

// indexWorkload writes configmaps n0..n{names-1} in namespaces a and b:
// creates, label changes (labels added, changed, removed) and deletes.
type indexWorkload struct {
	r     *Registry
	k     *Kind
	names int
}

var indexLabelValues = map[string][]string{"app": {"x", "y", "z"}, "tier": {"1", "2"}, "e": {""}}

func randomLabels(rng *rand.Rand) map[string]any {
	l := map[string]any{}
	for key, vals := range indexLabelValues {
		if rng.IntN(3) > 0 {
			l[key] = vals[rng.IntN(len(vals))]
		}
	}
	return l
}

// step does one random write (its errors are those of a lost race:
// creating what exists, changing what is gone).
func (w indexWorkload) step(t testing.TB, rng *rand.Rand) {
	ctx := context.Background()
	ns := []string{"a", "b"}[rng.IntN(2)]
	name := "n" + strconv.Itoa(rng.IntN(w.names))
	obj := Object{"metadata": map[string]any{"name": name, "labels": randomLabels(rng)}, "data": map[string]any{"v": strconv.Itoa(rng.IntN(100))}}
	var err error
	switch rng.IntN(5) {
	case 0, 1:
		_, err = w.r.Create(ctx, w.k, "v1", ns, obj, WriteOptions{})
	case 2, 3:
		_, err = w.r.Update(ctx, w.k, "v1", ns, name, obj, WriteOptions{})
	default:
		_, err = w.r.Delete(ctx, w.k, "v1", ns, name, DeleteOptions{})
	}
	if err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		t.Error(err)
	}
}

var indexSelectors = []struct{ labels, fields string }{
	{"app=x", ""}, {"app==y", ""}, {"app in (x,z)", ""}, {"app in (x,y),tier=1", ""}, {"app=x,tier!=2", ""},
	{"tier=2,!e", ""}, {"e=", ""}, {"app=nope", ""}, {"app notin (x)", ""}, {"tier", ""}, {"!tier", ""},
	{"app=x", "metadata.name!=n3"}, {"app in (x,y)", "metadata.namespace=b"}, {"", "metadata.name=n1"},
}

type indexList struct {
	ns   string
	sel  int
	req  rvplan.Request
	scan bool
}

// list runs one list; the scan path when scanOnly.
func (w indexWorkload) list(t *testing.T, l indexList) (*EncodedList, error) {
	t.Helper()
	ctx := context.Background()
	if l.scan {
		ctx = context.WithValue(ctx, scanOnlyKey{}, true)
	}
	l.req.Verb = rvplan.List
	plan, serr := rvplan.Make(l.req)
	if serr != nil {
		t.Fatalf("%+v: %v", l.req, serr)
	}
	s := indexSelectors[l.sel]
	sel := Selector{Labels: mustLabels(t, s.labels), Fields: fields.Everything()}
	if s.fields != "" {
		f, err := fields.ParseSelector(s.fields)
		if err != nil {
			t.Fatal(err)
		}
		sel.Fields = f
	}
	return w.r.ListEncoded(ctx, w.k, "v1", l.ns, plan, sel, false)
}

// same lists l through the index and through the scan and fails unless
// the answers are the same bytes; it returns the page.
func (w indexWorkload) same(t *testing.T, l indexList) *EncodedList {
	t.Helper()
	got, gerr := w.list(t, l)
	l.scan = true
	want, werr := w.list(t, l)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("%s %+v ns %q: index error %v, scan error %v", indexSelectors[l.sel], l.req, l.ns, gerr, werr)
	}
	if gerr != nil {
		return nil
	}
	if !samePage(got, want) {
		t.Fatalf("%s %+v ns %q: index page %s, scan page %s", indexSelectors[l.sel], l.req, l.ns, describe(got), describe(want))
	}
	return got
}

func samePage(a, b *EncodedList) bool {
	if a.ResourceVersion != b.ResourceVersion || a.Continue != b.Continue || (a.RemainingItemCount == nil) != (b.RemainingItemCount == nil) || len(a.Raw) != len(b.Raw) {
		return false
	}
	for i := range a.Raw {
		if !bytes.Equal(a.Raw[i], b.Raw[i]) {
			return false
		}
	}
	return true
}

func describe(l *EncodedList) string {
	var names []string
	for _, raw := range l.Raw {
		i := bytes.Index(raw, []byte(`"name":"`))
		j := bytes.IndexByte(raw[i+8:], '"')
		names = append(names, string(raw[i+8:i+8+j]))
	}
	return fmt.Sprintf("rv %d continue %q items %v", l.ResourceVersion, l.Continue, names)
}

func randomList(rng *rand.Rand, revs []int64) indexList {
	l := indexList{ns: []string{"a", "a", "b", ""}[rng.IntN(4)], sel: rng.IntN(len(indexSelectors))}
	if rng.IntN(2) == 0 {
		l.req.Limit = 1 + rng.Int64N(4)
	}
	switch rng.IntN(4) {
	case 0: // an older revision, exactly
		l.req.ResourceVersion = strconv.FormatInt(revs[rng.IntN(len(revs))], 10)
		l.req.ResourceVersionMatch = "Exact"
	case 1:
		l.req.ResourceVersion = strconv.FormatInt(revs[rng.IntN(len(revs))], 10)
		l.req.ResourceVersionMatch = "NotOlderThan"
	}
	return l
}

// TestLabelIndexDifferential: random writes, then lists (selectors,
// limits, continue tokens, latest and older revisions, continuing old
// snapshots after further writes) answer the same through the index as
// through the scan.
func TestLabelIndexDifferential(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			st := storage.NewMemory(storage.Options{HistoryWindow: -1})
			defer st.Close()
			r, k := indexFixture(t, st)
			w := indexWorkload{r: r, k: k, names: 12}
			rng := rand.New(rand.NewPCG(seed, 7))
			var revs []int64
			var pending []indexList // pages to continue later
			for i := range 400 {
				w.step(t, rng)
				revs = append(revs, st.CurrentRevision())
				if i%4 != 0 {
					continue
				}
				for range 4 {
					l := randomList(rng, revs)
					page := w.same(t, l)
					// Follow the pages now, or keep the token to continue
					// after more writes.
					for page != nil && page.Continue != "" {
						next := indexList{ns: l.ns, sel: l.sel, req: rvplan.Request{Limit: l.req.Limit, Continue: page.Continue}}
						if rng.IntN(3) == 0 {
							pending = append(pending, next)
							break
						}
						page = w.same(t, next)
					}
				}
				if len(pending) > 0 && rng.IntN(2) == 0 {
					j := rng.IntN(len(pending))
					w.same(t, pending[j])
					pending = append(pending[:j], pending[j+1:]...)
				}
			}
			t.Logf("the index answered %d lists, declined %d", r.index.served, r.index.declined)
			if r.index.served == 0 || r.index.declined == 0 {
				t.Errorf("the index answered %d lists and declined %d: both paths must run", r.index.served, r.index.declined)
			}
		})
	}
}

// TestLabelIndexAfterRestart: a registry over a store written by an
// earlier one builds its index from what is stored.
func TestLabelIndexAfterRestart(t *testing.T) {
	st := storage.NewMemory(storage.Options{HistoryWindow: -1})
	defer st.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	r1, k1 := indexFixture(t, st)
	w := indexWorkload{r: r1, k: k1, names: 20}
	var revs []int64 // revisions written by r1 too: before the index was built
	for range 200 {
		w.step(t, rng)
		revs = append(revs, st.CurrentRevision())
	}
	r2, k2 := indexFixture(t, st)
	w = indexWorkload{r: r2, k: k2, names: 20}
	for i := range 200 {
		revs = append(revs, st.CurrentRevision())
		for range 3 {
			w.same(t, randomList(rng, revs))
		}
		if i%2 == 0 {
			w.step(t, rng)
		}
	}
	if r2.index.served == 0 {
		t.Error("the index answered no list")
	}
}

// TestLabelIndexConcurrentWrites: writers run while lists (and the first
// list's build of the index) do; every page read through the index equals
// the scan at the page's revision, continued pages included.
func TestLabelIndexConcurrentWrites(t *testing.T) {
	st := storage.NewMemory(storage.Options{HistoryWindow: -1})
	defer st.Close()
	r, k := indexFixture(t, st)
	w := indexWorkload{r: r, k: k, names: 16}
	seed := rand.New(rand.NewPCG(5, 5))
	for range 60 {
		w.step(t, seed)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			for range 1500 { // bounded; the lists below end the writers sooner
				select {
				case <-stop:
					return
				default:
				}
				w.step(t, rng)
			}
		}()
	}
	// A failing check must not leave writers running past the test.
	defer func() {
		close(stop)
		wg.Wait()
	}()
	rng := rand.New(rand.NewPCG(6, 6))
	for range 300 {
		l := indexList{ns: []string{"a", "b", ""}[rng.IntN(3)], sel: rng.IntN(len(indexSelectors))}
		if rng.IntN(2) == 0 {
			l.req.Limit = 1 + rng.Int64N(3)
		}
		for {
			got, err := w.list(t, l)
			if err != nil {
				t.Fatal(err)
			}
			// The scan at the revision the page was read at.
			want := l
			want.scan = true
			if want.req.Continue == "" {
				want.req.ResourceVersion = strconv.FormatInt(got.ResourceVersion, 10)
				want.req.ResourceVersionMatch = "Exact"
			}
			exp, err := w.list(t, want)
			if err != nil {
				t.Fatal(err)
			}
			if !samePage(got, exp) {
				t.Fatalf("%s %+v ns %q: index page %s, scan page %s", indexSelectors[l.sel], l.req, l.ns, describe(got), describe(exp))
			}
			if got.Continue == "" {
				break
			}
			l.req = rvplan.Request{Limit: l.req.Limit, Continue: got.Continue}
		}
	}
	if r.index.served == 0 {
		t.Error("the index answered no list")
	}
}

// gatedStore stops a write of one key before the store commits it and
// again after, until told to go on: the moments between a write's start,
// its commit, and the index hearing of its end.
type gatedStore struct {
	storage.Store
	key                string
	entered, committed chan struct{}
	proceed, release   chan struct{}
	armed              atomic.Bool // stops one write only
}

func newGatedStore(st storage.Store) *gatedStore {
	return &gatedStore{Store: st, entered: make(chan struct{}), committed: make(chan struct{}), proceed: make(chan struct{}), release: make(chan struct{})}
}

func (s *gatedStore) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	if key != s.key || !s.armed.CompareAndSwap(true, false) {
		return s.Store.Update(ctx, key, value, expect)
	}
	close(s.entered)
	<-s.proceed
	rev, err := s.Store.Update(ctx, key, value, expect)
	close(s.committed)
	<-s.release
	return rev, err
}

// TestLabelIndexWriteInFlight: a write that began before the kind was
// indexed, or after, and has committed but not ended, is found by lists.
func TestLabelIndexWriteInFlight(t *testing.T) {
	for _, before := range []bool{true, false} {
		t.Run(fmt.Sprintf("begun before tracking %v", before), func(t *testing.T) {
			st := storage.NewMemory(storage.Options{HistoryWindow: -1})
			defer st.Close()
			gs := newGatedStore(st)
			r, k := indexFixture(t, gs)
			w := indexWorkload{r: r, k: k}
			ctx := context.Background()
			for _, name := range []string{"m0", "m1"} {
				obj := Object{"metadata": map[string]any{"name": name, "labels": map[string]any{"app": "x"}}}
				if _, err := r.Create(ctx, k, "v1", "a", obj, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			sel := 1 // app==y
			if !before {
				w.same(t, indexList{ns: "a", sel: sel}) // the kind is indexed from here
			}
			gs.key = keyOf(k, "a", "m1")
			gs.armed.Store(true)
			done := make(chan error)
			go func() {
				obj := Object{"metadata": map[string]any{"name": "m1", "labels": map[string]any{"app": "y"}}}
				_, err := r.Update(ctx, k, "v1", "a", "m1", obj, WriteOptions{})
				done <- err
			}()
			<-gs.entered
			w.same(t, indexList{ns: "a", sel: sel}) // before: builds the index while the write waits
			close(gs.proceed)
			<-gs.committed
			page := w.same(t, indexList{ns: "a", sel: sel})
			if len(page.Raw) != 1 {
				t.Errorf("while the write is in flight: %s, want m1", describe(page))
			}
			close(gs.release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if page := w.same(t, indexList{ns: "a", sel: sel}); len(page.Raw) != 1 {
				t.Errorf("after the write: %s, want m1", describe(page))
			}
			if r.index.served == 0 {
				t.Error("the index answered no list")
			}
		})
	}
}

// TestLabelIndexWritesEndOutOfOrder: a write of a key ends after a later
// write of it; the labels it leaves were the key's until that later write,
// so lists at revisions before it must not trust the index.
func TestLabelIndexWritesEndOutOfOrder(t *testing.T) {
	st := storage.NewMemory(storage.Options{HistoryWindow: -1})
	defer st.Close()
	gs := newGatedStore(st)
	close(gs.proceed)
	r, k := indexFixture(t, gs)
	w := indexWorkload{r: r, k: k}
	ctx := context.Background()
	write := func(app string) error {
		obj := Object{"metadata": map[string]any{"name": "m1", "labels": map[string]any{"app": app}}}
		_, err := r.Update(ctx, k, "v1", "a", "m1", obj, WriteOptions{})
		return err
	}
	if _, err := r.Create(ctx, k, "v1", "a", Object{"metadata": map[string]any{"name": "m1", "labels": map[string]any{"app": "x"}}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	w.same(t, indexList{ns: "a", sel: 1}) // index configmaps
	gs.key = keyOf(k, "a", "m1")
	gs.armed.Store(true)
	done := make(chan error)
	go func() { done <- write("y") }() // ends last
	<-gs.committed
	first := st.CurrentRevision()
	if err := write("x"); err != nil {
		t.Fatal(err)
	}
	close(gs.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	exact := rvplan.Request{ResourceVersion: strconv.FormatInt(first, 10), ResourceVersionMatch: "Exact"}
	if page := w.same(t, indexList{ns: "a", sel: 1, req: exact}); len(page.Raw) != 1 {
		t.Errorf("app==y at %d: %s, want m1", first, describe(page))
	}
	if page := w.same(t, indexList{ns: "a", sel: 1}); len(page.Raw) != 0 {
		t.Errorf("app==y now: %s, want nothing", describe(page))
	}
}

// TestLabelIndexBounded: a kind that grows past the bound stops being
// indexed, frees what it held, and its lists still answer (by the scan).
func TestLabelIndexBounded(t *testing.T) {
	st := storage.NewMemory(storage.Options{HistoryWindow: -1})
	defer st.Close()
	r, k := indexFixture(t, st)
	r.index.max = 30
	w := indexWorkload{r: r, k: k, names: 12}
	rng := rand.New(rand.NewPCG(4, 4))
	w.same(t, indexList{ns: "a", sel: 0})
	for range 300 {
		w.step(t, rng)
		if r.index.size > r.index.max {
			t.Fatalf("the index holds %d keys, bound %d", r.index.size, r.index.max)
		}
	}
	if r.index.served == 0 {
		t.Error("the index answered no list while under its bound")
	}
	// 40 more labelled objects take the kind past the bound.
	for _, ns := range []string{"a", "b"} {
		for i := range 20 {
			obj := Object{"metadata": map[string]any{"name": "big" + strconv.Itoa(i), "labels": map[string]any{"app": "x"}}}
			if _, err := r.Create(context.Background(), k, "v1", ns, obj, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ki := r.index.kinds[basePrefix(k)]; !ki.off || r.index.size != 0 {
		t.Fatalf("past the bound: kind off %v, %d keys held", ki.off, r.index.size)
	}
	served := r.index.served
	for range 20 {
		w.same(t, randomList(rng, []int64{st.CurrentRevision()}))
		w.step(t, rng)
	}
	if r.index.served != served {
		t.Error("the index answered after it was dropped")
	}
}
