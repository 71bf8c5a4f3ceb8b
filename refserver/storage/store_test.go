package storage

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRevisionsAndPreconditions(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, Options{})
			ctx := context.Background()
			if got := s.CurrentRevision(); got != 0 {
				t.Fatalf("empty store revision %d", got)
			}
			steps := []struct {
				name    string
				do      func() (int64, error)
				wantRev int64
				wantErr error
			}{
				{"create a", func() (int64, error) { return s.Create(ctx, "a", []byte("1")) }, 1, nil},
				{"create b", func() (int64, error) { return s.Create(ctx, "b", []byte("1")) }, 2, nil},
				{"create a again", func() (int64, error) { return s.Create(ctx, "a", []byte("x")) }, 0, ErrKeyExists},
				{"update missing", func() (int64, error) { return s.Update(ctx, "zz", []byte("x"), 0) }, 0, ErrNotFound},
				{"update a stale", func() (int64, error) { return s.Update(ctx, "a", []byte("x"), 2) }, 0, ErrConflict},
				{"update a matching", func() (int64, error) { return s.Update(ctx, "a", []byte("2"), 1) }, 3, nil},
				{"update a unconditional", func() (int64, error) { return s.Update(ctx, "a", []byte("3"), 0) }, 4, nil},
				{"delete b stale", func() (int64, error) { _, r, err := s.Delete(ctx, "b", 1); return r, err }, 0, ErrConflict},
				{"delete b matching", func() (int64, error) { _, r, err := s.Delete(ctx, "b", 2); return r, err }, 5, nil},
				{"delete b again", func() (int64, error) { _, r, err := s.Delete(ctx, "b", 0); return r, err }, 0, ErrNotFound},
				{"update deleted b", func() (int64, error) { return s.Update(ctx, "b", []byte("x"), 0) }, 0, ErrNotFound},
				{"recreate b", func() (int64, error) { return s.Create(ctx, "b", []byte("new")) }, 6, nil},
			}
			for _, st := range steps {
				rev, err := st.do()
				if !errors.Is(err, st.wantErr) || rev != st.wantRev {
					t.Fatalf("%s: got (%d, %v), want (%d, %v)", st.name, rev, err, st.wantRev, st.wantErr)
				}
			}
			if got := s.CurrentRevision(); got != 6 {
				t.Fatalf("current revision %d, want 6", got)
			}
			gets := []struct {
				key  string
				rev  int64
				want KeyValue
				err  error
			}{
				{"a", 0, KeyValue{"a", []byte("3"), 1, 4}, nil},
				{"a", 1, KeyValue{"a", []byte("1"), 1, 1}, nil},
				{"a", 3, KeyValue{"a", []byte("2"), 1, 3}, nil},
				{"b", 4, KeyValue{"b", []byte("1"), 2, 2}, nil},
				{"b", 5, KeyValue{}, ErrNotFound},
				{"b", 6, KeyValue{"b", []byte("new"), 6, 6}, nil},
				{"b", 1, KeyValue{}, ErrNotFound},
				{"a", 7, KeyValue{}, ErrFutureRevision},
				{"a", -1, KeyValue{}, nil},
			}
			for _, g := range gets {
				got, err := s.Get(ctx, g.key, g.rev)
				if g.rev < 0 {
					if err == nil {
						t.Fatalf("Get at negative revision: no error")
					}
					continue
				}
				if !errors.Is(err, g.err) || (err == nil && !equalKV(got, g.want)) {
					t.Fatalf("Get(%q, %d) = %v, %v; want %v, %v", g.key, g.rev, got, err, g.want, g.err)
				}
			}
		})
	}
}

func TestDeleteReturnsDeletedValue(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	ctx := context.Background()
	s.Create(ctx, "k", []byte("v1"))
	s.Update(ctx, "k", []byte("v2"), 0)
	kv, rev, err := s.Delete(ctx, "k", 0)
	if err != nil || rev != 3 || !equalKV(kv, KeyValue{"k", []byte("v2"), 1, 2}) {
		t.Fatalf("Delete = %v, %d, %v", kv, rev, err)
	}
}

func TestInputValueIsCopied(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	buf := []byte("before")
	if _, err := s.Create(context.Background(), "k", buf); err != nil {
		t.Fatal(err)
	}
	copy(buf, "AFTER!")
	kv, _ := s.Get(context.Background(), "k", 0)
	if string(kv.Value) != "before" {
		t.Fatalf("stored value changed with caller's buffer: %q", kv.Value)
	}
}

// TestHistoricReads checks every revision of a random history, deleted and
// recreated keys included, against the model.
func TestHistoricReads(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := b.open(t, Options{HistoryWindow: -1})
			m := newModel(t, s)
			m.randomOps(150, 12, rng.IntN)
			for rev := int64(1); rev <= s.CurrentRevision(); rev++ {
				m.checkRevision(rev)
			}
		})
	}
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name+"/explicit", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 4))
			s := b.open(t, Options{HistoryWindow: -1})
			m := newModel(t, s)
			m.randomOps(60, 8, rng.IntN)
			for _, c := range []struct{ compact, want int64 }{{5, 5}, {5, 5}, {3, 5}, {20, 20}, {59, 59}} {
				if err := s.Compact(c.compact); err != nil {
					t.Fatalf("Compact(%d): %v", c.compact, err)
				}
				want := c.want
				if got := s.CompactedRevision(); got != want {
					t.Fatalf("after Compact(%d) compacted = %d, want %d", c.compact, got, want)
				}
				for rev := int64(1); rev < want; rev++ {
					if _, err := s.Get(ctx, "k00", rev); !errors.Is(err, ErrCompacted) {
						t.Fatalf("Get at compacted %d: %v", rev, err)
					}
					if _, err := s.List(ctx, ListOptions{Revision: rev}); !errors.Is(err, ErrCompacted) {
						t.Fatalf("List at compacted %d: %v", rev, err)
					}
				}
				// The compacted revision's own state stays readable, as etcd's does.
				for rev := want; rev <= s.CurrentRevision(); rev++ {
					m.checkRevision(rev)
				}
			}
			// Beyond the current revision: everything but the live keys goes.
			if err := s.Compact(1000); err != nil {
				t.Fatal(err)
			}
			if got := s.CompactedRevision(); got != 60 {
				t.Fatalf("Compact(1000) compacted = %d, want 60", got)
			}
			res, err := s.List(ctx, ListOptions{})
			if err != nil || !equalKVs(res.Items, m.wantList("", 60)) {
				t.Fatalf("live keys after full compaction: %v, %v", res.Items, err)
			}
			if _, err := s.Get(ctx, "k00", 61); !errors.Is(err, ErrFutureRevision) {
				t.Fatalf("Get beyond current: %v", err)
			}
			// Writes continue after the compacted revision.
			m.randomOps(5, 8, rng.IntN)
			for rev := int64(61); rev <= 65; rev++ {
				m.checkRevision(rev)
			}
		})
		t.Run(b.name+"/count", func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			s := b.open(t, Options{HistoryWindow: -1, HistoryMaxRevisions: 10})
			m := newModel(t, s)
			for i := 1; i <= 40; i++ {
				m.randomOps(1, 6, rng.IntN)
				if want := max(0, int64(i)-10); s.CompactedRevision() != want {
					t.Fatalf("after %d writes compacted = %d, want %d", i, s.CompactedRevision(), want)
				}
			}
			for rev := int64(30); rev <= 40; rev++ {
				m.checkRevision(rev)
			}
			if _, err := s.Get(ctx, "k00", 29); !errors.Is(err, ErrCompacted) {
				t.Fatalf("Get at 29: %v", err)
			}
		})
		t.Run(b.name+"/window", func(t *testing.T) {
			clock := newFakeClock()
			s := b.open(t, Options{HistoryWindow: time.Minute, Clock: clock.Now, CompactInterval: -1})
			m := newModel(t, s)
			// Revisions 1..5 written ten seconds apart.
			for i := range 5 {
				m.create(fmt.Sprintf("k%d", i), "v")
				clock.Advance(10 * time.Second)
			}
			// Now = 50s. Revision r stopped being current when r+1 was written
			// at 10*r seconds; a 1m window keeps them all.
			if err := s.ApplyRetention(); err != nil || s.CompactedRevision() != 0 {
				t.Fatalf("nothing should expire yet: compacted %d, %v", s.CompactedRevision(), err)
			}
			clock.Advance(35 * time.Second) // now 85s: revisions 1 (ended 10s) and 2 (ended 20s) passed the window; compacted to 2, whose own state stays readable.
			if err := s.ApplyRetention(); err != nil || s.CompactedRevision() != 2 {
				t.Fatalf("compacted = %d (%v), want 2", s.CompactedRevision(), err)
			}
			// An hour later a write applies the window too: revisions 3 and 4
			// ended long ago; 5 was current until this write.
			clock.Advance(time.Hour)
			m.update("k0", "w")
			if got := s.CompactedRevision(); got != 4 {
				t.Fatalf("after write compacted = %d, want 4", got)
			}
			m.checkRevision(4)
			m.checkRevision(5)
			m.checkRevision(6)
			if _, err := s.Get(ctx, "k1", 3); !errors.Is(err, ErrCompacted) {
				t.Fatalf("Get at 3: %v", err)
			}
			// Idle for an hour: the current revision itself stays readable.
			clock.Advance(time.Hour)
			if err := s.ApplyRetention(); err != nil || s.CompactedRevision() != 5 {
				t.Fatalf("idle retention compacted = %d (%v), want 5", s.CompactedRevision(), err)
			}
			m.checkRevision(6)
		})
	}
}

func TestListPaging(t *testing.T) {
	ctx := context.Background()
	s := NewMemory(Options{HistoryWindow: -1})
	defer s.Close()
	m := newModel(t, s)
	for i := range 40 {
		m.create(fmt.Sprintf("a/%03d", i), fmt.Sprint(i))
	}
	m.create("b/0", "x")
	m.create("a", "not under a/")
	for i := 0; i < 40; i += 4 {
		m.delete(fmt.Sprintf("a/%03d", i)) // 10 deletions after revision 42
	}
	for i := 1; i < 40; i += 8 {
		m.update(fmt.Sprintf("a/%03d", i), "updated")
	}
	even := func(kv KeyValue) bool { return (kv.Key[len(kv.Key)-1]-'0')%2 == 0 }
	// notThree rejects keys ending in 3 from key alone; the keys it passes
	// must carry the ModRevision their value has at the list's revision.
	notThree := func(key string, _ int64) bool { return key[len(key)-1] != '3' }
	cases := []struct {
		name      string
		rev       int64
		limit     int64
		filter    func(KeyValue) bool
		keyFilter func(string, int64) bool
	}{
		{"current limit 7", 0, 7, nil, nil},
		{"current limit 1", 0, 1, nil, nil},
		{"current no limit", 0, 0, nil, nil},
		{"current limit 30 exact", 0, 30, nil, nil},
		{"before deletions limit 7", 42, 7, nil, nil},
		{"mid deletions limit 3", 47, 3, nil, nil},
		{"filtered limit 4", 0, 4, even, nil},
		{"filtered historic limit 6", 44, 6, even, nil},
		{"key filtered limit 5", 0, 5, nil, notThree},
		{"key filtered no limit", 0, 0, nil, notThree},
		{"both filters historic limit 3", 47, 3, even, notThree},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rev := c.rev
			if rev == 0 {
				rev = s.CurrentRevision()
			}
			all := m.wantList("a/", rev)
			modRev := make(map[string]int64, len(all))
			for _, kv := range all {
				modRev[kv.Key] = kv.ModRevision
			}
			keyFilter := c.keyFilter
			if keyFilter != nil {
				keyFilter = func(key string, rev int64) bool {
					if want, ok := modRev[key]; !ok || rev != want {
						t.Errorf("key filter saw %s at %d, want %d (present %v)", key, rev, want, ok)
					}
					return c.keyFilter(key, rev)
				}
			}
			var got []KeyValue
			start := ""
			for page := 0; ; page++ {
				res, err := s.List(ctx, ListOptions{Prefix: "a/", StartKey: start, Revision: rev, Limit: c.limit, Filter: c.filter, KeyFilter: keyFilter})
				if err != nil {
					t.Fatal(err)
				}
				if res.Revision != rev {
					t.Fatalf("page revision %d, want %d", res.Revision, rev)
				}
				if c.limit > 0 && int64(len(res.Items)) > c.limit {
					t.Fatalf("page of %d > limit %d", len(res.Items), c.limit)
				}
				got = append(got, res.Items...)
				// Remaining: the unfiltered keys after the page's last item.
				var after int64
				if n := len(res.Items); n > 0 {
					for _, kv := range all {
						if kv.Key > res.Items[n-1].Key {
							after++
						}
					}
				}
				full := c.limit > 0 && int64(len(res.Items)) == c.limit
				if wantMore := full && after > 0; res.More != wantMore || (res.More && res.Remaining != after) {
					t.Fatalf("page %d: More=%v Remaining=%d, want More=%v Remaining=%d", page, res.More, res.Remaining, wantMore, after)
				}
				if !res.More {
					break
				}
				start = res.Items[len(res.Items)-1].Key + "\x00"
			}
			var want []KeyValue
			for _, kv := range all {
				if (c.filter == nil || c.filter(kv)) && (c.keyFilter == nil || c.keyFilter(kv.Key, kv.ModRevision)) {
					want = append(want, kv)
				}
			}
			if !equalKVs(got, want) {
				t.Fatalf("pages joined:\n got %v\nwant %v", got, want)
			}
		})
	}
	t.Run("start key before prefix and past prefix", func(t *testing.T) {
		res, err := s.List(ctx, ListOptions{Prefix: "a/", StartKey: "0", Limit: 1})
		if err != nil || len(res.Items) != 1 || res.Items[0].Key != "a/001" {
			t.Fatalf("StartKey before prefix: %v %v", res.Items, err)
		}
		res, err = s.List(ctx, ListOptions{Prefix: "a/", StartKey: "b"})
		if err != nil || len(res.Items) != 0 || res.More {
			t.Fatalf("StartKey past prefix: %+v %v", res, err)
		}
	})
	t.Run("bad limit", func(t *testing.T) {
		if _, err := s.List(ctx, ListOptions{Limit: -1}); err == nil {
			t.Fatal("negative limit accepted")
		}
	})
}

func TestPrefixEnd(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"", "", false},
		{"a/", "a0", true},
		{"a\xff", "b", true},
		{"\xff\xff", "", false},
	}
	for _, c := range cases {
		got, ok := prefixEnd(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("prefixEnd(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestIndexCounts checks the treap's order and live counts against a scan
// after random inserts, liveness changes and removals.
func TestIndexCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var ix keyIndex
	live := map[string]bool{}
	for i := range 3000 {
		key := fmt.Sprintf("%04d", rng.IntN(400))
		n := ix.insert(key)
		live[key] = n.liveNow()
		switch op := rng.IntN(3); {
		case op == 0 && !n.liveNow():
			n.versions = append(n.versions, version{modRev: int64(i + 1)})
			ix.addLive(key, 1)
			live[key] = true
		case op == 1 && n.liveNow():
			n.versions = append(n.versions, version{modRev: int64(i + 1), deleted: true})
			ix.addLive(key, -1)
			live[key] = false
		case op == 2 && !n.liveNow():
			ix.remove(key)
			delete(live, key)
		}
	}
	var keys []string
	ix.ascend("", func(n *treapNode) bool { keys = append(keys, n.key); return true })
	if len(keys) != len(live) || len(keys) != ix.size {
		t.Fatalf("index holds %d keys (size %d), want %d", len(keys), ix.size, len(live))
	}
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Fatalf("out of order: %q before %q", keys[i-1], keys[i])
		}
	}
	for probe := range 401 {
		k := fmt.Sprintf("%04d", probe)
		want := 0
		for key, l := range live {
			if l && key < k {
				want++
			}
		}
		if got := ix.liveBefore(k); got != want {
			t.Fatalf("liveBefore(%q) = %d, want %d", k, got, want)
		}
	}
}

func TestWaitForRevision(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- s.WaitForRevision(ctx, 3) }()
	for i := range 3 {
		if _, err := s.Create(ctx, fmt.Sprint(i), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil || s.CurrentRevision() < 3 {
		t.Fatalf("WaitForRevision: %v at %d", err, s.CurrentRevision())
	}
	if err := s.WaitForRevision(ctx, 2); err != nil {
		t.Fatalf("reached revision: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	go cancel()
	if err := s.WaitForRevision(cctx, 100); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait: %v", err)
	}
	go s.Close()
	if err := s.WaitForRevision(ctx, 100); !errors.Is(err, ErrClosed) {
		t.Fatalf("wait on closed store: %v", err)
	}
}

func TestClosedStore(t *testing.T) {
	s := NewMemory(Options{})
	ctx := context.Background()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]error{}
	_, checks["Create"] = s.Create(ctx, "k", nil)
	_, checks["Update"] = s.Update(ctx, "k", nil, 0)
	_, _, checks["Delete"] = s.Delete(ctx, "k", 0)
	_, checks["Get"] = s.Get(ctx, "k", 0)
	_, checks["List"] = s.List(ctx, ListOptions{})
	_, checks["Watch"] = s.Watch(ctx, "", 0, nil)
	checks["Compact"] = s.Compact(1)
	checks["Close"] = s.Close()
	for op, err := range checks {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on closed store: %v", op, err)
		}
	}
}

// TestBuildIndex: the index built at load from sorted keys is a
// treap (keys in order, priorities heap-ordered) with right live counts.
func TestBuildIndex(t *testing.T) {
	for _, n := range []int{0, 1, 2, 100, 1000} {
		nodes := map[string]*treapNode{}
		for i := range n {
			key := fmt.Sprintf("k%05d", (i*7919)%n)
			node := &treapNode{keyEntry: keyEntry{key: key, versions: []version{{modRev: int64(i + 1), value: []byte("v")}}}}
			if i%3 == 0 { // a deleted key: a tombstone last
				node.versions = append(node.versions, version{modRev: int64(n + i + 1), deleted: true})
			}
			nodes[key] = node
		}
		var sorted []treapNode
		for _, nd := range slices.SortedFunc(maps.Values(nodes), func(a, b *treapNode) int { return strings.Compare(a.key, b.key) }) {
			sorted = append(sorted, *nd)
		}
		ix := buildIndex(sorted)
		keys, live := walkTreap(t, ix.root, fmt.Sprintf("n=%d", n))
		if !slices.IsSorted(keys) || len(keys) != n || ix.size != n {
			t.Fatalf("n=%d: %d keys in order %v, size %d", n, len(keys), slices.IsSorted(keys), ix.size)
		}
		if want := n - (n+2)/3; live != want {
			t.Errorf("n=%d: %d live, want %d", n, live, want)
		}
		for key := range nodes {
			if ix.get(key) == nil {
				t.Fatalf("n=%d: %q not found", n, key)
			}
		}
	}
}

// TestListSkipFileValues: the memory backend returns its values; the bbolt
// backend leaves them in the file, and Get at the list's revision reads them.
func TestListSkipFileValues(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, Options{HistoryWindow: -1})
			ctx := context.Background()
			for i := range 3 {
				if _, err := s.Create(ctx, fmt.Sprint("k", i), []byte(fmt.Sprint("v", i))); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.List(ctx, ListOptions{SkipFileValues: true})
			if err != nil || len(res.Items) != 3 {
				t.Fatalf("%d items, %v", len(res.Items), err)
			}
			for i, kv := range res.Items {
				if inFile := b.name != "memory"; (kv.Value == nil) != inFile {
					t.Errorf("%s: value %q, want it left in the file: %v", kv.Key, kv.Value, inFile)
				}
				got, err := s.Get(ctx, kv.Key, res.Revision)
				if err != nil || string(got.Value) != fmt.Sprint("v", i) || got.ModRevision != kv.ModRevision {
					t.Errorf("get %s at %d: %q at %d, %v", kv.Key, res.Revision, got.Value, got.ModRevision, err)
				}
			}
			filtered, err := s.List(ctx, ListOptions{SkipFileValues: true, Filter: func(kv KeyValue) bool { return kv.Value != nil }})
			if err != nil || len(filtered.Items) != 3 {
				t.Errorf("a filter sees every value: %d items, %v", len(filtered.Items), err)
			}
			// A key filter needs no values, so they stay in the file.
			keyed, err := s.List(ctx, ListOptions{SkipFileValues: true, KeyFilter: func(key string, _ int64) bool { return key != "k1" }})
			if err != nil || len(keyed.Items) != 2 || keyed.Items[1].Key != "k2" || (keyed.Items[1].Value == nil) != (b.name != "memory") {
				t.Errorf("key filter without values: %+v, %v", keyed.Items, err)
			}
		})
	}
}

// walkTreap checks the treap under root (priorities heap-ordered, every
// node's live count that of its subtree) and returns its keys in order and
// its live count; where names the case in failures.
func walkTreap(t *testing.T, root *treapNode, where string) (keys []string, live int) {
	t.Helper()
	var walk func(nd *treapNode) int
	walk = func(nd *treapNode) int {
		if nd == nil {
			return 0
		}
		for _, c := range []*treapNode{nd.left, nd.right} {
			if c != nil && c.prio > nd.prio {
				t.Fatalf("%s: child %q has a higher priority than %q", where, c.key, nd.key)
			}
		}
		live := walk(nd.left)
		keys = append(keys, nd.key)
		live += selfLive(nd) + walk(nd.right)
		if nd.live != live {
			t.Fatalf("%s: %q counts %d live, want %d", where, nd.key, nd.live, live)
		}
		return live
	}
	live = walk(root)
	return keys, live
}
