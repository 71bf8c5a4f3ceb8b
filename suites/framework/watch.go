package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/apiconform/apiconform/reports/result"
)

// Event is one watch event.
type Event struct {
	Type   string       // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
	Object gjson.Result // the event's object
	Raw    []byte       // the whole event document
}

// ErrWatchTimeout is returned by Next when no event arrived in time.
var ErrWatchTimeout = errors.New("watch: no event before the deadline")

// ErrWatchClosed is returned by Next when the server ended the stream.
var ErrWatchClosed = errors.New("watch: stream ended")

// Watch reads a stream of JSON watch events. Non-200 answers are fully read
// into Body instead.
type Watch struct {
	Code   int
	Header http.Header
	Body   []byte // the answer body when Code != 200

	cancel context.CancelFunc
	events chan Event
	done   chan struct{} // closed when the reader goroutine ends
	err    error         // why the reader ended (after done)

	client *Client
	index  int // position of this watch in the recorder, -1 when not recorded
	rec    *[]result.Exchange
	mu     sync.Mutex
	seen   []string
}

// OpenWatch starts a watch on path with query q (watch=1 is added when
// missing). The stream lasts at most maxDuration (the target's watch timeout
// when zero); Close ends it early.
func (c *Client) OpenWatch(ctx context.Context, path string, q url.Values, maxDuration time.Duration) (*Watch, error) {
	if maxDuration <= 0 {
		maxDuration = c.watchTimeout
	}
	q2 := url.Values{}
	for k, v := range q {
		q2[k] = v
	}
	if q2.Get("watch") == "" && !strings.Contains(path, "watch=") {
		q2.Set("watch", "1")
	}
	ctx, cancel := context.WithTimeout(ctx, maxDuration)
	hreq, err := c.newRequest(ctx, Request{Path: path, Query: q2})
	if err != nil {
		cancel()
		return nil, err
	}
	// The response header must arrive within the request timeout.
	hdrTimer := time.AfterFunc(c.requestTimeout, cancel)
	resp, err := c.http.Do(hreq)
	hdrTimer.Stop()
	c.observe(err)
	if err != nil {
		cancel()
		c.record(exchange(hreq, nil, nil, nil, "transport error: "+err.Error()))
		return nil, fmt.Errorf("watch %s: %w", path, err)
	}
	w := &Watch{Code: resp.StatusCode, Header: resp.Header, cancel: cancel, client: c, index: -1,
		events: make(chan Event, 64), done: make(chan struct{})}
	if resp.StatusCode != http.StatusOK {
		w.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		cancel()
		close(w.events)
		close(w.done)
		c.record(exchange(hreq, nil, resp, w.Body, ""))
		return w, nil
	}
	w.rec, w.index = c.recordOpen(exchange(hreq, nil, resp, nil, "watch stream"))
	go w.read(resp.Body)
	return w, nil
}

func (c *Client) recordOpen(ex result.Exchange) (*[]result.Exchange, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recorder == nil || len(*c.recorder) >= maxRecordedExchanges {
		return nil, -1
	}
	*c.recorder = append(*c.recorder, ex)
	return c.recorder, len(*c.recorder) - 1
}

func (w *Watch) read(body io.ReadCloser) {
	defer close(w.done)
	defer close(w.events)
	defer body.Close()
	dec := json.NewDecoder(body)
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				err = ErrWatchClosed
			}
			w.err = err
			return
		}
		doc := gjson.ParseBytes(raw)
		ev := Event{Type: doc.Get("type").String(), Object: doc.Get("object"), Raw: raw}
		w.mu.Lock()
		if len(w.seen) < 50 {
			w.seen = append(w.seen, trim(raw, 512))
		}
		w.mu.Unlock()
		w.events <- ev
	}
}

// Next returns the next event, ErrWatchTimeout when none arrives within
// timeout, or ErrWatchClosed (or the read error) when the stream ended.
func (w *Watch) Next(timeout time.Duration) (Event, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case ev, ok := <-w.events:
		if !ok {
			<-w.done
			if w.err != nil {
				return Event{}, w.err
			}
			return Event{}, ErrWatchClosed
		}
		return ev, nil
	case <-t.C:
		return Event{}, ErrWatchTimeout
	}
}

// Close ends the stream and records the events seen.
func (w *Watch) Close() {
	w.cancel()
	// Drain so the reader goroutine can finish.
	go func() {
		for range w.events {
		}
	}()
	<-w.done
	if w.rec == nil {
		return
	}
	w.client.mu.Lock()
	defer w.client.mu.Unlock()
	if w.index < len(*w.rec) {
		w.mu.Lock()
		// The events were redacted as they were read (trim).
		(*w.rec)[w.index].Note = fmt.Sprintf("watch stream, %d events recorded", len(w.seen))
		(*w.rec)[w.index].ResponseBody = strings.Join(w.seen, "\n")
		w.mu.Unlock()
	}
}
