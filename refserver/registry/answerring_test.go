package registry

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The ring never answers with bytes other than those kept for a key, keeps
// the latest answers that fit, and refuses what it should not keep.
func TestAnswerRing(t *testing.T) {
	key := func(i int) itemKey { return itemKey{key: fmt.Sprint("k", i), form: "object-json"} }
	answer := func(i, n int) []byte { return bytes.Repeat([]byte{byte('a' + i%26)}, n) }

	t.Run("cases", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			sizes []int // answers put, in order; key i gets sizes[i] bytes
			held  []int // keys still answered afterwards
		}{
			{"all fit", []int{10, 10, 10}, []int{0, 1, 2}},
			{"the oldest goes first", []int{25, 25, 25, 25, 25}, []int{1, 2, 3, 4}},
			{"an answer that would cross the end starts again at the beginning", []int{25, 25, 25, 20, 10}, []int{1, 2, 3, 4}},
			{"and overwrites the oldest there", []int{20, 20, 20, 20, 15, 25}, []int{2, 3, 4, 5}},
			{"empty and too large are not kept", []int{0, 26, 5}, []int{2}},
			{"exactly a quarter", []int{25, 25, 25, 25}, []int{0, 1, 2, 3}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := newAnswerRing(100)
				for i, n := range tc.sizes {
					r.put(key(i), answer(i, n))
				}
				held := map[int]bool{}
				for _, i := range tc.held {
					held[i] = true
				}
				for i, n := range tc.sizes {
					b, ok := r.get(key(i))
					if ok != held[i] || ok && !bytes.Equal(b, answer(i, n)) {
						t.Errorf("key %d: got %q, %v; held %v", i, b, ok, held[i])
					}
				}
			})
		}
	})

	t.Run("a copy is returned", func(t *testing.T) {
		r := newAnswerRing(100)
		r.put(key(0), answer(0, 10))
		b, _ := r.get(key(0))
		b[0] = 'z'
		if again, _ := r.get(key(0)); !bytes.Equal(again, answer(0, 10)) {
			t.Fatalf("the ring changed through a returned answer: %q", again)
		}
	})

	t.Run("random against a model", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		const size = 1000
		r := newAnswerRing(size)
		kept := map[int][]byte{}
		for i := range 20000 {
			n := 1 + rng.IntN(size/4)
			b := make([]byte, n)
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			r.put(key(i), b)
			kept[i] = b
			for k := max(0, i-40); k <= i; k++ { // every answer the ring gives is the one put
				if got, ok := r.get(key(k)); ok && !bytes.Equal(got, kept[k]) {
					t.Fatalf("after %d puts, key %d answers other bytes", i+1, k)
				}
			}
			if _, ok := r.get(key(i)); !ok {
				t.Fatalf("the answer just put (%d bytes) is not held", n)
			}
			delete(kept, i-41)
		}
		if held := len(r.at); held < 4 || held != r.n {
			t.Fatalf("held %d answers, queue %d", held, r.n)
		}
	})
}
