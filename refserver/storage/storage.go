// Package storage is the reference server's multi-version key-value store.
//
// It knows keys, revisions and bytes, nothing of HTTP or of kinds. Every write
// takes the next value of one global revision counter (as etcd does); past
// revisions stay readable until they are compacted away, and watchers receive
// every change after a revision in revision order.
//
// # Design of the implementation (MVCCStore)
//
// NewMemory and OpenBolt return the same engine; the bbolt backend adds a
// file that every write and compaction is committed to (fsync) before the
// call returns, and that holds the values: its index and log keep keys and
// revisions only, and every read of a value (get, list, update, delete,
// watch replay) takes it from the file through bbolt's mmap, checking its
// checksum, so the Go heap does not hold a second copy of the data and a
// value that fails its checksum is an ErrCorrupt on every read. Each
// record's header (key, revisions, kind, checksum) is also kept in a
// bucket of its own, "heads", written and compacted in the same
// transactions as the records. OpenBolt builds the index from it alone
// (a few pages, not the values' pages; record.go has the format): it
// reads the headers, checking their checksums and the history they make,
// sorts them by key, which gives each key's versions and the keys in
// index order, builds the treap in O(n), and returns a store that serves
// reads from the file opened read-only. The rest of the check of the
// whole file (every record against its header, bbolt's own check) then
// runs in the background, and every write and compaction waits for it:
// only a file that passes is reopened read-write, so a damaged file is
// refused unchanged, at open or by that check (WaitChecked, and every
// write, then return the same ErrDamaged error). A file written before
// "heads" existed is checked whole at open and given the bucket.
//
// Keys sit in one ordered index (a treap) holding each key's retained
// versions, oldest first; a read at revision R takes, per key, the last
// version at or below R, so deleted keys stay visible to older revisions
// and keys created later are absent. Sorted keys make a List page cost
// O(log n + page) instead of a scan of all keys. Each index node also counts
// the keys live now in its subtree, so ListResult.Remaining is O(log n) at
// the current revision and O(log n + writes since R) at an older one.
// Besides the index, a revision log holds one entry per revision after the
// compacted one, in fixed-size chunks that a write fills in place (never a
// copy of the log as it grows; revlog.go); watch replay reads it, and
// compaction walks only the dropped part of it, so compacting costs what it
// drops.
//
// Every write runs under the store's lock: it takes the next revision,
// updates index and log, and appends the event (with its values) to each
// matching watcher's queue. Watch registers its watcher and takes its
// replay snapshot (a span of the log after the start revision) under that
// same lock, so revisions up to registration come from the snapshot and all
// later ones from the queue: the replay-to-live handoff has no gap and no
// duplicate. Compaction only drops chunks, never overwrites an entry, so a
// replaying watcher of the memory backend keeps its snapshot even if
// compaction drops that history; one of the bbolt backend reads the
// snapshot's values from the file a batch at a time, and ends with
// ErrCompacted if compaction deleted them first (as etcd ends a watcher
// whose history was compacted before it caught up).
//
// Writers never block on a watcher: appending to a queue is a non-blocking
// step, taken only if the watcher's filter (an EventFilter its caller gave,
// run by the writer under the lock) keeps the event, so a watcher a write
// does not concern is not woken for it. The watcher's reader takes events
// from the queue: with Next, in its own goroutine (the registry's watches,
// which write each event to their client from there, and flush in Next's
// idle callback, once per burst), or through the unbuffered Events channel,
// which a goroutine of the watcher fills. A watcher holding more than
// Options.WatchBuffer undelivered events is ended with ErrWatcherTooSlow.
// RequestProgress queues a PROGRESS event behind the events already queued,
// so it arrives after every earlier change for that watcher.
//
// Value slices in results and events may be shared with the store and
// with other watchers: callers must treat them as read-only. Values passed
// in are copied.
package storage

import (
	"context"
	"errors"
)

// Errors returned by Store implementations. Callers test them with errors.Is.
var (
	// ErrKeyExists: Create of a key that is present.
	ErrKeyExists = errors.New("storage: key already exists")
	// ErrNotFound: the key is absent at the revision read.
	ErrNotFound = errors.New("storage: key not found")
	// ErrConflict: the key's ModRevision differs from the caller's precondition.
	ErrConflict = errors.New("storage: revision precondition failed")
	// ErrCompacted: the revision asked for is below the compacted revision
	// (a read), or a watch would need changes at or below it.
	ErrCompacted = errors.New("storage: revision has been compacted")
	// ErrFutureRevision: the revision asked for is above the current revision.
	ErrFutureRevision = errors.New("storage: revision is not yet reached")
	// ErrWatcherTooSlow: a watcher fell further behind than its buffer allows and was closed.
	ErrWatcherTooSlow = errors.New("storage: watcher fell too far behind")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("storage: store is closed")
	// ErrCorrupt: a stored value fails its checksum; the error names the key and revision.
	ErrCorrupt = errors.New("the stored data is damaged")
	// ErrDamaged: OpenBolt, or the check of the whole file that ends after
	// it (WaitChecked), refused a data file that fails its checks (left unchanged).
	ErrDamaged = errors.New("the data file is damaged")
	// ErrEmptyFile: OpenBolt found an empty (0-byte) data file and was not asked for a fresh store.
	ErrEmptyFile = errors.New("the data file is empty (0 bytes): the data it held is gone")
)

// KeyValue is one key as stored at some revision.
type KeyValue struct {
	Key            string
	Value          []byte
	CreateRevision int64 // revision of the write that created this incarnation of the key
	ModRevision    int64 // revision of the last write to the key
}

// EventType says what happened to a key.
type EventType string

const (
	EventPut    EventType = "PUT"
	EventDelete EventType = "DELETE"
	// EventProgress carries no key: every change up to Revision has been delivered.
	EventProgress EventType = "PROGRESS"
)

// EventFilter decides whether a watcher wants a live change. It runs for
// every write under the watcher's prefix, under the store's lock and before
// the write returns: it must be quick, must not block and must not call the
// store. A filter that cannot tell keeps the event.
type EventFilter func(Event) bool

// Event is one change, delivered to watchers in revision order.
type Event struct {
	Type      EventType
	Key       string
	Value     []byte // PUT: the new value. DELETE: the value the key had before deletion.
	PrevValue []byte // PUT of an existing key: the value before; nil on create and for DELETE.
	Revision  int64  // the write's revision (for PROGRESS: the revision reached)
	// PrevRevision is the revision of the key's value before the write
	// (PrevValue of an update, Value of a DELETE); 0 on create.
	PrevRevision int64
	IsCreate     bool // PUT that created the key
}

// ListOptions selects keys for List.
type ListOptions struct {
	Prefix   string // only keys with this prefix
	StartKey string // first key to consider (inclusive); "" means from Prefix
	Revision int64  // read at this revision; 0 means the current revision
	Limit    int64  // at most this many matching items; 0 means no limit
	// Filter, when set, decides which keys count as items; Limit counts only
	// keys it accepts, so a page is filled from further keys as needed.
	Filter func(KeyValue) bool
	// KeyFilter, when set, runs before a key's value is read: false skips
	// the key without reading its value, true leaves the decision to Filter.
	// It lets a caller that knows some keys' fate from key and ModRevision
	// alone (a cache of what their values hold) avoid reading those values.
	// It runs under the store's read lock and must not call back into the store.
	KeyFilter func(key string, modRevision int64) bool
	// Candidates, when set, is asked once the revision R of the read is
	// known, under the store's read lock (no write commits meanwhile), for
	// the only keys that can be items: sorted ascending, without duplicates,
	// a superset of the keys the filters would accept at R. The list then
	// visits those keys instead of every key under Prefix; ok false visits
	// every key as without it. Remaining and More still count every key
	// under Prefix, so a page reads the same either way. The hook lets a
	// caller keep a secondary index outside the store and still answer from
	// the same snapshot (asked before the read, it could miss a key written
	// between the question and the read). Like KeyFilter it must not call
	// back into the store.
	Candidates func(rev int64) (keys []string, ok bool)
	// SkipFileValues leaves Value nil where it would be read from the file
	// (the bbolt backend; ignored with a Filter, which needs values): a
	// caller that wants them one at a time reads each with Get at the
	// result's Revision instead of holding them all.
	SkipFileValues bool
}

// ListResult is a page of keys read at one revision.
type ListResult struct {
	Items    []KeyValue
	Revision int64 // the revision the page was read at
	More     bool  // further keys under Prefix exist after the last item
	// Remaining counts the keys under Prefix after the last item, before any
	// Filter; meaningful only when More is true.
	Remaining int64
}

// Store is a multi-version key-value store with one global revision counter.
type Store interface {
	// Create writes a new key; ErrKeyExists if present. Returns the new revision.
	Create(ctx context.Context, key string, value []byte) (int64, error)
	// Update replaces the value of an existing key. When expectModRevision is
	// non-zero the key's ModRevision must equal it (else ErrConflict).
	Update(ctx context.Context, key string, value []byte, expectModRevision int64) (int64, error)
	// Delete removes a key, with the same precondition rule as Update. It
	// returns the value deleted and the revision of the deletion.
	Delete(ctx context.Context, key string, expectModRevision int64) (KeyValue, int64, error)
	// Get reads one key at revision (0 = current).
	Get(ctx context.Context, key string, revision int64) (KeyValue, error)
	// List reads keys in key order at one revision.
	List(ctx context.Context, opts ListOptions) (ListResult, error)
	// Watch delivers every change to keys under prefix with a revision above
	// afterRevision (0 = changes after the current revision), then live
	// changes. ErrCompacted when afterRevision is below the compacted revision.
	// keep, when not nil, sees each live change before it is queued, and
	// false drops it for this watcher, which is then not woken for it
	// (history replayed from before the watch started is not filtered).
	Watch(ctx context.Context, prefix string, afterRevision int64, keep EventFilter) (Watcher, error)
	// CurrentRevision is the revision of the last write (0 for an empty store).
	CurrentRevision() int64
	// CompactedRevision is the revision history was compacted to (0 = none):
	// its state is the oldest still readable, and its changes and every
	// earlier one are gone, as etcd keeps its compact revision.
	CompactedRevision() int64
	// Compact drops the states before revision and the changes up to it;
	// the state at revision stays readable (each key keeps its version
	// there). Compacting at or beyond the current revision leaves the
	// current state alone.
	Compact(revision int64) error
	// WaitForRevision blocks until CurrentRevision() >= revision or ctx ends.
	WaitForRevision(ctx context.Context, revision int64) error
	Close() error
}

// Watcher is one live subscription.
type Watcher interface {
	// Next waits for the next event; false once the watch has ended, and Err
	// then says why (nil when stopped). idle, when not nil, runs each time
	// Next is about to wait because no event is ready: a reader that writes
	// events to a client flushes there, once per burst instead of once per
	// event. A watcher is read with Next or with Events, not both.
	Next(idle func()) (Event, bool)
	// Events is closed when the watch ends; Err then says why (nil when stopped).
	Events() <-chan Event
	// RequestProgress asks for an EventProgress once every change up to the
	// store's current revision has been delivered on Events.
	RequestProgress()
	Stop()
	Err() error
}
