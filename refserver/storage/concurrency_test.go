package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentWritersAndWatchers runs 4 writers and several watchers at
// once (bounded to 2 s or 5,000 writes) and checks that every acknowledged
// write is readable, that each watch stream equals the prefix's history
// after its start (ordered, gap-free, duplicate-free), and that resuming a
// watch from any revision it saw yields exactly the events that followed.
func TestConcurrentWritersAndWatchers(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			runConcurrency(t, b)
		})
	}
}

func runConcurrency(t *testing.T, b backend) {
	const (
		writers   = 4
		maxWrites = 5000
		maxTime   = 2 * time.Second
	)
	s := b.open(t, Options{HistoryWindow: -1, WatchBuffer: 2 * maxWrites})
	ctx := context.Background()

	type watchSpec struct {
		prefix     string
		w          Watcher
		after      int64
		got        []Event       // owned by the reader goroutine until done
		progressed chan struct{} // closed on progress at the final revision
		done       chan struct{}
	}
	var final atomic.Int64
	final.Store(1 << 62)
	startWatch := func(prefix string, after int64) *watchSpec {
		w, err := s.Watch(ctx, prefix, after, nil)
		if err != nil {
			t.Errorf("Watch(%q, %d): %v", prefix, after, err)
			return nil
		}
		ws := &watchSpec{prefix: prefix, w: w, after: after, progressed: make(chan struct{}), done: make(chan struct{})}
		go func() {
			defer close(ws.done)
			var once sync.Once
			for ev := range w.Events() {
				ws.got = append(ws.got, ev)
				if ev.Type == EventProgress && ev.Revision >= final.Load() {
					once.Do(func() { close(ws.progressed) })
				}
			}
		}()
		return ws
	}
	watches := []*watchSpec{startWatch("", 0), startWatch("a/", 0), startWatch("b/", 0)}

	var (
		count    atomic.Int64
		deadline = time.Now().Add(maxTime)
		logs     = make([][]Event, writers)
		wg       sync.WaitGroup
		writing  = make(chan struct{})
	)
	for i := range writers {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(id), 99))
			for n := 0; count.Add(1) <= maxWrites && time.Now().Before(deadline); n++ {
				key := fmt.Sprintf("%s/%d", []string{"a", "b", "c"}[rng.IntN(3)], rng.IntN(8))
				value := []byte(fmt.Sprintf("w%d-%d", id, n))
				var ev Event
				var err error
				switch rng.IntN(3) {
				case 0:
					ev.Revision, err = s.Create(ctx, key, value)
					ev.Type, ev.Value, ev.IsCreate = EventPut, value, true
				case 1:
					ev.Revision, err = s.Update(ctx, key, value, 0)
					ev.Type, ev.Value = EventPut, value
				default:
					var kv KeyValue
					kv, ev.Revision, err = s.Delete(ctx, key, 0)
					ev.Type, ev.Value = EventDelete, kv.Value
				}
				if errors.Is(err, ErrKeyExists) || errors.Is(err, ErrNotFound) {
					continue
				}
				if err != nil {
					t.Errorf("writer %d: %v", id, err)
					return
				}
				ev.Key = key
				logs[id] = append(logs[id], ev)
				// The write is visible to a later List at its revision and at
				// the current one.
				res, err := s.List(ctx, ListOptions{Prefix: key, Revision: ev.Revision})
				if err != nil {
					t.Errorf("List at %d: %v", ev.Revision, err)
					return
				}
				visible := len(res.Items) == 1 && res.Items[0].ModRevision == ev.Revision && bytes.Equal(res.Items[0].Value, value)
				if (ev.Type == EventPut) != visible || (ev.Type == EventDelete && len(res.Items) != 0) {
					t.Errorf("write %s %q at %d not visible: %v", ev.Type, key, ev.Revision, res.Items)
					return
				}
				if cur, err := s.List(ctx, ListOptions{Prefix: key, Limit: 1}); err != nil || cur.Revision < ev.Revision {
					t.Errorf("List after write %d read revision %d: %v", ev.Revision, cur.Revision, err)
					return
				}
			}
		}(i)
	}
	go func() { wg.Wait(); close(writing) }()

	// Start two watchers mid-stream, from a past revision, while writes run:
	// the replay-to-live handoff happens under concurrent writers.
	wctx, cancel := context.WithCancel(ctx)
	go func() { <-writing; cancel() }()
	_ = s.WaitForRevision(wctx, 200)
	mid := s.CurrentRevision()
	watches = append(watches, startWatch("", mid/2), startWatch("c/", mid/3))
	<-writing
	cancel()
	if t.Failed() {
		return
	}

	// The acknowledged writes, merged, are every revision exactly once.
	var history []Event
	for _, l := range logs {
		history = append(history, l...)
	}
	slices.SortFunc(history, func(a, b Event) int { return int(a.Revision - b.Revision) })
	final.Store(s.CurrentRevision())
	if int64(len(history)) != final.Load() {
		t.Fatalf("%d acknowledged writes, store at revision %d", len(history), final.Load())
	}
	state := map[string][]byte{}
	stateRev := map[string]int64{}
	for i := range history {
		ev := &history[i]
		if ev.Revision != int64(i+1) {
			t.Fatalf("revision %d acknowledged at position %d", ev.Revision, i+1)
		}
		if ev.Type == EventPut && !ev.IsCreate {
			ev.PrevValue = state[ev.Key]
		}
		if !ev.IsCreate {
			ev.PrevRevision = stateRev[ev.Key]
		}
		if ev.Type == EventDelete {
			delete(state, ev.Key)
			delete(stateRev, ev.Key)
		} else {
			state[ev.Key] = ev.Value
			stateRev[ev.Key] = ev.Revision
		}
	}
	t.Logf("%d writes, final revision %d", len(history), final.Load())

	for _, ws := range watches {
		ws.w.RequestProgress()
	}
	for _, ws := range watches {
		var evs []Event
		select {
		case <-ws.progressed:
		case <-ws.done:
			t.Fatalf("watch %q ended early: %v", ws.prefix, ws.w.Err())
		case <-time.After(30 * time.Second):
			t.Fatalf("watch %q: no progress event", ws.prefix)
		}
		ws.w.Stop()
		<-ws.done
		for _, ev := range ws.got {
			if ev.Type != EventProgress {
				evs = append(evs, ev)
			}
		}
		checkEvents(t, fmt.Sprintf("watch %q after %d", ws.prefix, ws.after), evs, eventsFor(history, ws.prefix, ws.after))
		if ws.w.Err() != nil {
			t.Fatalf("watch %q ended with %v", ws.prefix, ws.w.Err())
		}
	}

	// Resume each watch from revisions it saw.
	rng := rand.New(rand.NewPCG(42, 43))
	for _, ws := range watches {
		var seen []int64
		for _, ev := range ws.got {
			if ev.Type != EventProgress {
				seen = append(seen, ev.Revision)
			}
		}
		for range min(3, len(seen)) {
			from := seen[rng.IntN(len(seen))]
			w, err := s.Watch(ctx, ws.prefix, from, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkEvents(t, fmt.Sprintf("resume %q after %d", ws.prefix, from),
				untilProgress(t, w, final.Load()), eventsFor(history, ws.prefix, from))
			w.Stop()
		}
	}
}
