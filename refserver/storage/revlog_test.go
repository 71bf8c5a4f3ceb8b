package storage

import (
	"sync"
	"testing"
)

func entryAt(rev int64) logEntry { return logEntry{ev: Event{Revision: rev}} }

// revisions lists a span's entries' revisions.
func revisions(l logSpan) []int64 {
	var out []int64
	for i := range l.len() {
		out = append(out, l.at(i).ev.Revision)
	}
	return out
}

func wantRevisions(t *testing.T, what string, l logSpan, first, last int64) {
	t.Helper()
	got := revisions(l)
	if int64(len(got)) != last-first+1 {
		t.Fatalf("%s: %d entries, want %d (revisions %d..%d)", what, len(got), last-first+1, first, last)
	}
	for i, r := range got {
		if r != first+int64(i) {
			t.Fatalf("%s: entry %d is revision %d, want %d", what, i, r, first+int64(i))
		}
	}
}

func TestRevLog(t *testing.T) {
	const L = logChunkLen
	for _, tc := range []struct {
		name   string
		pushes int
		drops  []int // compactions, in order, each a count of entries
		then   int   // pushes after the drops
		chunks int   // chunks held at the end
	}{
		{name: "empty", chunks: 0},
		{name: "one", pushes: 1, chunks: 1},
		{name: "one chunk", pushes: L, chunks: 1},
		{name: "into the second chunk", pushes: L + 1, chunks: 2},
		{name: "drop within the first chunk", pushes: L + 1, drops: []int{1}, chunks: 2},
		{name: "drop the first chunk exactly", pushes: 2 * L, drops: []int{L}, chunks: 1},
		{name: "drop across chunks", pushes: 3*L + 7, drops: []int{L + 3, L}, chunks: 2},
		{name: "drop one at a time", pushes: L + 2, drops: []int{1, 1, 1}, then: 5, chunks: 2},
		{name: "drop all then push", pushes: L + 5, drops: []int{L + 5}, then: 3, chunks: 1},
		{name: "drop all at a boundary then push", pushes: L, drops: []int{L}, then: L + 1, chunks: 2},
		{name: "drop nothing", pushes: 3, drops: []int{0}, chunks: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l revLog
			next, first := int64(1), int64(1)
			for range tc.pushes {
				l.push(entryAt(next))
				next++
			}
			whole := l.from(0)
			for _, k := range tc.drops {
				before := l.from(0)
				l.drop(k)
				first += int64(k)
				wantRevisions(t, "after a drop", l.logSpan, first, next-1)
				wantRevisions(t, "a span taken before the drop", before, first-int64(k), next-1)
			}
			for range tc.then {
				l.push(entryAt(next))
				next++
			}
			wantRevisions(t, "the log", l.logSpan, first, next-1)
			wantRevisions(t, "a span taken after the first pushes", whole, 1, int64(tc.pushes))
			if len(l.chunks) != tc.chunks {
				t.Errorf("log holds %d chunks, want %d", len(l.chunks), tc.chunks)
			}
			for i := 0; i <= l.len(); i++ {
				wantRevisions(t, "from", l.from(i), first+int64(i), next-1)
			}
		})
	}
}

func TestRevLogPreallocate(t *testing.T) {
	for _, n := range []int{0, 1, logChunkLen - 1, logChunkLen, 2*logChunkLen + 3} {
		var l revLog
		entries := l.preallocate(n)
		if len(entries) != n || l.len() != n {
			t.Fatalf("preallocate(%d): %d entries, log of %d", n, len(entries), l.len())
		}
		for i := range n {
			*l.at(i) = entryAt(int64(i + 1))
		}
		for i := range entries {
			if entries[i].ev.Revision != int64(i+1) {
				t.Fatalf("preallocate(%d): the slab does not hold the log's entry %d", n, i)
			}
		}
		l.push(entryAt(int64(n + 1)))
		wantRevisions(t, "preallocated then pushed", l.logSpan, 1, int64(n+1))
	}
}

// A span taken under the lock is read without it while writes push and
// compactions drop: -race checks that no entry it covers is written.
func TestRevLogSpanReadWhileWritten(t *testing.T) {
	var (
		mu    sync.Mutex
		l     revLog
		spans = make(chan logSpan, 64)
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for sp := range spans {
			if sp.len() == 0 {
				continue
			}
			first := sp.at(0).ev.Revision
			for i, r := range revisions(sp) {
				if r != first+int64(i) {
					t.Errorf("span entry %d is revision %d, want %d", i, r, first+int64(i))
					break
				}
			}
		}
	}()
	for rev := int64(1); rev <= 5*logChunkLen; rev++ {
		mu.Lock()
		l.push(entryAt(rev))
		if l.len() > logChunkLen+10 {
			l.drop(3)
		}
		if rev%97 == 0 {
			spans <- l.from(l.len() / 2)
		}
		mu.Unlock()
	}
	close(spans)
	wg.Wait()
}
