package registry

import (
	"bytes"
	"sync"
)

// answerRing keeps the get answers of the latest writes (WrittenJSON) in
// one ring of bytes. Kept as separate slices, a few thousand answers of a
// kilobyte each pinned a span of the heap apiece among the short-lived
// allocations of the same size, and a 100,000-object fill ended with about
// 11 MiB more resident than the answers themselves; the ring is one
// allocation of its budget whatever it holds. An answer is copied out when
// read, because later writes overwrite the ring.
//
// The ring is a log: every answer takes the next bytes, an answer that
// would cross the end of the ring starts again at its beginning (the bytes
// skipped count as written), and an answer is gone once the log has
// written a ring's length past its first byte.
type answerRing struct {
	mu    sync.Mutex
	buf   []byte
	total int64 // log bytes written so far, skipped ones included
	// queue is the answers held, oldest first, as a circular buffer of
	// held entries from head (a slice resliced at the front and appended
	// to was copied whole every few thousand writes).
	queue   []ringEntry
	head, n int
	// at finds an answer by its revision, which is one write's: an integer
	// hashes for less than the key's three strings (BenchmarkAnswerRingPut);
	// get checks the whole key.
	at map[int64]ringEntry
}

type ringEntry struct {
	key        itemKey
	start, end int64 // log offsets
}

func newAnswerRing(size int) *answerRing {
	return &answerRing{buf: make([]byte, size), at: map[int64]ringEntry{}}
}

// put keeps b as key's answer; an answer over a quarter of the ring is not
// kept (it would push out too many others).
func (r *answerRing) put(key itemKey, b []byte) {
	size := int64(len(r.buf))
	n := int64(len(b))
	if n == 0 || n > size/4 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.at[key.revision]; ok {
		return // kept already (or another key's at that revision: a miss later, never a wrong answer)
	}
	if pos := r.total % size; pos+n > size {
		r.total += size - pos // skip to the ring's beginning
	}
	e := ringEntry{key: key, start: r.total, end: r.total + n}
	r.total = e.end
	for r.n > 0 && r.queue[r.head].start < r.total-size {
		delete(r.at, r.queue[r.head].key.revision) // its first byte is about to be overwritten
		r.queue[r.head] = ringEntry{}
		r.head = (r.head + 1) % len(r.queue)
		r.n--
	}
	copy(r.buf[e.start%size:], b)
	r.push(e)
	r.at[key.revision] = e
}

// push adds e at the queue's end, doubling the queue when it is full.
func (r *answerRing) push(e ringEntry) {
	if r.n == len(r.queue) {
		grown := make([]ringEntry, max(64, 2*len(r.queue)))
		for i := range r.n {
			grown[i] = r.queue[(r.head+i)%len(r.queue)]
		}
		r.queue, r.head = grown, 0
	}
	r.queue[(r.head+r.n)%len(r.queue)] = e
	r.n++
}

// get returns a copy of key's answer if the ring still holds it.
func (r *answerRing) get(key itemKey) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.at[key.revision]
	if !ok || e.key != key {
		return nil, false
	}
	pos := e.start % int64(len(r.buf))
	return bytes.Clone(r.buf[pos : pos+e.end-e.start]), true
}
