package robustness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// BurstConfig is the in-flight limit scenario: an open server with a small
// --max-requests-inflight, and a burst of expensive lists far beyond it.
type BurstConfig struct {
	Limit, Objects, ValueBytes, Requests int
}

// DefaultBurst is the burst: 200 requests against a limit of 5.
var DefaultBurst = BurstConfig{Limit: 5, Objects: 200, ValueBytes: 10 << 10, Requests: 200}

// BurstFigures count the answers of both bursts.
type BurstFigures struct {
	Held  burstCount // the burst while Limit waiting reads hold every slot
	Open  burstCount // the burst once their clients have gone
	Watch int        // status of an unrelated short watch started with the held burst
}

// burstCount counts one burst's answers.
type burstCount struct {
	OK, TooMany, Other int
	SlowestOK          time.Duration
	badRetry           int // 429s without Retry-After: 1
}

func (c burstCount) String() string {
	return fmt.Sprintf("%d × 200 (slowest %v), %d × 429 with Retry-After: 1, %d other",
		c.OK, c.SlowestOK.Round(time.Millisecond), c.TooMany, c.Other)
}

func (f BurstFigures) String() string {
	return fmt.Sprintf("with every slot held: %s, an unrelated watch %d; once the holders left: %s", f.Held, f.Watch, f.Open)
}

// holdFor is how long a read waits for a future resourceVersion on the
// burst's server: far longer than the held burst takes, so the slots are
// certainly held throughout it, and never reached, because the holders
// leave first.
const holdFor = time.Minute

// holdRetry is how long a holder retries a 429 (see holdSlots), every
// holdRetryPause: a slot is given back microseconds after its answer.
const (
	holdRetry      = 3 * time.Second
	holdRetryPause = 20 * time.Millisecond
)

// settledProbes is how many answers in a row, two holder pauses apart,
// awaitStatus takes as the server's state rather than a passing one (a
// holder between its tries).
const settledProbes = 3

// Burst runs the scenario against apiconform-refserver (open: no token file).
// Whether a burst of fast lists overlaps on the server depends on the
// machine, so the limit is checked where the outcome is certain: Limit
// lists at a resourceVersion the server has not reached wait for it (the
// documented wait before 504) and occupy every slot. Every list of the
// burst must then be refused with 429, while a watch, drawn from its own
// pool, is served. The holders are complete, ordinary requests, so nothing
// between client and server can keep them from arriving. Then their clients
// leave: the server must give the slots back, and the same burst may only
// be answered 200 or 429.
func Burst(ctx context.Context, bin string, cfg BurstConfig) (BurstFigures, error) {
	var f BurstFigures
	srv, err := serve(ctx, bin, "--max-requests-inflight", fmt.Sprint(cfg.Limit), "--revision-wait", holdFor.String())
	if err != nil {
		return f, err
	}
	defer srv.stop()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Requests}}
	defer hc.CloseIdleConnections()
	fillCfg := AmplifyConfig{Objects: cfg.Objects, ValueBytes: cfg.ValueBytes, Concurrency: max(1, cfg.Limit-1)}
	if err := fill(ctx, hc, srv.URL, "burst", fillCfg); err != nil {
		return f, err
	}
	rv, err := newClient(srv.URL, "").createNamespace(ctx, "quiet")
	if err != nil {
		return f, err
	}

	// Nothing writes while the slots are held, so a revision well past the
	// last write is never reached.
	holders := holdSlots(ctx, srv.URL, cfg.Limit, rv+1_000_000)
	defer holders.leave()
	if err := holders.awaitWaiting(); err != nil {
		return f, err
	}
	if err := awaitStatus(ctx, hc, srv.URL, http.StatusTooManyRequests); err != nil {
		if early := holders.leave(); early != nil {
			err = early // the likelier cause: the reads did not wait
		}
		return f, fmt.Errorf("%d reads waiting for a future resourceVersion never filled the in-flight limit of %d: %w", cfg.Limit, cfg.Limit, err)
	}
	f.Held, f.Watch = listBurst(ctx, hc, srv.URL, cfg.Requests, true)
	if err := holders.leave(); err != nil {
		return f, err
	}
	if err := awaitStatus(ctx, hc, srv.URL, http.StatusOK); err != nil {
		return f, fmt.Errorf("the server kept the slots of clients that had gone: %w", err)
	}
	f.Open, _ = listBurst(ctx, hc, srv.URL, cfg.Requests, false)

	switch {
	case f.Held.OK+f.Held.Other > 0:
		return f, fmt.Errorf("a list was served while %d requests held the limit of %d: %s", cfg.Limit, cfg.Limit, f)
	case f.Watch != http.StatusOK:
		return f, fmt.Errorf("the watch was not served while short requests held their limit: %s", f)
	case f.Open.OK == 0 || f.Open.Other > 0:
		return f, fmt.Errorf("unexpected answers with no slot held: %s", f)
	case f.Held.badRetry+f.Open.badRetry > 0:
		return f, fmt.Errorf("%d answers of 429 without Retry-After: 1", f.Held.badRetry+f.Open.badRetry)
	}
	return f, nil
}

// listBurst sends n concurrent lists of the burst namespace, and with watch
// a short watch of another namespace; it returns the answers and the
// watch's status.
func listBurst(ctx context.Context, hc *http.Client, base string, n int, watch bool) (burstCount, int) {
	var c burstCount
	var watchStatus int
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			t0 := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/burst/configmaps", nil)
			resp, err := hc.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				c.Other++
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				c.OK++
				c.SlowestOK = max(c.SlowestOK, time.Since(t0))
			case http.StatusTooManyRequests:
				c.TooMany++
				if resp.Header.Get("Retry-After") != "1" {
					c.badRetry++
				}
			default:
				c.Other++
			}
		})
	}
	if watch {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/quiet/configmaps?watch=1&timeoutSeconds=1", nil)
			resp, err := hc.Do(req)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			watchStatus = resp.StatusCode
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return c, watchStatus
}

// waitingReads are lists held open by the server, each waiting for a
// resourceVersion it has not reached.
type waitingReads struct {
	cancel  context.CancelFunc
	done    chan error   // one per read: nil when its client left first
	waiting atomic.Int32 // reads unanswered for acceptedAfter: let in
	n       int
	left    bool
}

// acceptedAfter is how long a read must stay unanswered to count as let
// in: a refusal is immediate, a let-in read waits holdFor.
const acceptedAfter = 300 * time.Millisecond

// awaitWaiting waits until every read has been let in.
func (h *waitingReads) awaitWaiting() error {
	deadline := time.Now().Add(holdRetry + acceptedAfter + time.Second)
	for int(h.waiting.Load()) < h.n {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d reads were let in to wait, the others refused with 429 for %v", h.waiting.Load(), h.n, holdRetry)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// holdSlots starts n lists of the quiet namespace at resourceVersion rv,
// each on its own connection. A list refused with 429 tries again for up to
// holdRetry: the client can have an answer before the server has given its
// request's slot back (the fill's last writes, or awaitStatus's probe racing
// the holders), but a server that lets fewer than n wait keeps refusing one.
func holdSlots(ctx context.Context, base string, n int, rv int64) *waitingReads {
	ctx, cancel := context.WithCancel(ctx)
	h := &waitingReads{cancel: cancel, done: make(chan error, n), n: n}
	u := fmt.Sprintf("%s/api/v1/namespaces/quiet/configmaps?resourceVersion=%d&resourceVersionMatch=NotOlderThan", base, rv)
	for range n {
		go func() {
			hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			var resp *http.Response
			var err error
			for deadline := time.Now().Add(holdRetry); ; {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
				letIn := time.AfterFunc(acceptedAfter, func() { h.waiting.Add(1) })
				resp, err = hc.Do(req)
				if !letIn.Stop() {
					h.waiting.Add(-1)
				}
				if err != nil || resp.StatusCode != http.StatusTooManyRequests || time.Now().After(deadline) {
					break
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				time.Sleep(holdRetryPause)
			}
			switch {
			case ctx.Err() != nil:
				h.done <- nil
			case err != nil:
				h.done <- fmt.Errorf("a waiting read failed before its client left: %w", err)
			default:
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
				resp.Body.Close()
				h.done <- fmt.Errorf("a read waiting for resourceVersion %d was answered before its client left: %d %s", rv, resp.StatusCode, b)
			}
		}()
	}
	return h
}

// leave cancels the waiting reads, closing their connections, and reports
// the first that was answered while it should still have been waiting.
func (h *waitingReads) leave() error {
	if h.left {
		return nil
	}
	h.left = true
	h.cancel()
	var first error
	for range h.n {
		if err := <-h.done; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// awaitStatus polls a cheap list until the server answers it with want
// settledProbes times in a row; it gives up after 10 s.
func awaitStatus(ctx context.Context, hc *http.Client, base string, want int) error {
	deadline := time.Now().Add(10 * time.Second)
	last, inARow := 0, 0
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/quiet/configmaps?limit=1", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if last = resp.StatusCode; last != want {
			inARow = 0
		} else if inARow++; inARow == settledProbes {
			return nil
		}
		time.Sleep(2 * holdRetryPause)
	}
	return fmt.Errorf("a list was still answered %d after 10 s", last)
}
