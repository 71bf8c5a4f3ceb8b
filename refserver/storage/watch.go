package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// watcher is one subscription. Writers append events to its queue while
// holding the store lock (never blocking). The goroutine that reads the
// watcher takes them from there: the caller of Next in its own goroutine
// (one goroutine and one hand-off per event fewer than a channel between
// two), or, for Events, a goroutine that moves them to an unbuffered
// channel. Either replays the history snapshot taken at registration first.
type watcher struct {
	s      *MVCCStore
	ctx    context.Context
	prefix string
	keep   EventFilter // nil keeps every live event
	limit  int         // most undelivered live events before the watcher is too slow
	replay logSpan     // revisions after the start revision up to registration
	wake   chan struct{}
	done   chan struct{} // closed by Stop, by slowness, by Close and when ctx ends
	once   sync.Once
	// stopOnCtx releases the callback that finishes the watcher when its
	// context ends (a watcher nobody reads is unregistered all the same).
	stopOnCtx func() bool
	finished  sync.Once

	// Read side: used only by the goroutine taking events.
	mode      sync.Once  // the first of Next and Events picks how events are read
	out       chan Event // Events' channel; nil when read with Next
	batch     []Event    // taken from the queue, or read from history, not yet handed over
	taken     int        // batch[:taken] handed over
	replaying bool       // batch holds history (not counted in pending)

	mu      sync.Mutex
	queue   []Event
	pending int // queued plus taken-but-undelivered live events
	ended   bool
	err     error
}

// Watch delivers every change under prefix after afterRevision (0 = after
// the current revision), then live changes, in revision order. It returns
// ErrCompacted when afterRevision is below the compacted revision and
// ErrFutureRevision when it is above the current one (callers that want to
// watch from a revision not reached yet call WaitForRevision first).
func (s *MVCCStore) Watch(ctx context.Context, prefix string, afterRevision int64, keep EventFilter) (Watcher, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	after := afterRevision
	switch {
	case after == 0:
		after = s.rev
	case after < 0:
		return nil, fmt.Errorf("storage: invalid revision %d", after)
	case after > s.rev:
		return nil, fmt.Errorf("watch after %d, current %d: %w", after, s.rev, ErrFutureRevision)
	case after < s.compacted:
		return nil, fmt.Errorf("watch after %d, compacted %d: %w", after, s.compacted, ErrCompacted)
	}
	// The snapshot and the registration happen under the same lock that
	// every write holds while it notifies watchers: revisions up to s.rev
	// come from the snapshot, every later one from the queue, none twice.
	// The snapshot's entries are never overwritten (revLog), so the
	// reader can read them without the lock.
	from := after - s.compacted
	w := &watcher{
		s:      s,
		ctx:    ctx,
		prefix: prefix,
		keep:   keep,
		limit:  s.opts.WatchBuffer,
		replay: s.log.from(int(from)),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	s.watchers[w] = struct{}{}
	w.stopOnCtx = context.AfterFunc(ctx, w.finish)
	return w, nil
}

// enqueue hands one event to the watcher without ever blocking. The caller
// holds the store lock, which orders events. A watcher whose backlog is full
// is ended with ErrWatcherTooSlow instead.
func (w *watcher) enqueue(ev Event) {
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return
	}
	if w.pending >= w.limit {
		w.mu.Unlock()
		w.end(ErrWatcherTooSlow)
		return
	}
	w.queue = append(w.queue, ev)
	w.pending++
	w.mu.Unlock()
	w.signal()
}

// end stops the watcher for good; err is what Err reports (nil for Stop).
func (w *watcher) end(err error) {
	w.mu.Lock()
	if !w.ended {
		w.ended = true
		w.err = err
		w.queue = nil
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.done) })
	w.signal() // a reader waiting in take sees the end
}

// signal wakes the reader, if it waits, without blocking.
func (w *watcher) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take returns the next event to hand over, waiting for one: first the
// history snapshot, a batch at a time, then the live queue. live says the
// event was queued (and counts in pending until delivered). ok is false
// once the watch has ended: stopped, too slow, the store closed, its
// context done, or its history unreadable (Err says which). idle, when not
// nil, runs before each wait.
func (w *watcher) take(idle func()) (ev Event, live, ok bool) {
	for {
		if w.stopped() {
			return Event{}, false, false
		}
		if w.taken < len(w.batch) {
			ev = w.batch[w.taken]
			w.batch[w.taken] = Event{}
			w.taken++
			return ev, !w.replaying, true
		}
		if w.replay.len() > 0 {
			if err := w.readReplay(); err != nil {
				w.end(err) // never a gap: the watch ends, saying why
				return Event{}, false, false
			}
			continue
		}
		w.replaying = false
		w.mu.Lock()
		if w.ended {
			w.mu.Unlock()
			return Event{}, false, false
		}
		w.batch, w.queue, w.taken = w.queue, w.batch[:0], 0
		w.mu.Unlock()
		if len(w.batch) == 0 {
			if idle != nil {
				// A wake left by events taken since would have idle run
				// for nothing: take it, and look again first.
				select {
				case <-w.wake:
					continue
				default:
				}
				idle()
			}
			// Every end signals wake (the context's too, through finish),
			// so a plain receive, cheaper than a select, is enough.
			<-w.wake
		}
	}
}

// stopped reports, without blocking, whether the watch has ended.
func (w *watcher) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
	}
	select {
	case <-w.ctx.Done():
		return true
	default:
		return false
	}
}

// delivered counts a live event as handed over.
func (w *watcher) delivered() {
	w.mu.Lock()
	w.pending--
	w.mu.Unlock()
}

// replayBatch bounds the events whose values are read from the file in one
// read transaction: the transaction ends before they are sent, so a slow
// client never holds one open.
const replayBatch = 64

// readReplay moves the next events of the history snapshot taken at
// registration into batch. With a persister the log holds no values: they
// are read from the file, and a revision compacted away before this
// watcher read it ends the watch with ErrCompacted, as etcd ends a watcher
// whose history was compacted before it caught up. A value that fails its
// checksum ends it with ErrCorrupt.
func (w *watcher) readReplay() error {
	batch := w.batch[:0]
	i := 0
	for ; i < w.replay.len() && len(batch) < replayBatch; i++ {
		if e := w.replay.at(i); strings.HasPrefix(e.ev.Key, w.prefix) {
			batch = append(batch, e.ev)
		}
	}
	if w.replay = w.replay.from(i); w.replay.len() == 0 {
		w.replay = logSpan{} // the chunks can go
	}
	w.batch, w.taken, w.replaying = batch, 0, true
	if w.s.persist == nil || len(batch) == 0 {
		return nil
	}
	return w.s.persist.read(func(get valueGetter) error {
		for i := range batch {
			if err := fillValues(get, &batch[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// fillValues reads the values of a replayed event from the file: the value
// written (PUT) and the one before it (PrevValue of an update, Value of a
// deletion).
func fillValues(get valueGetter, ev *Event) error {
	var err error
	switch {
	case ev.Type == EventDelete:
		ev.Value, err = get(ev.Key, ev.PrevRevision)
	case ev.IsCreate:
		ev.Value, err = get(ev.Key, ev.Revision)
	default:
		if ev.Value, err = get(ev.Key, ev.Revision); err == nil {
			ev.PrevValue, err = get(ev.Key, ev.PrevRevision)
		}
	}
	return err
}

func (w *watcher) send(ev Event) bool {
	select {
	case w.out <- ev:
		return true
	case <-w.done:
		return false
	case <-w.ctx.Done():
		return false
	}
}

// finish ends the watcher (Err stays as it was) and unregisters it. It runs
// when the reader sees the end, on Stop, and when the context ends.
func (w *watcher) finish() {
	w.finished.Do(func() {
		w.end(nil)
		// Under the store lock: Watch sets stopOnCtx while holding it, and
		// the context may end (and call finish) before it does.
		w.s.mu.Lock()
		delete(w.s.watchers, w)
		stop := w.stopOnCtx
		w.s.mu.Unlock()
		stop()
	})
}

// Next waits for the next event and returns it, in the caller's goroutine;
// false once the watch has ended (Err then says why). A watcher is read
// with Next or with Events, not both, by one goroutine at a time.
func (w *watcher) Next(idle func()) (Event, bool) {
	w.mode.Do(func() {})
	if w.out != nil {
		panic("storage: Next on a watcher read with Events")
	}
	ev, live, ok := w.take(idle)
	if !ok {
		w.finish()
		return Event{}, false
	}
	if live {
		w.delivered()
	}
	return ev, true
}

// Events is closed when the watch ends; Err then says why. Its first call
// starts the goroutine that moves the events to the channel.
func (w *watcher) Events() <-chan Event {
	w.mode.Do(func() {
		w.out = make(chan Event)
		go w.pump()
	})
	if w.out == nil {
		panic("storage: Events on a watcher read with Next")
	}
	return w.out
}

func (w *watcher) pump() {
	defer close(w.out) // after finish: Err is final
	defer w.finish()
	for {
		ev, live, ok := w.take(nil)
		if !ok || !w.send(ev) {
			return
		}
		if live {
			w.delivered()
		}
	}
}

// RequestProgress queues an EventProgress at the store's current revision
// behind every change already queued for this watcher.
func (w *watcher) RequestProgress() {
	w.s.mu.RLock()
	defer w.s.mu.RUnlock()
	w.enqueue(Event{Type: EventProgress, Revision: w.s.rev})
}

// Stop ends the watch; Err stays nil unless it had already failed.
func (w *watcher) Stop() { w.finish() }

// Err is nil while the watch runs and after Stop or context cancellation;
// ErrWatcherTooSlow or ErrClosed when the store ended it, ErrCorrupt when
// its history holds a value that fails its checksum, ErrCompacted when the
// bbolt backend compacted history it had yet to replay.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
