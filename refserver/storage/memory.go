package storage

import (
	"context"
	"log"
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
	// HistoryMaxRevisions keeps the changes of at most this many revisions,
	// the current one included, so the states after each and the one before
	// the oldest stay readable (0 = unlimited).
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
	// AllowEmptyFile lets OpenBolt start a fresh store in an existing empty
	// (0-byte) file instead of refusing it with ErrEmptyFile.
	AllowEmptyFile bool
	// Logf reports what an open had to repair (nil = log.Printf).
	Logf func(format string, args ...any)
}

func (o Options) withDefaults() Options {
	if o.HistoryWindow == 0 {
		o.HistoryWindow = DefaultHistoryWindow
	}
	if o.Logf == nil {
		o.Logf = log.Printf
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

// logEntry is one revision of the revision log. With a persister its
// event carries no values: they are read from the file when a watcher
// replays the entry (the value written at the entry's revision, and the
// one before it at the event's PrevRevision).
type logEntry struct {
	ev        Event
	createRev int64
	at        int64 // write time, Unix nanoseconds
}

// persister makes writes and compactions durable before they are applied in
// memory, and holds the values. The bbolt backend implements it; the memory
// backend has none and keeps values in the index and the log.
type persister interface {
	// commit stores one write (when rec is non-nil), deletes the dropped
	// history revisions and records the compacted revision, atomically.
	commit(rec *logEntry, drops []int64, compacted int64) error
	// read runs fn in one read transaction; get returns a copy of the value
	// written at a revision, checked against its checksum (ErrCorrupt
	// naming key otherwise), or ErrCompacted when the record is gone.
	read(fn func(get valueGetter) error) error
	// writable waits until commit may be called (the file has been
	// checked) or ctx ends; an error means no write will ever succeed.
	writable(ctx context.Context) error
	close() error
}

// valueGetter reads the value key was given at revision rev.
type valueGetter func(key string, rev int64) ([]byte, error)

// MVCCStore is the in-memory MVCC engine behind both backends and implements
// Store. The bbolt backend is the same engine with a write-through file.
type MVCCStore struct {
	opts Options

	mu        sync.RWMutex
	index     keyIndex
	log       revLog // revisions compacted+1 .. rev, in order
	rev       int64
	compacted int64
	watchers  map[*watcher]struct{}
	revWait   chan struct{} // closed and cleared on the next write; nil when nobody waits
	closed    bool
	persist   persister
	migrate   bool // the file loaded was written by an earlier version (until prepareFile)

	stop chan struct{}  // closed by Close: background work ends
	bg   sync.WaitGroup // background work: the sweep, the file's check
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
		opts:     opts.withDefaults(),
		watchers: make(map[*watcher]struct{}),
		stop:     make(chan struct{}),
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
	close(s.stop)
	s.mu.Unlock()
	s.bg.Wait()
	if s.persist != nil {
		return s.persist.close()
	}
	return nil
}

// WaitChecked waits until the data file has been checked whole (at once
// for the memory backend and for a file OpenBolt created or checked before
// returning) or ctx ends. It returns nil when writes may proceed, and else
// the error every write returns: for a damaged file, an ErrDamaged error
// naming it, the file left unchanged.
func (s *MVCCStore) WaitChecked(ctx context.Context) error { return s.writable(ctx) }

// writable waits for the file's check before a write takes the store's
// lock, so that reads are served meanwhile.
func (s *MVCCStore) writable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.persist == nil {
		return nil
	}
	return s.persist.writable(ctx)
}

// reading runs fn with the file's value reader, or with nil for the memory
// backend, whose values are all in memory.
func (s *MVCCStore) reading(fn func(get valueGetter) error) error {
	if s.persist == nil {
		return fn(nil)
	}
	return s.persist.read(fn)
}

// valueAt is v's value, the version of key: read from the file, or, in
// the memory backend, v's own, without reading's closure (an allocation
// or three on every get and write).
func (s *MVCCStore) valueAt(key string, v version) ([]byte, error) {
	if s.persist == nil {
		return v.value, nil
	}
	var value []byte
	err := s.reading(func(get valueGetter) (err error) {
		value, err = valueOf(get, key, v)
		return err
	})
	return value, err
}

// valueOf returns a version's value: held in memory, or read with get.
func valueOf(get valueGetter, key string, v version) ([]byte, error) {
	if v.value != nil || get == nil {
		return v.value, nil
	}
	return get(key, v.modRev)
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return append([]byte(nil), b...)
}
