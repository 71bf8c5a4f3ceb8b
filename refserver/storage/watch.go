package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
)

// watcher is one subscription. Writers append events to its queue while
// holding the store lock (never blocking); its own goroutine (run) first
// replays the history snapshot taken at registration, then moves queued
// events to the unbuffered out channel.
type watcher struct {
	s      *MVCCStore
	ctx    context.Context
	prefix string
	limit  int // most undelivered live events before the watcher is too slow
	out    chan Event
	replay []logEntry // revisions after the start revision up to registration
	wake   chan struct{}
	done   chan struct{} // closed by Stop, by slowness and by Close
	once   sync.Once

	mu      sync.Mutex
	queue   []Event
	pending int // queued plus taken-but-unsent events
	ended   bool
	err     error
}

// Watch delivers every change under prefix after afterRevision (0 = after
// the current revision), then live changes, in revision order. It returns
// ErrCompacted when afterRevision is below the compacted revision and
// ErrFutureRevision when it is above the current one (callers that want to
// watch from a revision not reached yet call WaitForRevision first).
func (s *MVCCStore) Watch(ctx context.Context, prefix string, afterRevision int64) (Watcher, error) {
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
	// The snapshot's entries are never overwritten (compaction only
	// reslices the log), so run can read them without the lock.
	from := after - s.compacted
	w := &watcher{
		s:      s,
		ctx:    ctx,
		prefix: prefix,
		limit:  s.opts.WatchBuffer,
		out:    make(chan Event),
		replay: s.log[from:len(s.log):len(s.log)],
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	s.watchers[w] = struct{}{}
	go w.run()
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
	select {
	case w.wake <- struct{}{}:
	default:
	}
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
}

func (w *watcher) run() {
	defer w.finish()
	if err := w.replayHistory(); err != nil {
		w.end(err) // never a gap: the watch ends, saying why
		return
	}
	w.replay = nil
	var batch []Event
	for {
		w.mu.Lock()
		if w.ended {
			w.mu.Unlock()
			return
		}
		batch, w.queue = w.queue, batch[:0]
		w.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-w.wake:
			case <-w.done:
				return
			case <-w.ctx.Done():
				return
			}
			continue
		}
		for i := range batch {
			if !w.send(batch[i]) {
				return
			}
			w.mu.Lock()
			w.pending--
			w.mu.Unlock()
		}
		clear(batch)
	}
}

// replayBatch bounds the events whose values are read from the file in one
// read transaction: the transaction ends before they are sent, so a slow
// client never holds one open.
const replayBatch = 64

// replayHistory sends the history snapshot taken at registration. With a
// persister the log holds no values: they are read from the file, and a
// revision compacted away before this watcher read it ends the watch with
// ErrCompacted, as etcd ends a watcher whose history was compacted before
// it caught up. A value that fails its checksum ends it with ErrCorrupt.
// It returns nil when done, or when the watch was stopped meanwhile.
func (w *watcher) replayHistory() error {
	batch := make([]Event, 0, replayBatch)
	for len(w.replay) > 0 {
		batch = batch[:0]
		var entries []logEntry
		for len(w.replay) > 0 && len(batch) < replayBatch {
			if e := w.replay[0]; strings.HasPrefix(e.ev.Key, w.prefix) {
				batch = append(batch, e.ev)
				entries = append(entries, e)
			}
			w.replay = w.replay[1:]
		}
		if w.s.persist != nil && len(batch) > 0 {
			err := w.s.persist.read(func(get valueGetter) error {
				for i, e := range entries {
					if err := fillValues(get, &batch[i], e); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		for i := range batch {
			if !w.send(batch[i]) {
				return nil
			}
			batch[i] = Event{}
		}
	}
	return nil
}

// fillValues reads the values of a replayed event from the file: the value
// written (PUT) and the one before it (PrevValue of an update, Value of a
// deletion).
func fillValues(get valueGetter, ev *Event, e logEntry) error {
	var err error
	switch {
	case ev.Type == EventDelete:
		ev.Value, err = get(ev.Key, e.prevRev)
	case ev.IsCreate:
		ev.Value, err = get(ev.Key, ev.Revision)
	default:
		if ev.Value, err = get(ev.Key, ev.Revision); err == nil {
			ev.PrevValue, err = get(ev.Key, e.prevRev)
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

// finish unregisters the watcher and closes its channel after Err is final.
func (w *watcher) finish() {
	w.mu.Lock()
	w.ended = true
	w.queue = nil
	w.mu.Unlock()
	w.s.mu.Lock()
	delete(w.s.watchers, w)
	w.s.mu.Unlock()
	close(w.out)
}

// Events is closed when the watch ends; Err then says why.
func (w *watcher) Events() <-chan Event { return w.out }

// RequestProgress queues an EventProgress at the store's current revision
// behind every change already queued for this watcher.
func (w *watcher) RequestProgress() {
	w.s.mu.RLock()
	defer w.s.mu.RUnlock()
	w.enqueue(Event{Type: EventProgress, Revision: w.s.rev})
}

// Stop ends the watch; Err stays nil unless it had already failed.
func (w *watcher) Stop() { w.end(nil) }

// Err is nil while the watch runs and after Stop or context cancellation;
// ErrWatcherTooSlow or ErrClosed when the store ended it, ErrCorrupt when
// its history holds a value that fails its checksum, ErrCompacted when the
// bbolt backend compacted history it had yet to replay.
func (w *watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
