package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

func TestBoltPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	rng := rand.New(rand.NewPCG(11, 12))
	s, err := OpenBolt(path, Options{HistoryWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := newModel(t, s)
	m.randomOps(80, 10, rng.IntN)
	if err := s.Compact(30); err != nil {
		t.Fatal(err)
	}
	m.randomOps(20, 10, rng.IntN)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The file holds exactly the retained versions: the log after the
	// compacted revision plus, for each key live at it, its value then.
	retained := 100 - 30 + len(m.states[30])
	if got := countRevisions(t, path); got != retained {
		t.Fatalf("file holds %d revisions, want %d", got, retained)
	}

	s, err = OpenBolt(path, Options{HistoryWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	m.s = s
	if s.CurrentRevision() != 100 || s.CompactedRevision() != 30 {
		t.Fatalf("reopened at revision %d compacted %d, want 100 and 30", s.CurrentRevision(), s.CompactedRevision())
	}
	// The compacted revision's state is in the file too, and readable.
	for rev := int64(30); rev <= 100; rev++ {
		m.checkRevision(rev)
	}
	if _, err := s.Get(context.Background(), "k00", 29); !errors.Is(err, ErrCompacted) {
		t.Fatalf("Get below the compacted revision after reopen: %v", err)
	}
	// The rebuilt log replays the same events, previous values included.
	w, err := s.Watch(context.Background(), "", 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	checkEvents(t, "replay after reopen", untilProgress(t, w, 100), m.events[30:])
	// The counter continues.
	m.randomOps(5, 10, rng.IntN)
	m.checkRevision(105)
}

func countRevisions(t *testing.T, path string) int { return countBucket(t, path, bucketRevisions) }

func countHeads(t *testing.T, path string) int { return countBucket(t, path, bucketHeads) }

func countBucket(t *testing.T, path string, name []byte) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(name).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRecordEncoding(t *testing.T) {
	cases := []logEntry{
		{ev: Event{Type: EventPut, Key: "k", Value: []byte("value"), Revision: 3}, createRev: 2, at: -5},
		{ev: Event{Type: EventPut, Key: "", Value: []byte{}, Revision: 1}, createRev: 1, at: 1 << 60},
		{ev: Event{Type: EventDelete, Key: "gone/key", Revision: 9}, createRev: 4, at: 7},
	}
	for _, c := range cases {
		r, err := decodeRecord(c.ev.Revision, encodeRecord(&c))
		wantKind := recordPut
		if c.ev.Type == EventDelete {
			wantKind = recordDelete
		}
		if err != nil || r.kind != wantKind || r.key != c.ev.Key || string(r.value) != string(c.ev.Value) ||
			r.createRev != c.createRev || r.at != c.at {
			t.Errorf("round trip of %+v: %+v, %v", c, r, err)
		}
	}
	for _, bad := range [][]byte{nil, {'X'}, {'P', 0x80}, {'P', 1, 1, 50, 'k'}, {'D', 1, 1, 1, 'k', 'v'}, {'p', 1, 1, 1, 'k', 0, 0, 0, 0}} {
		if _, err := decodeRecord(1, bad); err == nil {
			t.Errorf("decodeRecord(%q) accepted", bad)
		}
	}
}

// TestPauseGCOverlapping: loads that overlap leave the collector paused
// until the last ends, and then as they found it.
func TestPauseGCOverlapping(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	current := func() int {
		p := debug.SetGCPercent(-1)
		debug.SetGCPercent(p)
		return p
	}
	first := pauseGC()
	second := pauseGC()
	for _, step := range []struct {
		name   string
		resume func()
		want   int
	}{
		{"first load ends", first, -1},
		{"last load ends", second, 77},
	} {
		step.resume()
		if got := current(); got != step.want {
			t.Errorf("%s: GC percent %d, want %d", step.name, got, step.want)
		}
	}
}

// TestLoadChecksHistory: a file whose records and meta revisions do not
// make one whole history is refused at open, whether it is loaded from
// bucket "heads" or (written by an earlier version) from the records; a
// whole one opens and passes its check.
func TestLoadChecksHistory(t *testing.T) {
	type rec struct {
		rev int64
		key string
		del bool
	}
	tests := []struct {
		name               string
		recs               []rec
		current, compacted int64
		ok                 bool
	}{
		{"whole", []rec{{1, "a", false}, {2, "b", false}, {3, "a", true}}, 3, 0, true},
		{"compacted values then history", []rec{{2, "a", false}, {4, "b", false}, {5, "a", false}}, 5, 4, true},
		{"empty history after compaction", []rec{{2, "a", false}}, 6, 6, true},
		{"gap", []rec{{1, "a", false}, {3, "b", false}}, 3, 0, false},
		{"history ends early", []rec{{1, "a", false}, {2, "b", false}}, 3, 0, false},
		{"no records", nil, 2, 0, false},
		{"record beyond current", []rec{{1, "a", false}, {2, "b", false}}, 1, 0, false},
		{"deletion of an absent key", []rec{{1, "a", false}, {2, "b", true}}, 2, 0, false},
		{"two compacted values of a key", []rec{{1, "a", false}, {2, "a", false}}, 2, 2, false},
		{"compacted tombstone", []rec{{1, "a", false}, {2, "a", true}}, 2, 2, false},
	}
	for _, withHeads := range []bool{true, false} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/heads=%v", tt.name, withHeads), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "store.db")
				writeBoltFile(t, path, func(tx *bolt.Tx) error {
					revs, _ := tx.CreateBucket(bucketRevisions)
					meta, _ := tx.CreateBucket(bucketMeta)
					heads := revs // without bucket heads, the record then overwrites the header
					if withHeads {
						heads, _ = tx.CreateBucket(bucketHeads)
					}
					for _, r := range tt.recs {
						if err := putWrite(revs, heads, r.key, r.rev, r.del, false); err != nil {
							return err
						}
					}
					if err := meta.Put(metaCompacted, revKey(tt.compacted)); err != nil {
						return err
					}
					return meta.Put(metaCurrent, revKey(tt.current))
				})
				s, err := OpenBolt(path, Options{HistoryWindow: -1})
				if tt.ok {
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					if got := s.CurrentRevision(); got != tt.current {
						t.Errorf("current revision %d, want %d", got, tt.current)
					}
					if err := s.WaitChecked(context.Background()); err != nil {
						t.Error(err)
					}
					return
				}
				if err == nil {
					s.Close()
					t.Fatal("opened without error")
				}
				if !errors.Is(err, ErrDamaged) {
					t.Errorf("error %v, want ErrDamaged", err)
				}
			})
		}
	}
}

// TestSortByKey: the load's sort orders records as comparing keys whole,
// then revisions, would: keys that share long prefixes, end inside or at
// the end of 8 bytes, are prefixes of others, or hold zero bytes.
func TestSortByKey(t *testing.T) {
	tests := []struct {
		name string
		keys []string // in revision order
	}{
		{"none", nil},
		{"one", []string{"k"}},
		{"shared prefix", []string{"/registry/core/configmaps/ns/cm-10", "/registry/core/configmaps/ns/cm-9", "/registry/core/namespaces/ns", "/registry/core/configmaps/ns/cm-1"}},
		{"prefixes of each other", []string{"abcdefgh", "abcdefghi", "abcdefg", "", "abcdefgh12345678", "abcdefgh1234567"}},
		{"zero bytes", []string{"k\x00", "k", "k\x00\x00\x00\x00\x00\x00\x00\x00", "k\x00\x00\x00\x00\x00\x00\x00", "k\x00x", "j\xff"}},
		{"versions of a key", []string{"b", "a", "b", "a/b", "a", "b", "a/b"}},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var many []string
	for range 2000 {
		many = append(many, fmt.Sprintf("/registry/core/configmaps/ns-%d/cm-%d", rng.IntN(3), rng.IntN(700)))
	}
	tests = append(tests, struct {
		name string
		keys []string
	}{"2,000 writes to 2,100 names", many})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs := make([]loadedRecord, len(tt.keys))
			for i, k := range tt.keys {
				recs[i] = loadedRecord{key: []byte(k), rev: int64(i + 1)}
			}
			want := slices.Clone(recs)
			slices.SortStableFunc(want, func(a, b loadedRecord) int { return bytes.Compare(a.key, b.key) })
			order := make([]keyOrder, len(recs))
			sortByKey(order, recs, 0)
			for j, o := range order {
				if got := recs[o.i]; string(got.key) != string(want[j].key) || got.rev != want[j].rev {
					t.Fatalf("position %d: %q at %d, want %q at %d", j, got.key, got.rev, want[j].key, want[j].rev)
				}
			}
		})
	}
}

// TestJoinTreaps: the load builds a treap for each of two ranges of keys
// and joins them; the result is a treap of every key in order, with the
// live counts of its subtrees, wherever the cut falls.
func TestJoinTreaps(t *testing.T) {
	const n = 300
	for _, cut := range []int{0, 1, n / 3, n / 2, n - 1, n} {
		nodes := make([]treapNode, n)
		for i := range nodes {
			nodes[i].key = fmt.Sprintf("k%04d", i)
			nodes[i].versions = []version{{modRev: int64(i + 1), deleted: i%4 == 0}}
		}
		root := joinTreaps(buildTreap(nodes[:cut]), buildTreap(nodes[cut:]))
		keys, live := walkTreap(t, root, fmt.Sprintf("cut %d", cut))
		if live != n-(n+3)/4 {
			t.Errorf("cut %d: %d live keys, want %d", cut, live, n-(n+3)/4)
		}
		if !slices.IsSorted(keys) || len(keys) != n {
			t.Errorf("cut %d: %d keys, in order %v", cut, len(keys), slices.IsSorted(keys))
		}
	}
}

// TestLoadReportsFirstError: the load reads the records in two halves at
// once, and reports the problem a reading in revision order meets first.
func TestLoadReportsFirstError(t *testing.T) {
	tests := []struct {
		name    string
		missing int64   // a revision without record or header (0: none); the halves are 1–5 and 6–10 (7–10 without 6)
		damaged []int64 // revisions whose header in bucket heads fails its checksum
		want    string
	}{
		{"gap in the first half, damage in the second", 3, []int64{8}, "revision 4: history gap: expected revision 3"},
		{"gap where the second half starts, damage after it", 6, []int64{9}, "revision 7: history gap: expected revision 6"},
		{"damage where the second half starts", 0, []int64{6}, "revision 6: "},
		{"damage in both halves", 0, []int64{8, 2}, "revision 2: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			writeBoltFile(t, path, func(tx *bolt.Tx) error {
				revs, _ := tx.CreateBucket(bucketRevisions)
				heads, _ := tx.CreateBucket(bucketHeads)
				meta, _ := tx.CreateBucket(bucketMeta)
				for rev := int64(1); rev <= 10; rev++ {
					if rev == tt.missing {
						continue
					}
					if err := putWrite(revs, heads, fmt.Sprintf("k%d", rev), rev, false, slices.Contains(tt.damaged, rev)); err != nil {
						return err
					}
				}
				return meta.Put(metaCurrent, revKey(10))
			})
			s, err := OpenBolt(path, Options{HistoryWindow: -1})
			if err == nil {
				s.Close()
				t.Fatal("opened without error")
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want ErrDamaged with %q", err, tt.want)
			}
		})
	}
}

// TestAlignedSlab: a slab of half a large page or more starts on a large
// page, holds n zero elements, and its capacity ends on a large page.
func TestAlignedSlab(t *testing.T) {
	for _, n := range []int{1, 1000, hugePage / 32, hugePage / 16, hugePage/16 + 1, 3 * hugePage / 16} {
		s := alignedSlab[keyOrder](n)
		start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
		aligned := start%hugePage == 0 && (uintptr(cap(s))*16)%hugePage == 0
		if len(s) != n || cap(s) < n || aligned != (n >= hugePage/32) {
			t.Errorf("n=%d: len %d cap %d at %#x", n, len(s), cap(s), start)
		}
		for _, o := range s[:cap(s)] {
			if o != (keyOrder{}) {
				t.Fatalf("n=%d: not zero", n)
			}
		}
	}
}

// writeBoltFile makes a store file at path whose content fill writes.
func writeBoltFile(t *testing.T, path string, fill func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(fill)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
}

// putWrite writes the record of a put (or deletion) of key at rev into
// revs and its header into heads, the header's checksum broken when damage.
// The header goes first: with heads the same bucket as revs, the record
// then takes its place.
func putWrite(revs, heads *bolt.Bucket, key string, rev int64, del, damage bool) error {
	e := logEntry{ev: Event{Type: EventPut, Key: key, Value: []byte("v"), Revision: rev}, createRev: rev}
	if del {
		e.ev.Type, e.ev.Value = EventDelete, nil
	}
	rec, head := encodeWrite(&e)
	if damage {
		head = bytes.Clone(head)
		head[len(head)-1] ^= 1
	}
	if err := heads.Put(revKey(rev), head); err != nil {
		return err
	}
	return revs.Put(revKey(rev), rec)
}
