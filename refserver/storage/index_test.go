package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestVisitKeys checks the batch descent against one lookup per key: the
// same nodes, in key order, keys the index lacks skipped, and a stop
// honoured at once.
func TestVisitKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, 2, 7, 100, 2000} {
		ix := &keyIndex{}
		for i := range size {
			ix.insert(fmt.Sprintf("k%05d", rng.IntN(3*size+1)+i%2))
		}
		for _, frac := range []int{1, 3, 10, 1000} {
			var keys []string // sorted, unique; some held by the index, some not
			for i := range 3*size + 2 {
				if rng.IntN(frac) == 0 {
					keys = append(keys, fmt.Sprintf("k%05d", i))
				}
			}
			var want []string
			for _, k := range keys {
				if n := ix.get(k); n != nil {
					want = append(want, n.key)
				}
			}
			var got []string
			if !ix.visitKeys(keys, func(n *treapNode) bool { got = append(got, n.key); return true }) {
				t.Fatalf("size %d: visitKeys reported a stop nobody asked for", size)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("size %d, 1/%d of the keys: visited %v, want %v", size, frac, got, want)
			}
			if len(want) < 2 {
				continue
			}
			stopAt := len(want) / 2
			got = got[:0]
			if ix.visitKeys(keys, func(n *treapNode) bool { got = append(got, n.key); return len(got) <= stopAt }) {
				t.Fatalf("size %d: a stop was not reported", size)
			}
			if !slices.Equal(got, want[:stopAt+1]) {
				t.Fatalf("size %d: after a stop visited %v, want %v", size, got, want[:stopAt+1])
			}
		}
	}
}
