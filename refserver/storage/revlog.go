package storage

// The revision log keeps its entries in fixed-size chunks. A log grown by
// append copied every entry at each doubling, under the store's write lock
// (1–3 µs per write at 100,000 revisions, the largest cost of the memory
// store's write); chunks are written in place and never copied, and
// compaction releases whole chunks.
//
// Entries are written once and chunks never reused, so a span taken under
// the lock (a watcher's replay snapshot) stays readable without it while
// writes fill later slots and compactions replace the chunk list.

// logChunkLen is the entries per chunk: 56 KiB of entries, so the first
// touches of a new chunk's pages are paid once per 512 writes.
const logChunkLen = 512

type logChunk [logChunkLen]logEntry

// logSpan is a run of consecutive log entries: entry i is at offset
// start+i counted from the beginning of chunks[0].
type logSpan struct {
	chunks []*logChunk
	start  int // offset of entry 0 in chunks[0], < logChunkLen
	n      int
}

func (l logSpan) len() int { return l.n }

// at returns entry i (0 <= i < len).
func (l logSpan) at(i int) *logEntry {
	if uint(i) >= uint(l.n) {
		panic("storage: log entry out of range")
	}
	o := l.start + i
	return &l.chunks[o/logChunkLen][o%logChunkLen]
}

// from returns the entries from i on (0 <= i <= len), sharing the chunks:
// it never writes to them or to the chunk list, so a span taken under the
// store's lock (a watcher's replay snapshot) is read without it.
func (l logSpan) from(i int) logSpan {
	if uint(i) > uint(l.n) {
		panic("storage: log span out of range")
	}
	o := l.start + i
	end := (l.start + l.n + logChunkLen - 1) / logChunkLen
	c := o / logChunkLen
	return logSpan{chunks: l.chunks[c:end:end], start: o % logChunkLen, n: l.n - i}
}

// revLog is the store's log: revisions compacted+1 .. rev, in order.
type revLog struct{ logSpan }

// push appends an entry, adding a chunk when the last one is full.
func (l *revLog) push(e logEntry) {
	if l.start+l.n == len(l.chunks)*logChunkLen {
		l.chunks = append(l.chunks, new(logChunk))
	}
	l.n++
	*l.at(l.n - 1) = e
}

// drop removes the first k entries (compaction). The chunks they filled
// alone leave the chunk list, which is copied rather than resliced so
// they can be collected; spans taken earlier keep the old list.
func (l *revLog) drop(k int) {
	rest := l.from(k)
	if len(rest.chunks) < len(l.chunks) {
		rest.chunks = append([]*logChunk(nil), rest.chunks...)
	}
	if rest.n == 0 {
		rest = logSpan{}
	}
	l.logSpan = rest
}

// preallocate makes an empty log of n zero entries in one allocation (a
// load sets them with at), so that it can be prefaulted as one slab.
func (l *revLog) preallocate(n int) []logEntry {
	whole := (n + logChunkLen - 1) / logChunkLen
	slab := make([]logEntry, whole*logChunkLen)
	chunks := make([]*logChunk, whole)
	for i := range chunks {
		chunks[i] = (*logChunk)(slab[i*logChunkLen : (i+1)*logChunkLen])
	}
	l.logSpan = logSpan{chunks: chunks, n: n}
	return slab[:n]
}
