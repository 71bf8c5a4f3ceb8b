package robustness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// HistoryConfig bounds the concurrent writers-and-watchers round.
type HistoryConfig struct {
	Writers         int           // each owns its own names, so every name's history is known in order
	NamesPerWriter  int           //
	WritesPerWriter int           //
	MidStream       int           // watchers started while the writes run (from an acknowledged revision, or streaming)
	ResumeEvery     int           // the resuming watcher drops its connection after this many events
	Timeout         time.Duration // the whole round
}

// DefaultHistory is the round `make robustness` runs.
var DefaultHistory = HistoryConfig{Writers: 6, NamesPerWriter: 12, WritesPerWriter: 400, MidStream: 6, ResumeEvery: 97, Timeout: 60 * time.Second}

// HistoryFigures say what a round checked.
type HistoryFigures struct {
	Writes, Watchers, Events, Resumes int
	Duration                          time.Duration
}

func (f HistoryFigures) String() string {
	return fmt.Sprintf("%d acknowledged writes, %d watchers, %d events checked (ordered, unique, gap-free), %d resumes, in %v",
		f.Writes, f.Watchers, f.Events, f.Resumes, f.Duration.Round(100*time.Millisecond))
}

// ack is one acknowledged write; a deletion's revision is learnt from the
// reference watcher (a DELETE answers with the object as it was).
type ack struct {
	typ    string // ADDED, MODIFIED, DELETED
	rv     int64
	parity string
}

// change is one write in revision order, as the reference watcher saw it
// and the acknowledgements confirm.
type change struct {
	typ, name, parity string
	rv                int64
}

type watchSpec struct {
	name      string
	start     int64
	selector  string // "parity=even" or ""
	streaming bool   // sendInitialEvents=true from start
	resume    int    // drop the connection after this many events (0 = never)
}

type watchResult struct {
	spec    watchSpec
	events  []event
	initEnd int64 // streaming: the revision the initial events describe
	initial int   // streaming: how many events were initial
	resumes int
	err     error
}

// History runs writers and watchers against the server at base, in a new
// namespace ns, and checks every watcher's events against the history the
// writers had acknowledged: per watcher, revisions strictly increase; the
// reference watcher's events are exactly the acknowledged writes; every
// other watcher (from a later revision, with a label selector, streaming
// its initial state, or dropping and resuming its connection) sees exactly
// the projection of that history onto its start and selector.
func History(ctx context.Context, base, token, ns string, cfg HistoryConfig) (HistoryFigures, error) {
	var f HistoryFigures
	began := time.Now()
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	c := newClient(base, token)
	rv0, err := c.createNamespace(ctx, ns)
	if err != nil {
		return f, err
	}
	var final atomic.Int64 // set when the writes are done: watchers stop there
	var (
		mu      sync.Mutex
		results []*watchResult
		wg      sync.WaitGroup
	)
	startWatch := func(s watchSpec) {
		res := &watchResult{spec: s}
		mu.Lock()
		results = append(results, res)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWatch(ctx, c, ns, res, &final)
		}()
	}
	startWatch(watchSpec{name: "reference", start: rv0})
	startWatch(watchSpec{name: "even", start: rv0, selector: "parity=even"})
	startWatch(watchSpec{name: "odd-resuming", start: rv0, selector: "parity=odd", resume: cfg.ResumeEvery / 3})
	startWatch(watchSpec{name: "resuming", start: rv0, resume: cfg.ResumeEvery})

	hist := make(map[string][]ack)
	var lastAck atomic.Int64
	var writers sync.WaitGroup
	errs := make(chan error, cfg.Writers)
	for w := range cfg.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			own, err := write(ctx, c, ns, w, cfg, &lastAck)
			mu.Lock()
			for k, v := range own {
				hist[k] = v
			}
			mu.Unlock()
			if err != nil {
				errs <- err
			}
		}()
	}
	for i := range cfg.MidStream {
		time.Sleep(time.Duration(50+rand.IntN(300)) * time.Millisecond)
		s := watchSpec{name: fmt.Sprintf("mid-%d", i), start: max(lastAck.Load(), rv0)}
		switch i % 3 {
		case 1:
			s.selector = "parity=even"
		case 2:
			s.streaming = true
		}
		startWatch(s)
	}
	writers.Wait()
	close(errs)
	if err := <-errs; err != nil {
		cancel()
		wg.Wait()
		return f, err
	}
	// A last write ends the history at a known revision.
	var o obj
	code, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", cm("zz-final", "none", "end"), &o)
	if err != nil || code != http.StatusCreated {
		cancel()
		wg.Wait()
		return f, fmt.Errorf("final write: %d %v", code, err)
	}
	hist["zz-final"] = []ack{{typ: "ADDED", rv: o.rv(), parity: "none"}}
	final.Store(o.rv())
	wg.Wait()

	for _, acks := range hist {
		f.Writes += len(acks)
	}
	f.Watchers = len(results)
	full, err := checkReference(results[0], hist)
	if err != nil {
		return f, err
	}
	for _, r := range results {
		f.Events += len(r.events)
		f.Resumes += r.resumes
		if r.err != nil {
			return f, fmt.Errorf("watcher %s: %w", r.spec.name, r.err)
		}
		if err := checkWatcher(r, full, final.Load()); err != nil {
			return f, fmt.Errorf("watcher %s (from %d, selector %q, streaming %v): %w", r.spec.name, r.spec.start, r.spec.selector, r.spec.streaming, err)
		}
	}
	f.Duration = time.Since(began)
	return f, nil
}

func cm(name, parity, value string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "labels": map[string]any{"parity": parity}},
		"data":     map[string]any{"v": value}}
}

// write is one writer: random creates, updates and deletes of its own names.
func write(ctx context.Context, c *client, ns string, w int, cfg HistoryConfig, lastAck *atomic.Int64) (map[string][]ack, error) {
	hist := make(map[string][]ack)
	live := make(map[string]bool)
	rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
	base := "/api/v1/namespaces/" + ns + "/configmaps"
	for i := range cfg.WritesPerWriter {
		name := fmt.Sprintf("w%d-%02d", w, rng.IntN(cfg.NamesPerWriter))
		parity := [2]string{"even", "odd"}[rng.IntN(2)]
		var o obj
		var code int
		var err error
		a := ack{parity: parity}
		switch {
		case !live[name]:
			a.typ = "ADDED"
			code, err = c.do(ctx, http.MethodPost, base, cm(name, parity, strconv.Itoa(i)), &o)
			if code != http.StatusCreated && err == nil {
				err = fmt.Errorf("create %s: %d %s", name, code, o.Message)
			}
		case rng.IntN(5) == 0:
			a.typ = "DELETED"
			code, err = c.do(ctx, http.MethodDelete, base+"/"+name, nil, &o)
			if code != http.StatusOK && err == nil {
				err = fmt.Errorf("delete %s: %d %s", name, code, o.Message)
			}
		default:
			a.typ = "MODIFIED"
			code, err = c.do(ctx, http.MethodPut, base+"/"+name, cm(name, parity, strconv.Itoa(i)), &o)
			if code != http.StatusOK && err == nil {
				err = fmt.Errorf("update %s: %d %s", name, code, o.Message)
			}
		}
		if err != nil {
			return hist, fmt.Errorf("writer %d: %w", w, err)
		}
		live[name] = a.typ != "DELETED"
		if a.typ != "DELETED" {
			a.rv = o.rv()
			for prev := lastAck.Load(); a.rv > prev && !lastAck.CompareAndSwap(prev, a.rv); prev = lastAck.Load() {
			}
		}
		hist[name] = append(hist[name], a)
	}
	return hist, nil
}

// runWatch watches from the spec's start until the final revision,
// resuming from the last revision seen whenever the stream ends.
func runWatch(ctx context.Context, c *client, ns string, res *watchResult, final *atomic.Int64) {
	s := res.spec
	rv := s.start
	first := true
	for {
		q := url.Values{"watch": {"1"}, "allowWatchBookmarks": {"true"}, "resourceVersion": {strconv.FormatInt(rv, 10)}}
		if s.selector != "" {
			q.Set("labelSelector", s.selector)
		}
		if first && s.streaming {
			q.Set("sendInitialEvents", "true")
			q.Set("resourceVersionMatch", "NotOlderThan")
		}
		inInitial := first && s.streaming
		first = false
		done, count := false, 0
		err := c.stream(ctx, "/api/v1/namespaces/"+ns+"/configmaps?"+q.Encode(), func(ev event) bool {
			if ev.Type == "ERROR" {
				res.err = fmt.Errorf("ERROR event: %d %s %s", ev.Object.Code, ev.Object.Reason, ev.Object.Message)
				return false
			}
			r := ev.Object.rv()
			if ev.Type == "BOOKMARK" {
				if inInitial && ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
					res.initEnd, res.initial, inInitial = r, len(res.events), false
				}
			} else {
				res.events = append(res.events, ev)
				count++
			}
			if !inInitial {
				rv = max(rv, r)
			}
			if f := final.Load(); f > 0 && rv >= f {
				done = true
				return false
			}
			return s.resume == 0 || count < s.resume
		})
		if res.err != nil || done {
			return
		}
		if err != nil && ctx.Err() == nil {
			res.err = err
			return
		}
		if ctx.Err() != nil {
			res.err = fmt.Errorf("did not reach the final revision %d (at %d) in time", final.Load(), rv)
			return
		}
		if inInitial {
			res.err = errors.New("stream ended inside the initial events")
			return
		}
		res.resumes++
	}
}

// checkReference checks the unfiltered watcher from the first revision
// against the acknowledgements and returns the history in revision order.
func checkReference(r *watchResult, hist map[string][]ack) ([]change, error) {
	if r.err != nil {
		return nil, fmt.Errorf("reference watcher: %w", r.err)
	}
	if err := increasing(r.events); err != nil {
		return nil, fmt.Errorf("reference watcher: %w", err)
	}
	seen := make(map[string]int)
	var full []change
	for _, ev := range r.events {
		name := ev.Object.Metadata.Name
		acks := hist[name]
		i := seen[name]
		if i >= len(acks) {
			return nil, fmt.Errorf("reference watcher: %s %s at %d was never acknowledged", ev.Type, name, ev.Object.rv())
		}
		a := acks[i]
		if ev.Type != a.typ || (a.rv != 0 && ev.Object.rv() != a.rv) {
			return nil, fmt.Errorf("reference watcher: write %d of %s: got %s at %d, acknowledged %s at %d", i, name, ev.Type, ev.Object.rv(), a.typ, a.rv)
		}
		seen[name]++
		full = append(full, change{typ: a.typ, name: name, parity: ev.Object.Metadata.Labels["parity"], rv: ev.Object.rv()})
	}
	for name, acks := range hist {
		if seen[name] != len(acks) {
			return nil, fmt.Errorf("reference watcher: %d of %d acknowledged writes of %s seen (a gap)", seen[name], len(acks), name)
		}
	}
	return full, nil
}

func increasing(evs []event) error {
	var last int64
	for i, ev := range evs {
		if ev.Object.rv() <= last {
			return fmt.Errorf("event %d (%s %s) at revision %d after %d: out of order or duplicated", i, ev.Type, ev.Object.Metadata.Name, ev.Object.rv(), last)
		}
		last = ev.Object.rv()
	}
	return nil
}

type state struct {
	live   bool
	parity string
	rv     int64
}

func selects(selector, parity string) bool { return selector == "" || selector == "parity="+parity }

// checkWatcher compares a watcher's events with the projection of the
// history onto its start revision and selector.
func checkWatcher(r *watchResult, full []change, final int64) error {
	s := r.spec
	evs := r.events
	start := s.start
	states := make(map[string]state)
	apply := func(upto int64) {
		for _, c := range full {
			if c.rv > upto {
				break
			}
			states[c.name] = state{live: c.typ != "DELETED", parity: c.parity, rv: c.rv}
		}
	}
	if s.streaming {
		if r.initEnd < start {
			return fmt.Errorf("initial events end at %d, before the requested %d", r.initEnd, start)
		}
		start = r.initEnd
		apply(start)
		var want, got []string
		for name, st := range states {
			if st.live && selects(s.selector, st.parity) {
				want = append(want, fmt.Sprintf("ADDED %s %d", name, st.rv))
			}
		}
		for _, ev := range evs[:r.initial] {
			got = append(got, fmt.Sprintf("%s %s %d", ev.Type, ev.Object.Metadata.Name, ev.Object.rv()))
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			return fmt.Errorf("initial events %v, want the state at %d: %v", got, start, want)
		}
		evs = evs[r.initial:]
	} else {
		apply(start)
	}
	if err := increasing(evs); err != nil {
		return err
	}
	var want []string
	for _, c := range full {
		if c.rv <= start || c.rv > final {
			continue
		}
		prev := states[c.name]
		was := prev.live && selects(s.selector, prev.parity)
		now := c.typ != "DELETED" && selects(s.selector, c.parity)
		typ := ""
		switch {
		case was && now:
			typ = "MODIFIED"
		case now:
			typ = "ADDED"
		case was:
			typ = "DELETED"
		}
		if typ != "" {
			want = append(want, fmt.Sprintf("%s %s %d", typ, c.name, c.rv))
		}
		states[c.name] = state{live: c.typ != "DELETED", parity: c.parity, rv: c.rv}
	}
	got := make([]string, 0, len(evs))
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%s %s %d", ev.Type, ev.Object.Metadata.Name, ev.Object.rv()))
	}
	for i := range max(len(want), len(got)) {
		w, g := "(nothing)", "(nothing)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return fmt.Errorf("event %d of %d: got %s, want %s", i, len(want), g, w)
		}
	}
	return nil
}
