package robustness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AmplifyConfig is the watch-amplification scenario of issue #18: many
// watches of a large collection, abandoned by their clients shortly after
// they start.
type AmplifyConfig struct {
	Objects     int           // configmaps in the namespace
	ValueBytes  int           // size of each configmap's data
	Watches     int           // watches started at once without a resourceVersion
	WatchFor    time.Duration // how long each client stays before it cancels
	NoMatch     int           // watches with a label selector that matches nothing
	NoMatchFor  time.Duration
	Settle      time.Duration // how long after the clients left the figures are taken
	Concurrency int           // writers filling the namespace
}

// DefaultAmplify is the scenario.
var DefaultAmplify = AmplifyConfig{Objects: 1000, ValueBytes: 10 << 10, Watches: 300, WatchFor: time.Second,
	NoMatch: 100, NoMatchFor: 200 * time.Millisecond, Settle: 3 * time.Second, Concurrency: 8}

// AmplifyFigures are the server process's figures: idle (the namespace
// filled and Settle later, before any watch), Settle after the last client
// of the first scenario left (its HWM is the peak since idle), and Settle
// after the second's. The test never forces a collection in the server
// before these figures.
type AmplifyFigures struct {
	Idle, Settled, NoMatchSettled Stats
	// Collected is taken last, after a forced collection that returns freed
	// memory to the OS: what the server still holds, not what the Go
	// runtime has yet to give back.
	Collected            Stats
	CPUAfterLeave        time.Duration // server CPU in the Settle after the last client left
	NoMatchCPUAfterLeave time.Duration
	WatchStatus          map[int]int // HTTP status → count in the first scenario (0: no response in time)
}

func (f AmplifyFigures) String() string {
	mb := func(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	return fmt.Sprintf("RSS idle %s, peak %s, %v after the clients left %s (%+.0f%%), after the no-match watches %s (%+.0f%%), at the end after a forced collection %s (%+.0f%%); heap in use idle %s, after %s; goroutines idle %d, after %d (and stack ballast %d, %d); server CPU after the clients left %v; no-match selector watches: CPU after %v, goroutines %d; watch responses %v",
		mb(f.Idle.RSS), mb(f.Settled.HWM), 3*time.Second, mb(f.Settled.RSS), pct(f.Settled.RSS, f.Idle.RSS),
		mb(f.NoMatchSettled.RSS), pct(f.NoMatchSettled.RSS, f.Idle.RSS),
		mb(f.Collected.RSS), pct(f.Collected.RSS, f.Idle.RSS), mb(int64(f.Idle.HeapInuse)), mb(int64(f.Settled.HeapInuse)),
		f.Idle.Goroutines, f.Settled.Goroutines, f.Idle.Ballast, f.Settled.Ballast, f.CPUAfterLeave.Round(time.Millisecond),
		f.NoMatchCPUAfterLeave.Round(time.Millisecond), f.NoMatchSettled.Goroutines, f.WatchStatus)
}

func pct(v, base int64) float64 { return 100 * float64(v-base) / float64(base) }

// Amplify starts a child server, fills namespace ns and runs the scenario.
func Amplify(ctx context.Context, ns string, cfg AmplifyConfig) (AmplifyFigures, error) {
	var f AmplifyFigures
	srv, err := startChild(ctx)
	if err != nil {
		return f, err
	}
	defer srv.stop()
	base := srv.URL
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Concurrency}}
	if err := fill(ctx, c, base, ns, cfg); err != nil {
		return f, err
	}
	c.CloseIdleConnections()
	// Idle: the writes settled, no collection forced; the peak from here
	// on is the watches'.
	time.Sleep(cfg.Settle)
	if f.Idle, err = srv.ask("resetpeak"); err != nil {
		return f, err
	}

	f.WatchStatus = map[int]int{}
	var mu sync.Mutex
	watchAll(ctx, base+"/api/v1/namespaces/"+ns+"/configmaps?watch=1", cfg.Watches, cfg.WatchFor, func(code int) {
		mu.Lock()
		f.WatchStatus[code]++
		mu.Unlock()
	})
	left, err := srv.stats()
	if err != nil {
		return f, err
	}
	time.Sleep(cfg.Settle)
	if f.Settled, err = srv.stats(); err != nil {
		return f, err
	}
	f.CPUAfterLeave = f.Settled.CPU - left.CPU

	sel := url.QueryEscape("apiconform-robustness=none")
	watchAll(ctx, base+"/api/v1/namespaces/"+ns+"/configmaps?watch=1&labelSelector="+sel, cfg.NoMatch, cfg.NoMatchFor, func(int) {})
	if left, err = srv.stats(); err != nil {
		return f, err
	}
	time.Sleep(cfg.Settle)
	if f.NoMatchSettled, err = srv.stats(); err != nil {
		return f, err
	}
	f.NoMatchCPUAfterLeave = f.NoMatchSettled.CPU - left.CPU
	f.Collected, err = srv.ask("gc")
	return f, err
}

// watchAll starts n watches at once, each cancelled by its client after d,
// and returns when every client has gone.
func watchAll(ctx context.Context, u string, n int, d time.Duration, status func(int)) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{DisableKeepAlives: true}
			defer tr.CloseIdleConnections()
			wctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			req, _ := http.NewRequestWithContext(wctx, http.MethodGet, u, nil)
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				status(0)
				return
			}
			defer resp.Body.Close()
			status(resp.StatusCode)
			_, _ = io.Copy(io.Discard, resp.Body)
		}()
	}
	wg.Wait()
}

func fill(ctx context.Context, c *http.Client, base, ns string, cfg AmplifyConfig) error {
	body, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}})
	if err := post(ctx, c, base+"/api/v1/namespaces", body); err != nil {
		return err
	}
	value := strings.Repeat("x", cfg.ValueBytes)
	work := make(chan int)
	errs := make(chan error, cfg.Concurrency)
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				b, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "cm-" + strconv.Itoa(i), "labels": map[string]any{"app": "amplify"}},
					"data":     map[string]any{"v": value}})
				if err := post(ctx, c, base+"/api/v1/namespaces/"+ns+"/configmaps", b); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var err error
loop:
	for i := range cfg.Objects {
		select {
		case work <- i:
		case err = <-errs:
			break loop
		}
	}
	close(work)
	wg.Wait()
	if err == nil && len(errs) > 0 {
		err = <-errs
	}
	return err
}

func post(ctx context.Context, c *http.Client, u string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, b)
	}
	return nil
}
