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
	// A write's answer: each at a revision of its own, as the store gives.
	key := func(i int) itemKey {
		return itemKey{key: fmt.Sprint("k", i), revision: int64(i + 1), form: formObjectName}
	}
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

	// The ring finds an answer by revision; a key that shares it but differs
	// in anything else is a miss, never that answer.
	t.Run("another key at the same revision", func(t *testing.T) {
		r := newAnswerRing(100)
		r.put(key(0), answer(0, 10))
		for name, other := range map[string]itemKey{
			"key":     {key: "other", revision: 1, form: formObjectName},
			"version": {version: "v2", key: "k0", revision: 1, form: formObjectName},
			"form":    {key: "k0", revision: 1, form: formItemName},
			"kind":    {kind: &Kind{}, key: "k0", revision: 1, form: formObjectName},
		} {
			if b, ok := r.get(other); ok {
				t.Errorf("%s differs: answered %q", name, b)
			}
			r.put(other, answer(1, 10)) // not kept: the revision's first answer stays
			if b, ok := r.get(key(0)); !ok || !bytes.Equal(b, answer(0, 10)) {
				t.Errorf("%s differs: after its put, key 0 answers %q, %v", name, b, ok)
			}
			if b, ok := r.get(other); ok {
				t.Errorf("%s differs: answered %q after its put", name, b)
			}
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

// BenchmarkAnswerRingPut: a write keeping its answer in a full ring (so each
// put also drops the oldest), keys as the store names configmaps.
func BenchmarkAnswerRingPut(b *testing.B) {
	r := newAnswerRing(writtenBudget)
	answer := bytes.Repeat([]byte("x"), 1200)
	k := &Kind{}
	keys := make([]string, 4096)
	for i := range keys {
		keys[i] = fmt.Sprintf("/registry/configmaps/bench-namespace/cm-%05d", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.put(itemKey{kind: k, version: "v1", key: keys[i%len(keys)], revision: int64(i + 1), form: formObjectName}, answer)
	}
}
