package robustness

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DurabilityConfig bounds the kill -9 rounds.
type DurabilityConfig struct {
	Rounds   int
	Writers  int
	WriteFor time.Duration // writes run this long before the kill, and are in flight when it comes
}

// DefaultDurability is what `make robustness` runs.
var DefaultDurability = DurabilityConfig{Rounds: 3, Writers: 8, WriteFor: 1500 * time.Millisecond}

// DurabilityFigures say what the rounds checked.
type DurabilityFigures struct {
	Rounds, Acknowledged, Lost int
	SlowestStart               time.Duration
}

func (f DurabilityFigures) String() string {
	return fmt.Sprintf("%d kill -9 rounds, %d acknowledged writes, %d lost, slowest restart %v",
		f.Rounds, f.Acknowledged, f.Lost, f.SlowestStart.Round(time.Millisecond))
}

// Durability runs `apiconform-refserver --data-dir dir`, writes from several
// clients, kills the server with SIGKILL while writes are in flight, and
// restarts it: every acknowledged create must be there with its revision,
// every acknowledged update's value (or a later one), and the revision
// counter must continue above every acknowledged revision.
func Durability(ctx context.Context, bin, dir string, cfg DurabilityConfig) (DurabilityFigures, error) {
	var f DurabilityFigures
	const ns = "durable"
	created := make(map[string]int64) // name → revision acknowledged
	counters := make(map[string]int)  // per-writer counter object → last value acknowledged
	var mu sync.Mutex
	for round := 0; round <= cfg.Rounds; round++ {
		began := time.Now()
		srv, err := serve(ctx, bin, "--data-dir", dir)
		if err != nil {
			return f, fmt.Errorf("round %d: start: %w", round, err)
		}
		f.SlowestStart = max(f.SlowestStart, time.Since(began))
		c := newClient(srv.URL, "")
		if round == 0 {
			if _, err := c.createNamespace(ctx, ns); err != nil {
				srv.stop()
				return f, err
			}
		}
		lost, maxRV, err := verifyDurable(ctx, c, ns, created, counters)
		f.Lost += lost
		if err != nil || round == cfg.Rounds {
			srv.stop()
			f.Rounds = round
			if err == nil && lost > 0 {
				err = fmt.Errorf("%d acknowledged writes lost", f.Lost)
			}
			return f, err
		}
		var o obj
		if code, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", cm(fmt.Sprintf("probe-%d", round), "none", fmt.Sprintf("probe-%d", round)), &o); err != nil || code != http.StatusCreated || o.rv() <= maxRV {
			srv.stop()
			return f, fmt.Errorf("round %d: first write after restart: %d at revision %d, after acknowledged %d: %v", round, code, o.rv(), maxRV, err)
		}
		created[fmt.Sprintf("probe-%d", round)] = o.rv()
		f.Acknowledged++

		var wg sync.WaitGroup
		deadline := time.Now().Add(cfg.WriteFor)
		for w := range cfg.Writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				counter := fmt.Sprintf("counter-%d", w)
				for i := 0; ; i++ {
					var o obj
					if i%4 == 3 {
						mu.Lock()
						exists := counters[counter] > 0
						mu.Unlock()
						method, path, want := http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", http.StatusCreated
						if exists {
							method, path, want = http.MethodPut, path+"/"+counter, http.StatusOK
						}
						value := round*1_000_000 + i
						code, err := c.do(ctx, method, path, cm(counter, "none", strconv.Itoa(value)), &o)
						if err != nil || code != want {
							return // the server is gone
						}
						mu.Lock()
						counters[counter] = value
						f.Acknowledged++
						mu.Unlock()
						continue
					}
					name := fmt.Sprintf("r%d-w%d-%d", round, w, i)
					code, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", cm(name, "none", name), &o)
					if err != nil || code != http.StatusCreated {
						return
					}
					mu.Lock()
					created[name] = o.rv()
					f.Acknowledged++
					mu.Unlock()
					if round == cfg.Rounds-1 && time.Now().After(deadline.Add(5*time.Second)) {
						return // bounded, should the kill not come
					}
				}
			}()
		}
		time.Sleep(time.Until(deadline))
		srv.kill9()
		wg.Wait()
		c.http.CloseIdleConnections()
	}
	return f, nil
}

// verifyDurable reads back every acknowledged write and returns how many
// are missing and the highest revision acknowledged.
func verifyDurable(ctx context.Context, c *client, ns string, created map[string]int64, counters map[string]int) (lost int, maxRV int64, err error) {
	for name, rv := range created {
		maxRV = max(maxRV, rv)
		var o obj
		code, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/"+name, nil, &o)
		if err != nil {
			return lost, maxRV, err
		}
		if code == http.StatusNotFound || o.rv() != rv || o.Data["v"] != name {
			lost++
		}
	}
	for name, want := range counters {
		var o obj
		code, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/"+name, nil, &o)
		if err != nil {
			return lost, maxRV, err
		}
		got, _ := strconv.Atoi(o.Data["v"])
		if code != http.StatusOK || got < want {
			lost++
		}
		maxRV = max(maxRV, o.rv())
	}
	return lost, maxRV, nil
}
