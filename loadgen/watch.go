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
func (r *runner) watchFanout(ctx context.Context) ([]time.Duration, time.Duration, error) {
	query := url.Values{"fieldSelector": {"metadata.name=cm-00000"}}
	writes := make([]watchWrite, r.plan.WatchEvents)
	for e := range writes {
		writes[e] = watchWrite{item: 0, op: "watch-fanout-write", seen: true}
	}
	return r.watchPhase(ctx, "watch-fanout", query, writes)
}

// watchSelector opens Watchers watches with a label selector on one shard and
// alternates writes to an object in it and one outside it: each watcher must
// get exactly the WatchEvents/2 events of the first.
func (r *runner) watchSelector(ctx context.Context) ([]time.Duration, time.Duration, error) {
	query := url.Values{"labelSelector": {"shard=0"}}
	writes := make([]watchWrite, 2*max(1, r.plan.WatchEvents/2))
	for e := range writes {
		if e%2 == 0 {
			writes[e] = watchWrite{item: 0, op: "watch-selector-write", seen: true}
		} else {
			writes[e] = watchWrite{item: 1, op: "watch-selector-write-other"}
		}
	}
	return r.watchPhase(ctx, "watch-selector", query, writes)
}

// watchWrite is one write of a watch phase: which object, and whether the
// watchers must see it.
type watchWrite struct {
	item int
	op   string
	seen bool
}

func (r *runner) watchPhase(ctx context.Context, op string, query url.Values, writes []watchWrite) ([]time.Duration, time.Duration, error) {
	data, _, err := r.do(ctx, req{op: "rv-probe", method: http.MethodGet, path: r.collectionPath() + "?limit=1"})
	if err != nil {
		return nil, 0, err
	}
	rv := gjson.GetBytes(data, "metadata.resourceVersion").String()
	if rv == "" {
		return nil, 0, fmt.Errorf("list has no metadata.resourceVersion: %s", trim(data))
	}
	target := 0
	for _, w := range writes {
		if w.seen {
			target++
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// received[e] counts watchers that have seen event e; lastSeen is when
	// the last of them got it.
	received := make([]atomic.Int32, target)
	lastSeen := make([]atomic.Int64, target)
	ready := make(chan error, r.plan.Watchers)
	done := make(chan error, r.plan.Watchers)
	query.Set("watch", "1")
	query.Set("resourceVersion", rv)
	path := r.collectionPath() + "?" + query.Encode()
	for w := 0; w < r.plan.Watchers; w++ {
		go func() {
			done <- r.watchOne(wctx, op, path, target, ready, func(e int) {
				if int(received[e].Add(1)) == r.plan.Watchers {
					lastSeen[e].Store(time.Now().UnixNano())
				}
			})
		}()
	}
	for w := 0; w < r.plan.Watchers; w++ {
		select {
		case err := <-ready:
			if err != nil {
				return nil, 0, err
			}
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
	}

	written := make([]int64, 0, target)
	start := time.Now()
	for e, w := range writes {
		q := req{op: w.op, method: http.MethodPatch, path: r.itemPath(w.item),
			contentType: "application/merge-patch+json", body: fmt.Appendf(nil, `{"data":{"seq":"%d"}}`, e)}
		if w.seen {
			q.notify = op
			written = append(written, time.Now().UnixNano())
		}
		if _, _, err := r.do(ctx, q); err != nil {
			return nil, 0, err
		}
	}
	for w := 0; w < r.plan.Watchers; w++ {
		select {
		case err := <-done:
			if err != nil {
				return nil, 0, err
			}
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("watchers still waiting for events: %w", ctx.Err())
		}
	}
	elapsed := time.Since(start)
	lat := make([]time.Duration, target)
	for e := range lat {
		lat[e] = time.Duration(lastSeen[e].Load() - written[e])
	}
	return lat, elapsed, nil
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
