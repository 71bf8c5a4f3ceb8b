package robustness

import (
	"context"
	"fmt"
	"io"
	"net/http"
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

// BurstFigures count the answers.
type BurstFigures struct {
	OK, TooMany, Other int
	SlowestOK          time.Duration
	Watch              int // status of an unrelated short watch started with the burst
}

func (f BurstFigures) String() string {
	return fmt.Sprintf("%d answered 200 (slowest %v), %d answered 429 with Retry-After: 1, %d other; an unrelated watch: %d",
		f.OK, f.SlowestOK.Round(time.Millisecond), f.TooMany, f.Other, f.Watch)
}

// Burst runs the scenario against `apiconform serve` (open: no token file).
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
	var mu sync.Mutex
	var wg sync.WaitGroup
	var badRetry int
	start := make(chan struct{})
	for range cfg.Requests {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t0 := time.Now()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/namespaces/burst/configmaps", nil)
			resp, err := hc.Do(req)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				f.Other++
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				f.OK++
				f.SlowestOK = max(f.SlowestOK, time.Since(t0))
			case http.StatusTooManyRequests:
				f.TooMany++
				if resp.Header.Get("Retry-After") != "1" {
					badRetry++
				}
			default:
				f.Other++
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-start
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/namespaces/quiet/configmaps?watch=1&timeoutSeconds=1", nil)
		resp, err := hc.Do(req)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		mu.Lock()
		f.Watch = resp.StatusCode
		mu.Unlock()
	}()
	close(start)
	wg.Wait()
	switch {
	case f.TooMany == 0:
		return f, fmt.Errorf("no 429 in a burst of %d against a limit of %d: %s", cfg.Requests, cfg.Limit, f)
	case badRetry > 0:
		return f, fmt.Errorf("%d answers of 429 without Retry-After: 1", badRetry)
	case f.Other > 0 || f.Watch != http.StatusOK:
		return f, fmt.Errorf("unexpected answers: %s", f)
	}
	return f, nil
}
