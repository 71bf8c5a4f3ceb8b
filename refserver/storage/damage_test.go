package storage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

const marker = "VALUE-MARKER-0123456789"

// storeFile writes a small store (three keys, one of them updated) and
// returns its path.
func storeFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "store.db")
	s, err := OpenBolt(path, Options{HistoryWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i, k := range []string{"a", "b", "c"} {
		if _, err := s.Create(ctx, k, []byte(fmt.Sprintf("%s-%d-%s", marker, i, strings.Repeat("v", 5000)))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(ctx, "c", []byte("c2"), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Where a damaged file is refused: by the load, before OpenBolt returns,
// or by the background check, before the first write.
const (
	atOpen  = "at open"
	byCheck = "by the check"
)

// refusal opens a damaged file and says why and where it was refused (err
// nil: it was not). A file refused by the check has served reads; every
// write to it (and a compaction) must fail with the check's error.
func refusal(t *testing.T, path string) (err error, where string) {
	t.Helper()
	s, err := OpenBolt(path, Options{HistoryWindow: -1})
	if err != nil {
		return err, atOpen
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.WaitChecked(ctx); err != nil {
		if _, werr := s.Create(ctx, "new", []byte("v")); werr != err {
			t.Errorf("a write after the check failed: %v, want the check's error", werr)
		}
		if cerr := s.Compact(s.CurrentRevision()); cerr != err {
			t.Errorf("a compaction after the check failed: %v, want the check's error", cerr)
		}
		return err, byCheck
	}
	return nil, ""
}

func sum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// headsEntries returns where the file holds the entry of bucket "heads"
// for revision rev: the record's header bytes where no value follows them
// (the live page and stale copies in free pages).
func headsEntries(t *testing.T, b []byte, path string, rev int64) (at []int, size int) {
	t.Helper()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var head []byte
	db.View(func(tx *bolt.Tx) error {
		head = bytes.Clone(tx.Bucket(bucketHeads).Get(revKey(rev)))
		return nil
	})
	db.Close()
	for off := 0; len(head) > 0; {
		i := bytes.Index(b[off:], head)
		if i < 0 {
			break
		}
		if !bytes.HasPrefix(b[off+i+len(head):], []byte(marker)) {
			at = append(at, off+i)
		}
		off += i + 1
	}
	if len(at) == 0 {
		t.Fatalf("the header of revision %d is not in bucket heads", rev)
	}
	return at, len(head)
}

// markers returns where s is in b: the live page and stale copies in free
// pages (bbolt writes a changed page anew).
func markers(t *testing.T, b []byte, s string) []int {
	t.Helper()
	var at []int
	for off := 0; ; {
		i := bytes.Index(b[off:], []byte(s))
		if i < 0 {
			break
		}
		at = append(at, off+i)
		off += i + 1
	}
	if len(at) == 0 {
		t.Fatalf("%q is not in the file", s)
	}
	return at
}

// TestDamagedFileRefused: each damaged file gives one error of the
// documented kind, at open or by the check before the first write, and
// the file is left byte for byte as it was.
func TestDamagedFileRefused(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, b []byte, path string) []byte
		want   error
		where  string
	}{
		{"truncated to half", func(_ *testing.T, b []byte, _ string) []byte { return b[:len(b)/2] }, ErrDamaged, atOpen},
		{"truncated to one page", func(_ *testing.T, b []byte, _ string) []byte { return b[:4096] }, ErrDamaged, atOpen},
		{"zero length", func(_ *testing.T, b []byte, _ string) []byte { return nil }, ErrEmptyFile, atOpen},
		{"garbage", func(_ *testing.T, b []byte, _ string) []byte {
			g := make([]byte, len(b))
			r := rand.New(rand.NewPCG(1, 2))
			for i := range g {
				g[i] = byte(r.Uint32())
			}
			return g
		}, ErrDamaged, atOpen},
		{"flipped byte in a header in bucket heads", func(t *testing.T, b []byte, path string) []byte {
			at, size := headsEntries(t, b, path, 2)
			for _, i := range at {
				b[i+size-5] ^= 0x01 // the key's last byte, before the header's checksum
			}
			return b
		}, ErrDamaged, atOpen},
		// The load reads no page of records: their damage is the check's.
		{"flipped byte in a record header", func(t *testing.T, b []byte, _ string) []byte {
			for _, i := range markers(t, b, marker+"-1") {
				// The key "b" sits just before its 4-byte header checksum, right before the value.
				b[i-5] ^= 0x01
			}
			return b
		}, ErrDamaged, byCheck},
		{"the page of records emptied", func(t *testing.T, b []byte, _ string) []byte {
			for _, i := range markers(t, b, marker+"-0") {
				// The first record's value starts on the leaf page holding it.
				page := i / 4096 * 4096
				if page <= 0 || b[page+8] != 0x02 { // bbolt's leaf page flag
					t.Fatalf("no leaf page of records before the first value (flags %#x)", b[page+8])
				}
				clear(b[page+10 : page+12]) // its element count
			}
			return b
		}, ErrDamaged, byCheck},
		{"both meta pages zeroed", func(_ *testing.T, b []byte, _ string) []byte {
			clear(b[:8192])
			return b
		}, ErrDamaged, atOpen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := storeFile(t)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tt.damage(t, bytes.Clone(orig), path)
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			before := sum(t, path)
			err, where := refusal(t, path)
			if err == nil {
				t.Fatal("the damaged file passed its check")
			}
			if !errors.Is(err, tt.want) || where != tt.where {
				t.Errorf("refused %s: %v, want %s: %v", where, err, tt.where, tt.want)
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), path) {
				t.Errorf("error is not one line naming the file: %q", err)
			}
			if tt.want == ErrDamaged && !strings.Contains(err.Error(), "the file was left unchanged") {
				t.Errorf("error does not say the file was left unchanged: %q", err)
			}
			if sum(t, path) != before {
				t.Error("the refused file was changed")
			}
		})
	}
}

// TestEditedFileRefused: files whose buckets were edited (a record or a
// header removed, added or replaced) are refused, at open when the
// headers the load reads show it, and else by the check; the file is left
// unchanged.
func TestEditedFileRefused(t *testing.T) {
	other := logEntry{ev: Event{Type: EventPut, Key: "other", Value: []byte("v"), Revision: 2}, createRev: 2}
	otherRec, otherHead := encodeWrite(&other)
	tests := []struct {
		name  string
		edit  func(revs, heads *bolt.Bucket) error
		where string
	}{
		{"history gap", func(revs, heads *bolt.Bucket) error {
			if err := revs.Delete(revKey(2)); err != nil {
				return err
			}
			return heads.Delete(revKey(2))
		}, atOpen},
		{"header missing from bucket heads", func(_, heads *bolt.Bucket) error { return heads.Delete(revKey(2)) }, atOpen},
		{"header of another key in bucket heads", func(_, heads *bolt.Bucket) error { return heads.Put(revKey(2), otherHead) }, byCheck},
		{"record missing", func(revs, _ *bolt.Bucket) error { return revs.Delete(revKey(2)) }, byCheck},
		{"record of another key", func(revs, _ *bolt.Bucket) error { return revs.Put(revKey(2), otherRec) }, byCheck},
		{"record cut after its header", func(revs, _ *bolt.Bucket) error { return revs.Put(revKey(2), otherHead) }, byCheck},
		{"record without a header", func(revs, _ *bolt.Bucket) error { return revs.Put(revKey(9), otherRec) }, byCheck},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := storeFile(t)
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error { return tt.edit(tx.Bucket(bucketRevisions), tx.Bucket(bucketHeads)) })
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			before := sum(t, path)
			err, where := refusal(t, path)
			if !errors.Is(err, ErrDamaged) || where != tt.where {
				t.Errorf("refused %s: %v, want %s: ErrDamaged", where, err, tt.where)
			}
			if sum(t, path) != before {
				t.Error("the refused file was changed")
			}
		})
	}
}

// TestWritesWaitForCheck: while the background check runs, reads are
// served and every kind of write waits; once it passes, the write is made
// and is in the file. A store closed meanwhile ends its check.
func TestWritesWaitForCheck(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		write func(s *MVCCStore) error
	}{
		{"create", func(s *MVCCStore) error { _, err := s.Create(ctx, "d", []byte("v")); return err }},
		{"update", func(s *MVCCStore) error { _, err := s.Update(ctx, "a", []byte("v"), 0); return err }},
		{"delete", func(s *MVCCStore) error { _, _, err := s.Delete(ctx, "a", 0); return err }},
		{"compact", func(s *MVCCStore) error { return s.Compact(3) }},
		{"close", nil},
	}
	defer func() { beforeCheck = nil }()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := storeFile(t)
			release := make(chan struct{})
			beforeCheck = func(stop <-chan struct{}) {
				select {
				case <-release:
				case <-stop:
				}
			}
			s, err := OpenBolt(path, Options{HistoryWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if kv, err := s.Get(ctx, "a", 0); err != nil || !bytes.HasPrefix(kv.Value, []byte(marker)) {
				t.Errorf("get during the check: %v", err)
			}
			if tt.write == nil {
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				if err := s.WaitChecked(ctx); !errors.Is(err, ErrClosed) {
					t.Errorf("check of a closed store: %v, want ErrClosed", err)
				}
				return
			}
			rev := s.CurrentRevision()
			done := make(chan error, 1)
			go func() { done <- tt.write(s) }()
			select {
			case err := <-done:
				t.Fatalf("the write returned (%v) while the check was held", err)
			default:
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("write after the check: %v", err)
			}
			want := rev + 1
			if tt.name == "compact" {
				want = rev
			}
			if got := s.CurrentRevision(); got != want || (tt.name == "compact") != (s.CompactedRevision() == 3) {
				t.Fatalf("revision %d compacted %d after the write", got, s.CompactedRevision())
			}
			s.Close()
			s, err = OpenBolt(path, Options{HistoryWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.WaitChecked(ctx); err != nil || s.CurrentRevision() != want {
				t.Errorf("reopened at revision %d, checked: %v; want %d", s.CurrentRevision(), err, want)
			}
		})
	}
}

func TestEmptyFileAllowed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenBolt(path, Options{AllowEmptyFile: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(context.Background(), "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
}

// TestFlippedValue: a value that fails its checksum opens, and every read
// of it (get, list, watch replay, write) fails with ErrCorrupt naming the
// key, while the other keys are served.
func TestFlippedValue(t *testing.T) {
	path := storeFile(t)
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte(marker+"-1"))
	if i < 0 {
		t.Fatal("marker not in file")
	}
	b[i+100] ^= 0x04
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := OpenBolt(path, Options{HistoryWindow: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	wantCorrupt := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("%s: %v, want ErrCorrupt naming key \"b\"", what, err)
		}
	}
	_, err = s.Get(ctx, "b", 0)
	wantCorrupt("get", err)
	_, err = s.List(ctx, ListOptions{})
	wantCorrupt("list", err)
	_, _, err = s.Delete(ctx, "b", 0)
	wantCorrupt("delete", err)
	if kv, err := s.Get(ctx, "a", 0); err != nil || !bytes.HasPrefix(kv.Value, []byte(marker)) {
		t.Errorf("get a: %v", err)
	}
	w, err := s.Watch(ctx, "", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range w.Events() {
	}
	wantCorrupt("watch", w.Err())
}

// TestEarlierVersionsMigrated: files written by earlier versions (records
// without checksums; no bucket "heads") are checked whole at open, brought
// up to date on the first open with one log line per change, and load
// from bucket "heads" afterwards.
func TestEarlierVersionsMigrated(t *testing.T) {
	legacy := func(kind byte, key, value string) []byte {
		b := []byte{kind, 1, 2, byte(len(key))}
		return append(append(b, key...), value...)
	}
	tests := []struct {
		name  string
		write func(t *testing.T, path string)
		logs  []string
	}{
		{"records without checksums", func(t *testing.T, path string) {
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			err = db.Update(func(tx *bolt.Tx) error {
				revs, _ := tx.CreateBucket(bucketRevisions)
				meta, _ := tx.CreateBucket(bucketMeta)
				_ = revs.Put(revKey(1), legacy(legacyRecordPut, "k", "v1"))
				_ = revs.Put(revKey(2), legacy(legacyRecordDelete, "k", ""))
				return meta.Put(metaCurrent, revKey(2))
			})
			if err != nil {
				t.Fatal(err)
			}
		}, []string{"added checksums to 2 records", "added bucket heads (the headers of 2 records"}},
		{"no bucket heads", func(t *testing.T, path string) {
			s, err := OpenBolt(path, Options{HistoryWindow: -1})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s.Create(ctx, "k", []byte("v1"))
			s.Delete(ctx, "k", 0)
			s.Create(ctx, "other", []byte("v"))
			s.Close()
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketHeads) }); err != nil {
				t.Fatal(err)
			}
		}, []string{"added bucket heads (the headers of 3 records"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			tt.write(t, path)
			var logged []string
			logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
			ctx := context.Background()
			for round := range 3 {
				s, err := OpenBolt(path, Options{HistoryWindow: -1, Logf: logf})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.WaitChecked(ctx); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if kv, err := s.Get(ctx, "k", 1); err != nil || string(kv.Value) != "v1" {
					t.Errorf("round %d: get at 1: %q, %v", round, kv.Value, err)
				}
				if round == 1 {
					if _, err := s.Create(ctx, fmt.Sprint("new"), []byte("v")); err != nil {
						t.Errorf("round %d: write: %v", round, err)
					}
				}
				s.Close()
				if round == 0 && countHeads(t, path) != countRevisions(t, path) {
					t.Fatalf("after the migration: %d headers for %d records", countHeads(t, path), countRevisions(t, path))
				}
			}
			if len(logged) != len(tt.logs) {
				t.Fatalf("log lines %q, want one each saying %q", logged, tt.logs)
			}
			for i, want := range tt.logs {
				if !strings.Contains(logged[i], want) || !strings.Contains(logged[i], path) {
					t.Errorf("log line %q, want one naming the file and saying %q", logged[i], want)
				}
			}
		})
	}
}
