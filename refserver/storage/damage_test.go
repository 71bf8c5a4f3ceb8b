package storage

import (
	"bytes"
	"context"
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

// TestDamagedFileRefused: each damaged file gives one error of the
// documented kind, and the open leaves the file byte for byte as it was.
func TestDamagedFileRefused(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, b []byte) []byte
		want   error
	}{
		{"truncated to half", func(_ *testing.T, b []byte) []byte { return b[:len(b)/2] }, ErrDamaged},
		{"truncated to one page", func(_ *testing.T, b []byte) []byte { return b[:4096] }, ErrDamaged},
		{"zero length", func(_ *testing.T, b []byte) []byte { return nil }, ErrEmptyFile},
		{"garbage", func(_ *testing.T, b []byte) []byte {
			g := make([]byte, len(b))
			r := rand.New(rand.NewPCG(1, 2))
			for i := range g {
				g[i] = byte(r.Uint32())
			}
			return g
		}, ErrDamaged},
		{"flipped byte in a record header", func(t *testing.T, b []byte) []byte {
			i := bytes.Index(b, []byte(marker+"-1"))
			if i < 0 {
				t.Fatal("marker not in file")
			}
			// The key "b" sits just before its 4-byte header checksum, right before the value.
			b[i-5] ^= 0x01
			return b
		}, ErrDamaged},
		{"both meta pages zeroed", func(_ *testing.T, b []byte) []byte {
			clear(b[:8192])
			return b
		}, ErrDamaged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := storeFile(t)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			damaged := tt.damage(t, bytes.Clone(orig))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := OpenBolt(path, Options{})
			if err == nil {
				s.Close()
				t.Fatal("damaged file opened without error")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), path) {
				t.Errorf("error is not one line naming the file: %q", err)
			}
			after, _ := os.ReadFile(path)
			if !bytes.Equal(after, damaged) {
				t.Error("the refused file was changed by the open")
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
	w, err := s.Watch(ctx, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	for range w.Events() {
	}
	wantCorrupt("watch", w.Err())
}

// TestLegacyRecordsMigrated: records written without checksums are read,
// rewritten with them on the first open, and the open says so.
func TestLegacyRecordsMigrated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	legacy := func(kind byte, key, value string) []byte {
		b := []byte{kind, 1, 2, byte(len(key))}
		return append(append(b, key...), value...)
	}
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
	db.Close()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	for round := range 2 {
		s, err := OpenBolt(path, Options{HistoryWindow: -1, Logf: logf})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(context.Background(), "k", 1); err != nil {
			t.Errorf("round %d: get at 1: %v", round, err)
		}
		s.Close()
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "added checksums to 2 records") {
		t.Errorf("log lines %q, want one saying 2 records were given checksums", logged)
	}
}
