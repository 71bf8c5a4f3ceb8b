package storage

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

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
	for rev := int64(31); rev <= 100; rev++ {
		m.checkRevision(rev)
	}
	if _, err := s.Get(context.Background(), "k00", 30); !errors.Is(err, ErrCompacted) {
		t.Fatalf("Get at compacted revision after reopen: %v", err)
	}
	// The rebuilt log replays the same events, previous values included.
	w, err := s.Watch(context.Background(), "", 30)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	checkEvents(t, "replay after reopen", untilProgress(t, w, 100), m.events[30:])
	// The counter continues.
	m.randomOps(5, 10, rng.IntN)
	m.checkRevision(105)
}

func countRevisions(t *testing.T, path string) int {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n := 0
	err = db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketRevisions).Stats().KeyN
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestBoltRejectsCorruptFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := OpenBolt(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.Create(context.Background(), k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketRevisions).Delete(revKey(2)) })
	db.Close()
	if _, err := OpenBolt(path, Options{}); err == nil {
		t.Fatal("file with a history gap opened without error")
	}
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
