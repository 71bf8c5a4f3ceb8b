package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestListCandidates checks that a list restricted to candidate keys reads
// the same page as a full scan with the same filter, whatever superset of
// the matching keys the candidates are (absent keys, keys of other
// prefixes, keys before StartKey included), at the current and at older
// revisions, with and without a limit.
func TestListCandidates(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, Options{HistoryWindow: -1})
			rng := rand.New(rand.NewPCG(1, 2))
			keys := []string{}
			for _, p := range []string{"/a/", "/b/", "/c/"} {
				for i := range 40 {
					keys = append(keys, fmt.Sprintf("%s%02d", p, i))
				}
			}
			live := map[string]bool{}
			for range 400 {
				k := keys[rng.IntN(len(keys))]
				v := fmt.Sprintf("v%d", rng.IntN(3)) // "v0" values match
				var err error
				switch {
				case !live[k]:
					_, err = s.Create(ctx, k, []byte(v))
					live[k] = true
				case rng.IntN(4) == 0:
					_, _, err = s.Delete(ctx, k, 0)
					live[k] = false
				default:
					_, err = s.Update(ctx, k, []byte(v), 0)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			cur := s.CurrentRevision()
			match := func(kv KeyValue) bool { return string(kv.Value) == "v0" }
			for i := range 300 {
				rev := int64(0)
				if i%3 == 1 {
					rev = 1 + rng.Int64N(cur)
				}
				prefix := []string{"/a/", "/b/", "/"}[rng.IntN(3)]
				opts := ListOptions{Prefix: prefix, Revision: rev, Limit: rng.Int64N(6), Filter: match}
				if rng.IntN(2) == 0 {
					opts.StartKey = keys[rng.IntN(len(keys))]
				}
				want, err := s.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				// Candidates: the keys matching at the revision read, and
				// some others (present or not, in or out of the prefix).
				var asked int64
				opts.Candidates = func(r int64) ([]string, bool) {
					asked = r
					all, err := s.listLocked(r)
					if err != nil {
						t.Error(err)
					}
					var c []string
					for _, kv := range all {
						if match(kv) || rng.IntN(4) == 0 {
							c = append(c, kv.Key)
						}
					}
					c = append(c, "/a/zz", "/0", "/b/"+strings.Repeat("x", rng.IntN(3)))
					slices.Sort(c)
					return slices.Compact(c), true
				}
				got, err := s.List(ctx, opts)
				if err != nil {
					t.Fatal(err)
				}
				if asked != got.Revision {
					t.Fatalf("Candidates asked at %d, list read at %d", asked, got.Revision)
				}
				if !equalKVs(got.Items, want.Items) || got.More != want.More || got.Remaining != want.Remaining || got.Revision != want.Revision {
					t.Fatalf("list %+v: with candidates %d items more=%v remaining=%d rev=%d; scan %d items more=%v remaining=%d rev=%d",
						opts, len(got.Items), got.More, got.Remaining, got.Revision, len(want.Items), want.More, want.Remaining, want.Revision)
				}
				// ok false: the list scans as without the hook.
				opts.Candidates = func(int64) ([]string, bool) { return []string{"/nothing"}, false }
				if got, err = s.List(ctx, opts); err != nil || !equalKVs(got.Items, want.Items) || got.More != want.More {
					t.Fatalf("list %+v with declined candidates: %d items, err %v; want %d", opts, len(got.Items), err, len(want.Items))
				}
			}
		})
	}
}

// listLocked reads every key at rev; the caller holds s.mu (a Candidates hook).
func (s *MVCCStore) listLocked(rev int64) ([]KeyValue, error) {
	var out []KeyValue
	err := s.reading(func(get valueGetter) error {
		var err error
		s.index.ascend("", func(n *treapNode) bool {
			v, ok := n.at(rev)
			if !ok {
				return true
			}
			kv := KeyValue{Key: n.key, ModRevision: v.modRev}
			if kv.Value, err = valueOf(get, n.key, v); err != nil {
				return false
			}
			out = append(out, kv)
			return true
		})
		return err
	})
	return out, err
}
