package robustness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
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
	Held  burstCount // the burst while Limit slow creates hold every slot
	Open  burstCount // the burst with nothing held
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
	return fmt.Sprintf("with every slot held: %s, an unrelated watch %d; with none held: %s", f.Held, f.Watch, f.Open)
}

// Burst runs the scenario against `apiconform serve` (open: no token file).
// Whether a burst of fast lists overlaps on the server depends on the
// machine, so the limit is checked where the outcome is certain: Limit
// creates whose bodies the client holds back occupy every slot (a slot is
// taken before the body is read), and then every list of the burst must be
// refused with 429, while a watch, drawn from its own pool, is served. The
// held creates then finish (201) and the same burst, with nothing held, may
// only be answered 200 or 429.
func Burst(ctx context.Context, bin string, cfg BurstConfig) (BurstFigures, error) {
	var f BurstFigures
	srv, err := serve(ctx, bin, "--max-requests-inflight", fmt.Sprint(cfg.Limit))
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
	if _, err := newClient(srv.URL, "").createNamespace(ctx, "quiet"); err != nil {
		return f, err
	}

	held, err := holdSlots(ctx, srv.URL, cfg.Limit)
	if err != nil {
		return f, err
	}
	defer held.abandon()
	if err := waitForRefusal(ctx, hc, srv.URL); err != nil {
		return f, err
	}
	f.Held, f.Watch = listBurst(ctx, hc, srv.URL, cfg.Requests, true)
	created, err := held.finish()
	if err != nil {
		return f, err
	}
	f.Open, _ = listBurst(ctx, hc, srv.URL, cfg.Requests, false)

	switch {
	case f.Held.OK+f.Held.Other > 0:
		return f, fmt.Errorf("a list was served while %d requests held the limit of %d: %s", cfg.Limit, cfg.Limit, f)
	case f.Watch != http.StatusOK:
		return f, fmt.Errorf("the watch was not served while short requests held their limit: %s", f)
	case created != cfg.Limit:
		return f, fmt.Errorf("%d of the %d held creates answered 201 once their bodies came", created, cfg.Limit)
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

// heldCreates are creates whose headers were sent and whose bodies are
// held back, each on its own connection.
type heldCreates struct {
	conns  []net.Conn
	bodies [][]byte
}

// holdSlots opens n connections and sends on each the headers of a
// configmap create in the quiet namespace, without its body.
func holdSlots(ctx context.Context, base string, n int) (*heldCreates, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	h := &heldCreates{}
	var d net.Dialer
	for i := range n {
		conn, err := d.DialContext(ctx, "tcp", u.Host)
		if err != nil {
			h.abandon()
			return nil, err
		}
		body := fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held-%d"}}`, i)
		head := fmt.Sprintf("POST /api/v1/namespaces/quiet/configmaps HTTP/1.1\r\nHost: %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", u.Host, len(body))
		h.conns, h.bodies = append(h.conns, conn), append(h.bodies, body)
		if _, err := io.WriteString(conn, head); err != nil {
			h.abandon()
			return nil, err
		}
	}
	return h, nil
}

// finish sends the held bodies and counts the creates answered 201.
func (h *heldCreates) finish() (int, error) {
	created := 0
	for i, conn := range h.conns {
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(h.bodies[i]); err != nil {
			return created, err
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return created, fmt.Errorf("held create %d: %w", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusCreated {
			created++
		}
	}
	return created, nil
}

func (h *heldCreates) abandon() {
	for _, c := range h.conns {
		_ = c.Close()
	}
}

// waitForRefusal polls a cheap list until the server refuses it with 429:
// the held creates have then been admitted and hold every slot. It gives up
// after 10 s.
func waitForRefusal(ctx context.Context, hc *http.Client, base string) error {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/namespaces/quiet/configmaps?limit=1", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.New("the held creates never filled the in-flight limit: a list was still served 10 s after their headers")
}
