package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/tidwall/gjson"
)

// watchFanout opens Watchers watches on one object (a field selector on its
// name), makes WatchEvents merge patches to it one after another, and
// measures for each event how long after its write every watcher had it.
func (r *runner) watchFanout(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.watchPhase(ctx, part, "watch-fanout", url.Values{"fieldSelector": {"metadata.name=cm-00000"}}, fanoutWrites(r.plan))
}

func fanoutWrites(p Plan) []watchWrite {
	writes := make([]watchWrite, p.WatchEvents)
	for e := range writes {
		writes[e] = watchWrite{item: 0, op: "watch-fanout-write", seen: true}
	}
	return writes
}

// watchSelector opens Watchers watches with a label selector on one shard and
// alternates writes to an object in it and one outside it: each watcher must
// get exactly the WatchEvents/2 events of the first.
func (r *runner) watchSelector(ctx context.Context, part span) ([]time.Duration, time.Duration, error) {
	return r.watchPhase(ctx, part, "watch-selector", url.Values{"labelSelector": {"shard=0"}}, selectorWrites(r.plan))
}

func selectorWrites(p Plan) []watchWrite {
	writes := make([]watchWrite, 2*max(1, p.WatchEvents/2))
	for e := range writes {
		if e%2 == 0 {
			writes[e] = watchWrite{item: 0, op: "watch-selector-write", seen: true}
		} else {
			writes[e] = watchWrite{item: 1, op: "watch-selector-write-other"}
		}
	}
	return writes
}

// watchWrite is one write of a watch phase: which object, and whether the
// watchers must see it.
type watchWrite struct {
	item int
	op   string
	seen bool
}

// watchRun is a watch phase under way: its watchers stay open from its
// first part, which opens them, to its last, which waits for them to end;
// each part makes its share of the writes and waits until every watcher
// has the part's events.
type watchRun struct {
	op       string
	watchers int
	writes   []watchWrite
	seen     []int // seen[i]: the events among writes[:i]
	// received[e] counts the watchers that have seen event e; lastSeen is
	// when the last of them got it, allSeen carries e then.
	received []atomic.Int32
	lastSeen []atomic.Int64
	written  []int64 // when each event's write was sent
	allSeen  chan int
	done     chan error // each watcher's end
	ended    int        // the watchers that ended well
	cancel   context.CancelFunc
}

// watchPhase runs part of a watch phase: the first part opens the watchers
// (before its clock starts) and the last one waits for them to end.
func (r *runner) watchPhase(ctx context.Context, part span, op string, query url.Values, writes []watchWrite) ([]time.Duration, time.Duration, error) {
	if part.lo == 0 {
		r.closeWatch()
		w, err := r.openWatch(ctx, op, query, writes)
		if err != nil {
			return nil, 0, err
		}
		r.watch = w
	}
	w := r.watch
	if w == nil || w.op != op {
		return nil, 0, fmt.Errorf("%s: part [%d, %d) without its first part", op, part.lo, part.hi)
	}
	lat, elapsed, err := w.write(ctx, r, part)
	if err == nil && part.hi == len(writes) {
		err = w.wait(ctx, func(w *watchRun) bool { return w.ended == w.watchers }, "their end")
	}
	if err != nil || part.hi == len(writes) {
		r.closeWatch()
	}
	return lat, elapsed, err
}

// openWatch starts the watchers from the collection's current
// resourceVersion and waits until every one has its answer's headers.
func (r *runner) openWatch(ctx context.Context, op string, query url.Values, writes []watchWrite) (*watchRun, error) {
	data, _, err := r.do(ctx, req{op: "rv-probe", method: http.MethodGet, path: r.collectionPath() + "?limit=1"})
	if err != nil {
		return nil, err
	}
	rv := gjson.GetBytes(data, "metadata.resourceVersion").String()
	if rv == "" {
		return nil, fmt.Errorf("list has no metadata.resourceVersion: %s", trim(data))
	}
	w := &watchRun{op: op, watchers: r.plan.Watchers, writes: writes, seen: make([]int, len(writes)+1)}
	for i, wr := range writes {
		w.seen[i+1] = w.seen[i]
		if wr.seen {
			w.seen[i+1]++
		}
	}
	target := w.seen[len(writes)]
	w.received = make([]atomic.Int32, target)
	w.lastSeen = make([]atomic.Int64, target)
	w.written = make([]int64, target)
	w.allSeen = make(chan int, target)
	w.done = make(chan error, w.watchers)
	// The watchers outlive the part that opens them; closeWatch (the last
	// part's end, a failure, Session.Close) ends them.
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	ready := make(chan error, w.watchers)
	query.Set("watch", "1")
	query.Set("resourceVersion", rv)
	path := r.collectionPath() + "?" + query.Encode()
	for range w.watchers {
		go func() {
			w.done <- r.watchOne(wctx, op, path, target, ready, func(e int) {
				if int(w.received[e].Add(1)) == w.watchers {
					w.lastSeen[e].Store(time.Now().UnixNano())
					w.allSeen <- e
				}
			})
		}()
	}
	for range w.watchers {
		select {
		case err := <-ready:
			if err != nil {
				cancel()
				return nil, err
			}
		case <-ctx.Done():
			cancel()
			return nil, ctx.Err()
		}
	}
	return w, nil
}

// write makes the part's writes one after another and waits until every
// watcher has the part's last event: the part's elapsed time, and each of
// its events' latency to the last watcher.
func (w *watchRun) write(ctx context.Context, r *runner, part span) ([]time.Duration, time.Duration, error) {
	start := time.Now()
	for i := part.lo; i < part.hi; i++ {
		wr := w.writes[i]
		q := req{op: wr.op, method: http.MethodPatch, path: r.itemPath(wr.item),
			contentType: "application/merge-patch+json", body: fmt.Appendf(nil, `{"data":{"seq":"%d"}}`, i)}
		if wr.seen {
			q.notify = w.op
			w.written[w.seen[i]] = time.Now().UnixNano()
		}
		if _, _, err := r.do(ctx, q); err != nil {
			return nil, 0, err
		}
	}
	first, last := w.seen[part.lo], w.seen[part.hi]
	if last > first {
		// lastSeen, not received: the last watcher counts an event before it
		// stamps it, and the stamp of the part's last event comes after
		// those of the ones before it (each watcher takes them in order).
		if err := w.wait(ctx, func(w *watchRun) bool { return w.lastSeen[last-1].Load() != 0 }, "events"); err != nil {
			return nil, 0, err
		}
	}
	elapsed := time.Since(start)
	lat := make([]time.Duration, last-first)
	for e := range lat {
		lat[e] = time.Duration(w.lastSeen[first+e].Load() - w.written[first+e])
	}
	return lat, elapsed, nil
}

// wait blocks until ok holds, checking it each time an event reaches its
// last watcher or a watcher ends; a watcher that fails fails the wait.
func (w *watchRun) wait(ctx context.Context, ok func(*watchRun) bool, what string) error {
	for !ok(w) {
		select {
		case <-w.allSeen:
		case err := <-w.done:
			if err != nil {
				return err
			}
			w.ended++
		case <-ctx.Done():
			return fmt.Errorf("watchers still waiting for %s: %w", what, ctx.Err())
		}
	}
	return nil
}

// closeWatch stops an open watch phase's watchers.
func (r *runner) closeWatch() {
	if r.watch != nil {
		r.watch.cancel()
		r.watch = nil
	}
}

// watchOne reads events until it has seen want MODIFIED ones; an ADDED,
// DELETED or ERROR event means the watch does not see what the load wrote.
func (r *runner) watchOne(ctx context.Context, op, path string, want int, ready chan<- error, got func(int)) error {
	resp, err := r.send(ctx, req{op: op, method: http.MethodGet, path: path})
	if err != nil {
		ready <- err
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		err := fmt.Errorf("watch: got %d: %s", resp.StatusCode, trim(body))
		ready <- err
		return err
	}
	if r.t.Record != nil {
		r.t.Record.put(AnswerKey(op, ""), Answer{Status: http.StatusOK, ContentType: resp.Header.Get("Content-Type")})
	}
	ready <- nil
	events := newEventReader(resp.Body)
	for n := 0; n < want; {
		raw, typ, err := events.next()
		if err != nil {
			return fmt.Errorf("watch ended after %d of %d events: %w", n, want, err)
		}
		switch typ {
		case "MODIFIED":
			if r.t.Record != nil {
				r.t.Record.putEvent(op, raw)
			}
			got(n)
			n++
		case "BOOKMARK":
		default:
			return fmt.Errorf("watch: unexpected %s event after %d of %d: %s", typ, n, want, trim(raw))
		}
	}
	return nil
}

// eventReader splits a JSON watch stream into events and reads each one's
// type without decoding or validating its object: it only tracks string and
// nesting state, so the client spends little of the shared CPU on the
// watchers' events. (The load measures; conformance is the suites' job.)
type eventReader struct {
	r   *bufio.Reader
	buf []byte
}

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next top-level JSON object of the stream and its "type".
// It scans what the buffered reader holds a window at a time.
func (e *eventReader) next() ([]byte, string, error) {
	e.buf = e.buf[:0]
	depth, inString, escaped := 0, false, false
	for {
		n := e.r.Buffered()
		if n == 0 {
			n = 1 // Peek(1) fills the buffer, or reports the end
		}
		window, err := e.r.Peek(n)
		if len(window) == 0 {
			if err == io.EOF && len(e.buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, "", err
		}
		start := 0
		for i, c := range window {
			if depth == 0 {
				switch c {
				case ' ', '\t', '\r', '\n':
					start = i + 1
					continue
				case '{':
				default:
					return nil, "", fmt.Errorf("watch stream: %q where an event should start", c)
				}
			}
			switch {
			case escaped:
				escaped = false
			case inString:
				switch c {
				case '\\':
					escaped = true
				case '"':
					inString = false
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					e.buf = append(e.buf, window[start:i+1]...)
					_, _ = e.r.Discard(i + 1)
					return e.buf, gjson.GetBytes(e.buf, "type").String(), nil
				}
			}
		}
		e.buf = append(e.buf, window[start:]...)
		_, _ = e.r.Discard(len(window))
	}
}
