// Package loadgen drives one bounded, repeatable load against any server that
// speaks the Kubernetes API — creates, gets, paged lists and a watch fan-out —
// so the reference server and kube-apiserver can be measured side by side.
//
// Every phase is bounded in count and by the context's deadline; the load
// works in a namespace of its own and deletes it at the end.
package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Plan sizes the load. Zero fields take the defaults of DefaultPlan.
type Plan struct {
	Objects     int // configmaps created, read and listed
	Concurrency int // parallel requests for creates and gets
	PageSize    int // limit for the paged lists
	ListRounds  int // full paged walks of the collection
	Watchers    int // concurrent watches in the fan-out phase
	WatchEvents int // updates each watcher must receive
}

// DefaultPlan is the load `make bench-compare` drives.
var DefaultPlan = Plan{Objects: 10000, Concurrency: 8, PageSize: 500, ListRounds: 3, Watchers: 100, WatchEvents: 1000}

// WithDefaults fills zero fields from DefaultPlan.
func (p Plan) WithDefaults() Plan {
	d := DefaultPlan
	if p.Objects > 0 {
		d.Objects = p.Objects
	}
	if p.Concurrency > 0 {
		d.Concurrency = p.Concurrency
	}
	if p.PageSize > 0 {
		d.PageSize = p.PageSize
	}
	if p.ListRounds > 0 {
		d.ListRounds = p.ListRounds
	}
	if p.Watchers > 0 {
		d.Watchers = p.Watchers
	}
	if p.WatchEvents > 0 {
		d.WatchEvents = p.WatchEvents
	}
	return d
}

// Target is where the load goes: a base URL and a client that authenticates.
type Target struct {
	Name    string
	BaseURL string
	Client  *http.Client
}

// Phase is the measurement of one kind of operation.
type Phase struct {
	Name      string        `json:"name"`
	Ops       int           `json:"ops"`
	Elapsed   time.Duration `json:"elapsed"`
	P50       time.Duration `json:"p50"`
	P99       time.Duration `json:"p99"`
	OpsPerSec float64       `json:"opsPerSec"`
}

// Result is one target's measurements, in phase order.
type Result struct {
	Target string  `json:"target"`
	Plan   Plan    `json:"plan"`
	Phases []Phase `json:"phases"`
}

// Phase names, in the order Run measures them.
const (
	PhaseCreate = "create"
	PhaseGet    = "get"
	PhaseList   = "paged-list"
	PhaseWatch  = "watch-fanout"
)

// Run drives the plan against the target and reports each phase.
func Run(ctx context.Context, t Target, plan Plan) (Result, error) {
	plan = plan.WithDefaults()
	r := &runner{t: t, plan: plan}
	ns, err := r.createNamespace(ctx)
	if err != nil {
		return Result{}, err
	}
	r.ns = ns
	defer r.deleteNamespace()

	res := Result{Target: t.Name, Plan: plan}
	for _, phase := range []struct {
		name string
		run  func(context.Context) ([]time.Duration, time.Duration, error)
	}{
		{PhaseCreate, r.creates},
		{PhaseGet, r.gets},
		{PhaseList, r.pagedLists},
		{PhaseWatch, r.watchFanout},
	} {
		lat, elapsed, err := phase.run(ctx)
		if err != nil {
			return res, fmt.Errorf("%s: %s phase: %w", t.Name, phase.name, err)
		}
		res.Phases = append(res.Phases, summarize(phase.name, lat, elapsed))
	}
	return res, nil
}

type runner struct {
	t    Target
	plan Plan
	ns   string
}

func (r *runner) do(ctx context.Context, method, path string, body []byte, want int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.t.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := r.t.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return nil, fmt.Errorf("%s %s: got %d, want %d: %s", method, path, resp.StatusCode, want, trim(data))
	}
	return data, nil
}

func trim(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func (r *runner) createNamespace(ctx context.Context) (string, error) {
	var suffix [4]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return "", err
	}
	ns := "ac-load-" + hex.EncodeToString(suffix[:])
	body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns)
	if _, err := r.do(ctx, http.MethodPost, "/api/v1/namespaces", []byte(body), http.StatusCreated); err != nil {
		return "", fmt.Errorf("%s: create namespace: %w", r.t.Name, err)
	}
	return ns, nil
}

// deleteNamespace runs on its own short deadline so cleanup happens even
// when the load's context has ended.
func (r *runner) deleteNamespace() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = r.do(ctx, http.MethodDelete, "/api/v1/namespaces/"+r.ns, nil, http.StatusOK)
}

func (r *runner) itemPath(i int) string {
	return fmt.Sprintf("/api/v1/namespaces/%s/configmaps/cm-%05d", r.ns, i)
}

func (r *runner) collectionPath() string {
	return "/api/v1/namespaces/" + r.ns + "/configmaps"
}

// parallel runs op for i in [0,n) on plan.Concurrency workers and returns
// each op's latency.
func (r *runner) parallel(ctx context.Context, n int, op func(ctx context.Context, i int) error) ([]time.Duration, time.Duration, error) {
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < r.plan.Concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				if err := op(ctx, i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return lat, time.Since(start), firstErr
}

func (r *runner) creates(ctx context.Context) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, r.plan.Objects, func(ctx context.Context, i int) error {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%05d","labels":{"load":"apiconform"}},"data":{"index":"%d","payload":"0123456789abcdef0123456789abcdef"}}`, i, i)
		_, err := r.do(ctx, http.MethodPost, r.collectionPath(), []byte(body), http.StatusCreated)
		return err
	})
}

func (r *runner) gets(ctx context.Context) ([]time.Duration, time.Duration, error) {
	return r.parallel(ctx, r.plan.Objects, func(ctx context.Context, i int) error {
		_, err := r.do(ctx, http.MethodGet, r.itemPath(i), nil, http.StatusOK)
		return err
	})
}

// pagedLists walks the whole collection ListRounds times at PageSize; each
// page is one measured operation, and every walk must see every object.
func (r *runner) pagedLists(ctx context.Context) ([]time.Duration, time.Duration, error) {
	var lat []time.Duration
	start := time.Now()
	for round := 0; round < r.plan.ListRounds; round++ {
		seen, token := 0, ""
		for {
			q := url.Values{"limit": {fmt.Sprint(r.plan.PageSize)}}
			if token != "" {
				q.Set("continue", token)
			}
			t0 := time.Now()
			data, err := r.do(ctx, http.MethodGet, r.collectionPath()+"?"+q.Encode(), nil, http.StatusOK)
			if err != nil {
				return nil, 0, err
			}
			lat = append(lat, time.Since(t0))
			var page struct {
				Metadata struct {
					Continue string `json:"continue"`
				} `json:"metadata"`
				Items []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(data, &page); err != nil {
				return nil, 0, fmt.Errorf("decode page: %w", err)
			}
			seen += len(page.Items)
			if page.Metadata.Continue == "" {
				break
			}
			token = page.Metadata.Continue
		}
		if seen != r.plan.Objects {
			return nil, 0, fmt.Errorf("paged walk saw %d objects, want %d", seen, r.plan.Objects)
		}
	}
	return lat, time.Since(start), nil
}

// watchFanout opens Watchers watches on the collection from its current
// resourceVersion, makes WatchEvents updates to one object, and measures for
// each event how long after its write every watcher had it.
func (r *runner) watchFanout(ctx context.Context) ([]time.Duration, time.Duration, error) {
	data, err := r.do(ctx, http.MethodGet, r.collectionPath()+"?limit=1", nil, http.StatusOK)
	if err != nil {
		return nil, 0, err
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, 0, err
	}
	target := r.plan.WatchEvents
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()

	// received[e] counts watchers that have event e; lastSeen is when the
	// last of them got it.
	received := make([]atomic.Int32, target)
	lastSeen := make([]atomic.Int64, target)
	ready := make(chan error, r.plan.Watchers)
	done := make(chan error, r.plan.Watchers)
	for w := 0; w < r.plan.Watchers; w++ {
		go func() {
			done <- r.watchOne(wctx, list.Metadata.ResourceVersion, target, ready, func(e int) {
				if int(received[e].Add(1)) == r.plan.Watchers {
					lastSeen[e].Store(time.Now().UnixNano())
				}
			})
		}()
	}
	for w := 0; w < r.plan.Watchers; w++ {
		if err := <-ready; err != nil {
			return nil, 0, err
		}
	}

	written := make([]int64, target)
	start := time.Now()
	for e := 0; e < target; e++ {
		patch := fmt.Sprintf(`{"data":{"seq":"%d"}}`, e)
		req, err := http.NewRequestWithContext(ctx, http.MethodPatch, r.t.BaseURL+r.itemPath(0), bytes.NewReader([]byte(patch)))
		if err != nil {
			return nil, 0, err
		}
		req.Header.Set("Content-Type", "application/merge-patch+json")
		written[e] = time.Now().UnixNano()
		resp, err := r.t.Client.Do(req)
		if err != nil {
			return nil, 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, 0, fmt.Errorf("patch: got %d", resp.StatusCode)
		}
	}
	for w := 0; w < r.plan.Watchers; w++ {
		if err := <-done; err != nil {
			return nil, 0, err
		}
	}
	elapsed := time.Since(start)
	lat := make([]time.Duration, target)
	for e := range lat {
		lat[e] = time.Duration(lastSeen[e].Load() - written[e])
	}
	return lat, elapsed, nil
}

// watchOne reads MODIFIED events until it has seen want of them.
func (r *runner) watchOne(ctx context.Context, rv string, want int, ready chan<- error, got func(int)) error {
	q := url.Values{"watch": {"1"}, "resourceVersion": {rv}, "fieldSelector": {"metadata.name=cm-00000"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.t.BaseURL+r.collectionPath()+"?"+q.Encode(), nil)
	if err != nil {
		ready <- err
		return err
	}
	resp, err := r.t.Client.Do(req)
	if err != nil {
		ready <- err
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("watch: got %d", resp.StatusCode)
		ready <- err
		return err
	}
	ready <- nil
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for n := 0; n < want; {
		var ev struct {
			Type string `json:"type"`
		}
		if err := dec.Decode(&ev); err != nil {
			return fmt.Errorf("watch ended after %d of %d events: %w", n, want, err)
		}
		if ev.Type == "MODIFIED" {
			got(n)
			n++
		}
	}
	return nil
}

func summarize(name string, lat []time.Duration, elapsed time.Duration) Phase {
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	p := Phase{Name: name, Ops: len(lat), Elapsed: elapsed}
	if len(sorted) > 0 {
		p.P50 = sorted[len(sorted)/2]
		p.P99 = sorted[(len(sorted)*99)/100]
	}
	if elapsed > 0 {
		p.OpsPerSec = float64(len(lat)) / elapsed.Seconds()
	}
	return p
}
