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
	total int64       // log bytes written so far, skipped ones included
	queue []ringEntry // the answers held, oldest first
	at    map[itemKey]ringEntry
}

type ringEntry struct {
	key        itemKey
	start, end int64 // log offsets
}

func newAnswerRing(size int) *answerRing {
	return &answerRing{buf: make([]byte, size), at: map[itemKey]ringEntry{}}
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
	if _, ok := r.at[key]; ok {
		return
	}
	if pos := r.total % size; pos+n > size {
		r.total += size - pos // skip to the ring's beginning
	}
	e := ringEntry{key: key, start: r.total, end: r.total + n}
	r.total = e.end
	for len(r.queue) > 0 && r.queue[0].start < r.total-size {
		delete(r.at, r.queue[0].key) // its first byte is about to be overwritten
		r.queue = r.queue[1:]
	}
	copy(r.buf[e.start%size:], b)
	r.queue = append(r.queue, e)
	r.at[key] = e
}

// get returns a copy of key's answer if the ring still holds it.
func (r *answerRing) get(key itemKey) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.at[key]
	if !ok {
		return nil, false
	}
	pos := e.start % int64(len(r.buf))
	return bytes.Clone(r.buf[pos : pos+e.end-e.start]), true
}
