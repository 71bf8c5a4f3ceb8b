package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// backend opens a fresh store of one kind for a test.
type backend struct {
	name string
	open func(t testing.TB, opts Options) *MVCCStore
}

var backends = []backend{
	{"memory", func(t testing.TB, opts Options) *MVCCStore {
		s := NewMemory(opts)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"bolt", func(t testing.TB, opts Options) *MVCCStore {
		return openBoltChecked(t, filepath.Join(t.TempDir(), "store.db"), opts)
	}},
	// A file that exists is loaded from bucket "heads" and checked in the
	// background: the first writes wait for the check.
	{"bolt reopened", func(t testing.TB, opts Options) *MVCCStore {
		path := filepath.Join(t.TempDir(), "store.db")
		s, err := OpenBolt(path, Options{})
		if err != nil {
			t.Fatalf("OpenBolt: %v", err)
		}
		s.Close()
		return openBoltChecked(t, path, opts)
	}},
}

// openBoltChecked opens a bbolt store and, when the test ends and the
// store is closed, checks the file whole: whatever the test did to it
// (compactions included), its records and bucket "heads" agree.
func openBoltChecked(t testing.TB, path string, opts Options) *MVCCStore {
	t.Helper()
	s, err := OpenBolt(path, opts)
	if err != nil {
		t.Fatalf("OpenBolt: %v", err)
	}
	t.Cleanup(func() {
		s, err := OpenBolt(path, Options{HistoryWindow: -1})
		if err == nil {
			err = s.WaitChecked(context.Background())
			s.Close()
		}
		if err != nil {
			t.Errorf("the file the test left fails its check: %v", err)
		}
	})
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// fakeClock is an injectable clock moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// model is the expected history: the state after every revision and the
// event each revision produced. It drives a store and checks each answer.
type model struct {
	t      testing.TB
	s      *MVCCStore
	states []map[string]KeyValue // states[r]: the keys at revision r
	events []Event               // events[r-1]: the change made at revision r
}

func newModel(t testing.TB, s *MVCCStore) *model {
	return &model{t: t, s: s, states: []map[string]KeyValue{{}}}
}

func (m *model) current() map[string]KeyValue { return m.states[len(m.states)-1] }

func (m *model) record(ev Event, kv *KeyValue) {
	m.t.Helper()
	if want := int64(len(m.states)); ev.Revision != want {
		m.t.Fatalf("%s %q got revision %d, want %d", ev.Type, ev.Key, ev.Revision, want)
	}
	next := maps.Clone(m.current())
	if kv == nil {
		delete(next, ev.Key)
	} else {
		next[ev.Key] = *kv
	}
	m.states = append(m.states, next)
	m.events = append(m.events, ev)
}

func (m *model) create(key, value string) int64 {
	m.t.Helper()
	rev, err := m.s.Create(context.Background(), key, []byte(value))
	if err != nil {
		m.t.Fatalf("Create(%q): %v", key, err)
	}
	m.record(Event{Type: EventPut, Key: key, Value: []byte(value), Revision: rev, IsCreate: true},
		&KeyValue{Key: key, Value: []byte(value), CreateRevision: rev, ModRevision: rev})
	return rev
}

func (m *model) update(key, value string) int64 {
	m.t.Helper()
	prev, ok := m.current()[key]
	if !ok {
		m.t.Fatalf("model: update of absent %q", key)
	}
	rev, err := m.s.Update(context.Background(), key, []byte(value), prev.ModRevision)
	if err != nil {
		m.t.Fatalf("Update(%q): %v", key, err)
	}
	m.record(Event{Type: EventPut, Key: key, Value: []byte(value), PrevValue: prev.Value, Revision: rev, PrevRevision: prev.ModRevision},
		&KeyValue{Key: key, Value: []byte(value), CreateRevision: prev.CreateRevision, ModRevision: rev})
	return rev
}

func (m *model) delete(key string) int64 {
	m.t.Helper()
	prev, ok := m.current()[key]
	if !ok {
		m.t.Fatalf("model: delete of absent %q", key)
	}
	got, rev, err := m.s.Delete(context.Background(), key, 0)
	if err != nil {
		m.t.Fatalf("Delete(%q): %v", key, err)
	}
	if !equalKV(got, prev) {
		m.t.Fatalf("Delete(%q) returned %+v, want %+v", key, got, prev)
	}
	m.record(Event{Type: EventDelete, Key: key, Value: prev.Value, Revision: rev, PrevRevision: prev.ModRevision}, nil)
	return rev
}

// randomOps applies n valid writes chosen by step over keys k0..k(nkeys-1).
func (m *model) randomOps(n, nkeys int, pick func(int) int) {
	for i := range n {
		key := fmt.Sprintf("k%02d", pick(nkeys))
		_, live := m.current()[key]
		switch {
		case !live:
			m.create(key, fmt.Sprintf("v%d", i))
		case pick(3) == 0:
			m.delete(key)
		default:
			m.update(key, fmt.Sprintf("v%d", i))
		}
	}
}

// wantList is the model's answer to a List of the whole prefix at rev.
func (m *model) wantList(prefix string, rev int64) []KeyValue {
	var out []KeyValue
	for _, k := range slices.Sorted(maps.Keys(m.states[rev])) {
		if len(k) >= len(prefix) && k[:len(prefix)] == prefix {
			out = append(out, m.states[rev][k])
		}
	}
	return out
}

// checkRevision compares every Get and a full List at rev with the model.
func (m *model) checkRevision(rev int64) {
	m.t.Helper()
	ctx := context.Background()
	res, err := m.s.List(ctx, ListOptions{Revision: rev})
	if err != nil {
		m.t.Fatalf("List at %d: %v", rev, err)
	}
	if want := m.wantList("", rev); !equalKVs(res.Items, want) {
		m.t.Fatalf("List at %d:\n got %v\nwant %v", rev, res.Items, want)
	}
	for _, k := range allKeys(m.states) {
		got, err := m.s.Get(ctx, k, rev)
		want, ok := m.states[rev][k]
		switch {
		case !ok && !errors.Is(err, ErrNotFound):
			m.t.Fatalf("Get(%q) at %d = %v, %v; want ErrNotFound", k, rev, got, err)
		case ok && (err != nil || !equalKV(got, want)):
			m.t.Fatalf("Get(%q) at %d = %v, %v; want %v", k, rev, got, err, want)
		}
	}
}

func allKeys(states []map[string]KeyValue) []string {
	set := map[string]bool{}
	for _, st := range states {
		for k := range st {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func equalKV(a, b KeyValue) bool {
	return a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

func equalKVs(a, b []KeyValue) bool {
	return slices.EqualFunc(a, b, equalKV)
}

func equalEvent(a, b Event) bool {
	return a.Type == b.Type && a.Key == b.Key && bytes.Equal(a.Value, b.Value) &&
		bytes.Equal(a.PrevValue, b.PrevValue) && a.Revision == b.Revision && a.PrevRevision == b.PrevRevision &&
		a.IsCreate == b.IsCreate
}

// collect reads events until one satisfies stop (returned last) or the
// channel closes; it fails the test after a generous deadline so a bug
// cannot hang the run.
func collect(t testing.TB, w Watcher, stop func(Event) bool) []Event {
	t.Helper()
	var out []Event
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		select {
		case ev, ok := <-eventsOf(t, w):
			if !ok {
				return out
			}
			out = append(out, ev)
			if stop(ev) {
				return out
			}
		case <-deadline.C:
			t.Fatalf("watch: no end after %d events", len(out))
		}
	}
}

// readers is how the tests read each watcher: alternately with Events and
// with Next (through a channel of the test's, so reads can time out), so
// that every watch test covers both.
var readers = struct {
	sync.Mutex
	of map[Watcher]<-chan Event
	n  int
}{of: map[Watcher]<-chan Event{}}

func eventsOf(t testing.TB, w Watcher) <-chan Event {
	readers.Lock()
	defer readers.Unlock()
	if ch, ok := readers.of[w]; ok {
		return ch
	}
	readers.n++
	return readWith(t, w, readers.n%2 == 0)
}

// readWith makes the tests read w with Next (next) or with Events; the
// caller holds readers.
func readWith(t testing.TB, w Watcher, next bool) <-chan Event {
	var ch <-chan Event
	if next {
		ch = nextEvents(t, w)
	} else {
		ch = w.Events()
	}
	readers.of[w] = ch
	t.Cleanup(func() {
		readers.Lock()
		delete(readers.of, w)
		readers.Unlock()
	})
	return ch
}

// readerNames are the two ways of reading a watcher, for the tests that try both.
var readerNames = []struct {
	name string
	next bool
}{{"Events", false}, {"Next", true}}

// readWithLocked makes the tests read w with Next (next) or with Events,
// and returns the channel they read.
func readWithLocked(t testing.TB, w Watcher, next bool) <-chan Event {
	readers.Lock()
	defer readers.Unlock()
	return readWith(t, w, next)
}

// memoryWatch opens a memory store with opts and a watch of all of it from
// now, under a context the test may cancel; both are closed when it ends.
func memoryWatch(t testing.TB, opts Options) (*MVCCStore, Watcher, context.Context, context.CancelFunc) {
	s := NewMemory(opts)
	t.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := s.Watch(ctx, "", 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, w, ctx, cancel
}

// registered reports whether w is still among the store's watchers.
func registered(s *MVCCStore, w Watcher) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.watchers[w.(*watcher)]
	return ok
}

// nextEvents reads w with Next and hands the events over on a channel,
// closed when Next reports the end; it stops when the test ends.
func nextEvents(t testing.TB, w Watcher) <-chan Event {
	ch := make(chan Event)
	quit := make(chan struct{})
	t.Cleanup(func() { close(quit) })
	go func() {
		defer close(ch)
		for {
			ev, ok := w.Next(nil)
			if !ok {
				return
			}
			select {
			case ch <- ev:
			case <-quit:
				return
			}
		}
	}()
	return ch
}

// untilProgress asks for progress and collects the events before it.
func untilProgress(t testing.TB, w Watcher, atLeast int64) []Event {
	t.Helper()
	w.RequestProgress()
	evs := collect(t, w, func(ev Event) bool { return ev.Type == EventProgress && ev.Revision >= atLeast })
	if len(evs) == 0 || evs[len(evs)-1].Type != EventProgress {
		t.Fatalf("watch ended before progress (err %v) after %d events", w.Err(), len(evs))
	}
	var out []Event
	for _, ev := range evs {
		if ev.Type != EventProgress {
			out = append(out, ev)
		}
	}
	return out
}

func eventsFor(events []Event, prefix string, after int64) []Event {
	var out []Event
	for _, ev := range events {
		if ev.Revision > after && len(ev.Key) >= len(prefix) && ev.Key[:len(prefix)] == prefix {
			out = append(out, ev)
		}
	}
	return out
}

func checkEvents(t testing.TB, what string, got, want []Event) {
	t.Helper()
	if !slices.EqualFunc(got, want, equalEvent) {
		t.Fatalf("%s:\n got %d events %v\nwant %d events %v", what, len(got), got, len(want), want)
	}
}
