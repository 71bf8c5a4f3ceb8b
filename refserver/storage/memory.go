package storage

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Defaults for Options fields left zero.
const (
	DefaultHistoryWindow = 5 * time.Minute
	DefaultWatchBuffer   = 1000
)

// Options tune a Store. The zero value is usable.
type Options struct {
	// HistoryWindow keeps past revisions readable for this long after they
	// stopped being current (0 = DefaultHistoryWindow, negative = forever).
	HistoryWindow time.Duration
	// HistoryMaxRevisions keeps at most this many revisions readable,
	// the current one included (0 = unlimited).
	HistoryMaxRevisions int
	// Clock is the time source for the history window (nil = time.Now).
	// Tests inject one to expire history without sleeping.
	Clock func() time.Time
	// WatchBuffer is how many undelivered events a watcher may hold before it
	// is closed with ErrWatcherTooSlow (0 = DefaultWatchBuffer).
	WatchBuffer int
	// CompactInterval is how often a background sweep applies the history
	// window when no writes arrive (0 = HistoryWindow/10 within [1s, 1m],
	// negative = no background sweep; writes still compact).
	CompactInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.HistoryWindow == 0 {
		o.HistoryWindow = DefaultHistoryWindow
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.WatchBuffer <= 0 {
		o.WatchBuffer = DefaultWatchBuffer
	}
	if o.HistoryMaxRevisions < 0 {
		o.HistoryMaxRevisions = 0
	}
	if o.CompactInterval == 0 && o.HistoryWindow > 0 {
		o.CompactInterval = min(max(o.HistoryWindow/10, time.Second), time.Minute)
	}
	return o
}

// logEntry is one revision of the revision log.
type logEntry struct {
	ev        Event
	createRev int64
	at        int64 // write time, Unix nanoseconds
}

// persister makes writes and compactions durable before they are applied in
// memory. The bbolt backend implements it; the memory backend has none.
type persister interface {
	// commit stores one write (when rec is non-nil), deletes the dropped
	// history revisions and records the compacted revision, atomically.
	commit(rec *logEntry, drops []int64, compacted int64) error
	close() error
}

// MVCCStore is the in-memory MVCC engine behind both backends and implements
// Store. The bbolt backend is the same engine with a write-through file.
type MVCCStore struct {
	opts Options

	mu        sync.RWMutex
	index     keyIndex
	log       []logEntry // revisions compacted+1 .. rev, in order
	rev       int64
	compacted int64
	watchers  map[*watcher]struct{}
	revWait   chan struct{} // closed and cleared on the next write; nil when nobody waits
	closed    bool
	persist   persister

	stopSweep chan struct{}
	sweepDone sync.WaitGroup
}

var _ Store = (*MVCCStore)(nil)

// NewMemory returns an empty store that lives in memory only.
func NewMemory(opts Options) *MVCCStore {
	s := newStore(opts)
	s.startSweep()
	return s
}

func newStore(opts Options) *MVCCStore {
	return &MVCCStore{
		opts:      opts.withDefaults(),
		watchers:  make(map[*watcher]struct{}),
		stopSweep: make(chan struct{}),
	}
}

// Create writes a new key; ErrKeyExists if it is present.
func (s *MVCCStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	if n := s.index.get(key); n != nil && n.liveNow() {
		return 0, fmt.Errorf("create %q: %w", key, ErrKeyExists)
	}
	rev := s.rev + 1
	ev := Event{Type: EventPut, Key: key, Value: cloneBytes(value), Revision: rev, IsCreate: true}
	if err := s.commitLocked(ev, rev); err != nil {
		return 0, err
	}
	return rev, nil
}

// Update replaces the value of an existing key, checking expectModRevision
// when it is non-zero.
func (s *MVCCStore) Update(ctx context.Context, key string, value []byte, expectModRevision int64) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	cur, err := s.currentLocked("update", key, expectModRevision)
	if err != nil {
		return 0, err
	}
	rev := s.rev + 1
	ev := Event{Type: EventPut, Key: key, Value: cloneBytes(value), PrevValue: cur.value, Revision: rev}
	if err := s.commitLocked(ev, cur.createRev); err != nil {
		return 0, err
	}
	return rev, nil
}

// Delete removes a key, checking expectModRevision when it is non-zero, and
// returns the deleted key as it was.
func (s *MVCCStore) Delete(ctx context.Context, key string, expectModRevision int64) (KeyValue, int64, error) {
	if err := ctx.Err(); err != nil {
		return KeyValue{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return KeyValue{}, 0, ErrClosed
	}
	cur, err := s.currentLocked("delete", key, expectModRevision)
	if err != nil {
		return KeyValue{}, 0, err
	}
	rev := s.rev + 1
	ev := Event{Type: EventDelete, Key: key, Value: cur.value, Revision: rev}
	if err := s.commitLocked(ev, cur.createRev); err != nil {
		return KeyValue{}, 0, err
	}
	return KeyValue{Key: key, Value: cur.value, CreateRevision: cur.createRev, ModRevision: cur.modRev}, rev, nil
}

// currentLocked returns the live version of key, applying the precondition.
func (s *MVCCStore) currentLocked(op, key string, expectModRevision int64) (version, error) {
	n := s.index.get(key)
	if n == nil || !n.liveNow() {
		return version{}, fmt.Errorf("%s %q: %w", op, key, ErrNotFound)
	}
	cur := n.versions[len(n.versions)-1]
	if expectModRevision != 0 && cur.modRev != expectModRevision {
		return version{}, fmt.Errorf("%s %q: modRevision is %d, expected %d: %w",
			op, key, cur.modRev, expectModRevision, ErrConflict)
	}
	return cur, nil
}

// commitLocked makes one write durable (bbolt), applies it to the index and
// the log, compacts what the retention policy drops, and notifies watchers
// and revision waiters. Everything happens under s.mu, so watchers see writes
// in revision order.
func (s *MVCCStore) commitLocked(ev Event, createRev int64) error {
	now := s.opts.Clock()
	entry := logEntry{ev: ev, createRev: createRev, at: now.UnixNano()}
	plan := s.planCompactionLocked(s.retentionTargetLocked(now, ev.Revision))
	if s.persist != nil {
		if err := s.persist.commit(&entry, plan.drops, plan.target); err != nil {
			return fmt.Errorf("storage: persist revision %d: %w", ev.Revision, err)
		}
	}
	s.applyLocked(entry)
	s.applyCompactionLocked(plan)
	for w := range s.watchers {
		if strings.HasPrefix(ev.Key, w.prefix) {
			w.enqueue(ev)
		}
	}
	if s.revWait != nil {
		close(s.revWait)
		s.revWait = nil
	}
	return nil
}

// applyLocked adds a write to the key index and the revision log.
func (s *MVCCStore) applyLocked(e logEntry) {
	ev := e.ev
	n := s.index.insert(ev.Key)
	wasLive := n.liveNow()
	v := version{modRev: ev.Revision, createRev: e.createRev, value: ev.Value}
	if ev.Type == EventDelete {
		v = version{modRev: ev.Revision, createRev: e.createRev, deleted: true}
	}
	n.versions = append(n.versions, v)
	switch isLive := n.liveNow(); {
	case isLive && !wasLive:
		s.index.addLive(ev.Key, 1)
	case !isLive && wasLive:
		s.index.addLive(ev.Key, -1)
	}
	s.log = append(s.log, e)
	s.rev = ev.Revision
}

// Get reads one key at revision (0 = current).
func (s *MVCCStore) Get(ctx context.Context, key string, revision int64) (KeyValue, error) {
	if err := ctx.Err(); err != nil {
		return KeyValue{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return KeyValue{}, ErrClosed
	}
	rev, err := s.readRevisionLocked(revision)
	if err != nil {
		return KeyValue{}, err
	}
	n := s.index.get(key)
	if n == nil {
		return KeyValue{}, fmt.Errorf("get %q at %d: %w", key, rev, ErrNotFound)
	}
	v, ok := n.at(rev)
	if !ok {
		return KeyValue{}, fmt.Errorf("get %q at %d: %w", key, rev, ErrNotFound)
	}
	return KeyValue{Key: key, Value: v.value, CreateRevision: v.createRev, ModRevision: v.modRev}, nil
}

// readRevisionLocked resolves the revision a read asks for.
func (s *MVCCStore) readRevisionLocked(revision int64) (int64, error) {
	switch {
	case revision == 0:
		return s.rev, nil
	case revision < 0:
		return 0, fmt.Errorf("storage: invalid revision %d", revision)
	case revision > s.rev:
		return 0, fmt.Errorf("revision %d, current %d: %w", revision, s.rev, ErrFutureRevision)
	case revision <= s.compacted:
		return 0, fmt.Errorf("revision %d, compacted %d: %w", revision, s.compacted, ErrCompacted)
	}
	return revision, nil
}

// List reads keys in key order at one revision. Filter runs under the
// store's read lock and must not call back into the store.
func (s *MVCCStore) List(ctx context.Context, opts ListOptions) (ListResult, error) {
	if err := ctx.Err(); err != nil {
		return ListResult{}, err
	}
	if opts.Limit < 0 {
		return ListResult{}, fmt.Errorf("storage: invalid limit %d", opts.Limit)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ListResult{}, ErrClosed
	}
	rev, err := s.readRevisionLocked(opts.Revision)
	if err != nil {
		return ListResult{}, err
	}
	start := max(opts.StartKey, opts.Prefix)
	end, bounded := prefixEnd(opts.Prefix)
	res := ListResult{Revision: rev}
	if rev == s.rev && opts.Filter == nil {
		// The live counts give the page size exactly; allocate once.
		n := int64(s.index.liveTotal())
		if bounded {
			n = int64(s.index.liveBefore(end))
		}
		n -= int64(s.index.liveBefore(start))
		if opts.Limit > 0 {
			n = min(n, opts.Limit)
		}
		res.Items = make([]KeyValue, 0, max(n, 0))
	} else if opts.Limit > 0 {
		res.Items = make([]KeyValue, 0, min(opts.Limit, 1024))
	}
	var last string
	full := false
	s.index.ascend(start, func(n *treapNode) bool {
		if bounded && n.key >= end {
			return false
		}
		v, ok := n.at(rev)
		if !ok {
			return true
		}
		kv := KeyValue{Key: n.key, Value: v.value, CreateRevision: v.createRev, ModRevision: v.modRev}
		if opts.Filter != nil && !opts.Filter(kv) {
			return true
		}
		res.Items = append(res.Items, kv)
		if opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit {
			full, last = true, n.key
			return false
		}
		return true
	})
	if full {
		res.Remaining = s.remainingAfterLocked(last, end, bounded, rev)
		res.More = res.Remaining > 0
	}
	return res, nil
}

// remainingAfterLocked counts the keys in (last, end) that exist at rev. The
// index counts keys live now in O(log n); for an older rev the writes since
// rev correct that count, so the cost is O(log n + writes after rev).
func (s *MVCCStore) remainingAfterLocked(last, end string, bounded bool, rev int64) int64 {
	var count int
	if bounded {
		count = s.index.liveBefore(end)
	} else {
		count = s.index.liveTotal()
	}
	count -= s.index.liveBefore(last)
	if n := s.index.get(last); n != nil && n.liveNow() {
		count--
	}
	if rev < s.rev {
		seen := make(map[string]struct{})
		for _, e := range s.log[rev-s.compacted:] {
			k := e.ev.Key
			if k <= last || (bounded && k >= end) {
				continue
			}
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			n := s.index.get(k)
			if _, wasLive := n.at(rev); wasLive {
				count++
			}
			if n.liveNow() {
				count--
			}
		}
	}
	return int64(count)
}

// CurrentRevision is the revision of the last write (0 for an empty store).
func (s *MVCCStore) CurrentRevision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rev
}

// CompactedRevision is the highest revision no longer readable (0 = none).
func (s *MVCCStore) CompactedRevision() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.compacted
}

// WaitForRevision blocks until the store reaches revision or ctx ends.
func (s *MVCCStore) WaitForRevision(ctx context.Context, revision int64) error {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return ErrClosed
		}
		if s.rev >= revision {
			s.mu.Unlock()
			return nil
		}
		if s.revWait == nil {
			s.revWait = make(chan struct{})
		}
		wait := s.revWait
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close ends every watcher with ErrClosed, releases waiters and closes the
// backing file, if any. Later calls return ErrClosed.
func (s *MVCCStore) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	for w := range s.watchers {
		w.end(ErrClosed)
	}
	if s.revWait != nil {
		close(s.revWait)
		s.revWait = nil
	}
	close(s.stopSweep)
	s.mu.Unlock()
	s.sweepDone.Wait()
	if s.persist != nil {
		return s.persist.close()
	}
	return nil
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return append([]byte(nil), b...)
}
