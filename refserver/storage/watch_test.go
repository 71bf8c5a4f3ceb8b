package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestWatchReplayThenLive(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			s := b.open(t, Options{HistoryWindow: -1})
			m := newModel(t, s)
			m.randomOps(30, 6, rng.IntN)
			cases := []struct {
				name   string
				prefix string
				after  int64
				from   int64 // expected first revision - 1
			}{
				{"all from now (0)", "", 0, 30},
				{"all from first", "", 1, 1},
				{"all from 10", "", 10, 10},
				{"one key from 5", "k01", 5, 5},
				{"from current", "", 30, 30},
				{"no match", "zzz", 3, 3},
			}
			var watchers []Watcher
			for _, c := range cases {
				w, err := s.Watch(context.Background(), c.prefix, c.after, nil)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				defer w.Stop()
				watchers = append(watchers, w)
			}
			m.randomOps(20, 6, rng.IntN) // live events after registration
			for i, c := range cases {
				got := untilProgress(t, watchers[i], 50)
				checkEvents(t, c.name, got, eventsFor(m.events, c.prefix, c.from))
			}
		})
	}
}

// TestWatchFilter: a watcher's filter drops the live events it refuses,
// sees them with their previous revision, and never touches history
// replayed from before the watch started or a progress notification.
func TestWatchFilter(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, 12))
			s := b.open(t, Options{HistoryWindow: -1})
			m := newModel(t, s)
			m.randomOps(30, 6, rng.IntN)
			keep := func(ev Event) bool { return ev.Key == "k01" || ev.Key == "k02" }
			var seen []Event
			w, err := s.Watch(context.Background(), "", 10, func(ev Event) bool {
				seen = append(seen, ev) // under the store's lock: the writes below are sequential
				return keep(ev)
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			m.randomOps(40, 6, rng.IntN)
			got := untilProgress(t, w, 70)
			want := eventsFor(m.events[:30], "", 10) // history: all of it
			for _, ev := range m.events[30:] {
				if keep(ev) {
					want = append(want, ev)
				}
			}
			if len(want) == len(eventsFor(m.events, "", 10)) {
				t.Fatal("the live writes are all kept: the fixture cannot tell a filter that is ignored")
			}
			checkEvents(t, "filtered watch", got, want)
			checkEvents(t, "events the filter saw", seen, m.events[30:])
		})
	}
}

// TestWatchNextIdle: Next runs idle only when it is about to wait, never
// while history or queued events are ready.
func TestWatchNextIdle(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	m := newModel(t, s)
	for i := range 3 {
		m.create(fmt.Sprintf("h%d", i), "1")
	}
	w, err := s.Watch(context.Background(), "", 1, nil) // two events of history
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	m.create("live0", "1")
	m.create("live1", "1")
	idles := 0
	idle := func() { idles++ }
	for i := range 4 { // two replayed, two queued
		if _, ok := w.Next(idle); !ok {
			t.Fatalf("event %d: the watch ended: %v", i, w.Err())
		}
	}
	if idles != 0 {
		t.Fatalf("idle ran %d times while events were ready", idles)
	}
	got := make(chan Event)
	waiting := make(chan struct{})
	go func() {
		ev, _ := w.Next(func() { idles++; close(waiting) })
		got <- ev
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("Next waits without running idle first")
	}
	m.create("live2", "1")
	if ev := <-got; ev.Key != "live2" || idles != 1 {
		t.Fatalf("got %q after %d idle runs, want live2 after 1", ev.Key, idles)
	}
}

func TestWatchAfterZeroMeansCurrent(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	m := newModel(t, s)
	m.create("a", "1")
	w, err := s.Watch(context.Background(), "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	m.update("a", "2")
	checkEvents(t, "watch from now", untilProgress(t, w, 2), m.events[1:])
}

func TestWatchRevisionErrors(t *testing.T) {
	s := NewMemory(Options{HistoryWindow: -1})
	defer s.Close()
	m := newModel(t, s)
	for i := range 10 {
		m.create(fmt.Sprint(i), "v")
	}
	if err := s.Compact(4); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		after int64
		err   error
	}{
		{3, ErrCompacted},
		{4, nil}, // every event after the compacted revision still exists
		{9, nil},
		{10, nil},
		{11, ErrFutureRevision},
	}
	for _, c := range cases {
		w, err := s.Watch(context.Background(), "", c.after, nil)
		if !errors.Is(err, c.err) {
			t.Fatalf("Watch after %d: %v, want %v", c.after, err, c.err)
		}
		if err == nil {
			checkEvents(t, fmt.Sprintf("after %d", c.after), untilProgress(t, w, 10), m.events[c.after:])
			w.Stop()
		}
	}
}

// TestWatchReplaySurvivesCompaction: a watcher replaying history keeps its
// snapshot even when compaction removes that history meanwhile.
func TestWatchReplaySurvivesCompaction(t *testing.T) {
	s := NewMemory(Options{HistoryWindow: -1})
	defer s.Close()
	m := newModel(t, s)
	for i := range 20 {
		m.create(fmt.Sprint(i), "v")
	}
	w, err := s.Watch(context.Background(), "", 0+2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Compact(20); err != nil {
		t.Fatal(err)
	}
	m.create("late", "v")
	checkEvents(t, "replay after compaction", untilProgress(t, w, 21), m.events[2:])
}

// TestBoltReplayCompacted: the bbolt backend reads replayed values from the
// file, so a watcher whose history is compacted before it has read it ends
// with ErrCompacted (as etcd's does) after a gap-free prefix of it, while
// history it still can read is replayed whole.
func TestBoltReplayCompacted(t *testing.T) {
	for _, r := range readerNames {
		t.Run(r.name, func(t *testing.T) {
			s := backends[1].open(t, Options{HistoryWindow: -1})
			m := newModel(t, s)
			m.create("k", "v0")
			for i := range 3 * replayBatch {
				m.update("k", fmt.Sprint("v", i+1))
			}
			whole, err := s.Watch(context.Background(), "", 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer whole.Stop()
			checkEvents(t, "replay before compaction", untilProgress(t, whole, s.CurrentRevision()), m.events[1:])

			w, err := s.Watch(context.Background(), "", 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			first := <-readWithLocked(t, w, r.next) // the first batch's values are read by now
			if err := s.Compact(s.CurrentRevision()); err != nil {
				t.Fatal(err)
			}
			got := append([]Event{first}, collect(t, w, func(Event) bool { return false })...)
			if !errors.Is(w.Err(), ErrCompacted) {
				t.Fatalf("watch ended with %v, want ErrCompacted", w.Err())
			}
			if len(got) >= len(m.events)-1 {
				t.Fatalf("%d events replayed although their history was compacted", len(got))
			}
			checkEvents(t, "replay cut by compaction", got, m.events[1:1+len(got)])
		})
	}
}

func TestSlowWatcherIsClosedWithoutBlockingWriters(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.open(t, Options{WatchBuffer: 5})
			slow, err := s.Watch(context.Background(), "", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			fast, err := s.Watch(context.Background(), "", 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer fast.Stop()
			m := newModel(t, s)
			// The fast watcher is drained after every batch of four writes,
			// within its buffer; the slow one is never read. A design where
			// writers wait for watchers would hang here.
			var fastGot []Event
			for i := range 40 {
				m.create(fmt.Sprint(i), "v")
				if rev := int64(i + 1); rev%4 == 0 {
					fastGot = append(fastGot, collect(t, fast, func(ev Event) bool { return ev.Revision == rev })...)
				}
			}
			checkEvents(t, "fast watcher", fastGot, m.events)
			if fast.Err() != nil {
				t.Fatalf("fast watcher: %v", fast.Err())
			}
			// The slow watcher's channel closes (possibly after a few events).
			evs := collect(t, slow, func(Event) bool { return false })
			if !errors.Is(slow.Err(), ErrWatcherTooSlow) {
				t.Fatalf("slow watcher Err = %v after %d events", slow.Err(), len(evs))
			}
			checkEvents(t, "slow watcher's delivered prefix", evs, m.events[:len(evs)])
		})
	}
}

func TestWatchEnding(t *testing.T) {
	cases := []struct {
		name    string
		end     func(s *MVCCStore, w Watcher, cancel context.CancelFunc)
		wantErr error
	}{
		{"stop", func(_ *MVCCStore, w Watcher, _ context.CancelFunc) { w.Stop() }, nil},
		{"context cancelled", func(_ *MVCCStore, _ Watcher, cancel context.CancelFunc) { cancel() }, nil},
		{"store closed", func(s *MVCCStore, _ Watcher, _ context.CancelFunc) { s.Close() }, ErrClosed},
		{"too slow", func(s *MVCCStore, _ Watcher, _ context.CancelFunc) {
			for i := range 3 { // the buffer holds 2
				s.Create(context.Background(), fmt.Sprint("b", i), nil)
			}
		}, ErrWatcherTooSlow},
	}
	for _, r := range readerNames {
		for _, c := range cases {
			t.Run(r.name+"/"+c.name, func(t *testing.T) {
				s, w, ctx, cancel := memoryWatch(t, Options{WatchBuffer: 2})
				readWithLocked(t, w, r.next)
				s.Create(ctx, "a", nil)
				c.end(s, w, cancel)
				collect(t, w, func(Event) bool { return false }) // returns once closed
				if !errors.Is(w.Err(), c.wantErr) || (c.wantErr == nil && w.Err() != nil) {
					t.Fatalf("Err = %v, want %v", w.Err(), c.wantErr)
				}
				if registered(s, w) {
					t.Fatal("the ended watcher is still registered: writes would keep queueing for it")
				}
				w.Stop() // a second end is harmless
			})
		}
	}
}

// A watcher nobody reads or stops is unregistered when its context ends.
func TestWatchNeverReadEndsWithContext(t *testing.T) {
	s, w, _, cancel := memoryWatch(t, Options{})
	s.Create(context.Background(), "a", nil)
	if !registered(s, w) {
		t.Fatal("a live watcher is not registered")
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for registered(s, w) {
		if time.Now().After(deadline) {
			t.Fatal("the watcher was still registered 10 s after its context ended")
		}
		time.Sleep(time.Millisecond)
	}
	if ev, ok := w.Next(nil); ok {
		t.Fatalf("Next after the context ended = %v, want the end", ev)
	}
}

// A watcher is read one way: Next after Events, or Events after Next, is
// a programming error, not a second reader racing the first.
func TestWatchReadOneWay(t *testing.T) {
	for _, first := range readerNames {
		t.Run(first.name+" first", func(t *testing.T) {
			s, w, ctx, _ := memoryWatch(t, Options{})
			defer w.Stop()
			s.Create(ctx, "a", nil)
			if first.next {
				if ev, ok := w.Next(nil); !ok || ev.Key != "a" {
					t.Fatalf("Next = %v, %v", ev, ok)
				}
			} else if ev := <-w.Events(); ev.Key != "a" {
				t.Fatalf("Events gave %v", ev)
			}
			defer func() {
				if recover() == nil {
					t.Fatal("reading the other way did not panic")
				}
			}()
			if first.next {
				w.Events()
			} else {
				w.Next(nil)
			}
		})
	}
}

func TestProgressEvents(t *testing.T) {
	s := NewMemory(Options{})
	defer s.Close()
	m := newModel(t, s)
	a, err := s.Watch(context.Background(), "a/", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Stop()
	m.create("a/1", "v")
	m.create("b/1", "v")
	m.create("b/2", "v")
	a.RequestProgress()
	m.create("a/2", "v")
	a.RequestProgress()
	got := collect(t, a, func(ev Event) bool { return ev.Type == EventProgress && ev.Revision == 4 })
	want := []Event{
		m.events[0],
		{Type: EventProgress, Revision: 3}, // b/ writes move the revision, not the stream
		m.events[3],
		{Type: EventProgress, Revision: 4},
	}
	checkEvents(t, "progress", got, want)
}
