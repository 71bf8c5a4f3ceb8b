package registry

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/rvplan"
	"github.com/apiconform/apiconform/refserver/storage"
)

// Event types on the wire.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Bookmark = "BOOKMARK"
	Error    = "ERROR"
)

// WatchEvent is one event of a watch stream.
type WatchEvent struct {
	Type   string
	Object Object
	// Revision is the revision the event brings the watcher to.
	Revision int64
	// InitialEventsEnd marks the bookmark that ends the initial events.
	InitialEventsEnd bool
	// cached is the event cache's entry Object came from, which keeps its
	// renderings (EncodedEvent); nil for an object decoded for this watch
	// alone.
	cached *eventEntry
}

// Watch is a started watch. Its events are delivered either by Run, in the
// caller's goroutine (the HTTP layer), which also takes them from the store
// (storage.Watcher.Next), so no goroutine hand-off lies between a write and
// the client's stream; or on the Events channel, which a goroutine of its
// own fills. One or the other, once.
type Watch struct {
	ctx     context.Context
	watcher storage.Watcher
	cancel  context.CancelFunc
	pump    func(send func(WatchEvent) bool, idle func()) // delivers until the watch ends or send refuses
	once    sync.Once                                     // pump runs once: Run, Events or Stop
	events  chan WatchEvent
	done    chan struct{} // closed when pump has returned
	err     error
	start   int64
}

// StartRevision is the revision the watch started from.
func (w *Watch) StartRevision() int64 { return w.start }

// Run hands every event to send, in the caller's goroutine, until the watch
// ends (its context, the store, an error event) or send returns false. idle,
// when not nil, runs whenever Run is about to wait for a change, every event
// ready so far having been sent: where the HTTP layer flushes, once per burst
// of events (kube-apiserver flushes when its queue is empty too). It returns
// at once if the events were already taken (Events, Run or Stop).
func (w *Watch) Run(send func(WatchEvent) bool, idle func()) {
	w.once.Do(func() { w.pump(send, idle) })
}

// Events delivers the events on a channel, closed when the watch ends.
func (w *Watch) Events() <-chan WatchEvent {
	w.once.Do(func() {
		w.events = make(chan WatchEvent)
		go func() {
			defer close(w.events)
			w.pump(func(ev WatchEvent) bool {
				select {
				case w.events <- ev:
					return true
				case <-w.ctx.Done():
					return false
				}
			}, nil)
		}()
	})
	return w.events
}

// RequestBookmark asks for a BOOKMARK once every change so far has been delivered.
func (w *Watch) RequestBookmark() { w.watcher.RequestProgress() }

// Stop ends the watch and waits for its delivery to end. A watch whose
// events were never taken releases what it holds here.
func (w *Watch) Stop() {
	w.cancel()
	w.once.Do(func() { w.pump(func(WatchEvent) bool { return false }, nil) })
	<-w.done
}

// Err says why the watch ended (nil when stopped or the context ended).
func (w *Watch) Err() error { return w.err }

// ErrTooSlow is returned by Watch.Err when the watcher fell behind.
var ErrTooSlow = storage.ErrWatcherTooSlow

// Watch starts a watch per the plan. A watch from a compacted revision
// returns a 410 Expired StatusError which the HTTP layer sends as an ERROR event.
//
// The initial state (the synthetic ADDED events) is a list of the store
// shared by every watch that starts at the same revision of the same
// collection (sharedSnapshot), decoded by the watch's goroutine one object
// at a time as it is sent: a selector is tried on the object's metadata
// before the object is decoded, each decode waits for one of a few
// process-wide decoding slots, and all of it stops as soon as ctx ends.
// Many watches of a large collection that their clients abandon therefore
// cost little and leave nothing running, and once such a burst is over the
// memory it used goes back to the OS (memoryRelease). Once the initial
// state is handed over, the context's WithInitDone callback runs (the
// in-flight limit's watch slot).
func (r *Registry) Watch(ctx context.Context, k *Kind, version, ns string, plan rvplan.Plan, sel Selector) (*Watch, error) {
	prefix := prefixOf(k, ns)
	var initial *snapshot
	after := plan.Revision
	sendInitial := plan.InitialEvents
	if (plan.Mode == rvplan.Latest || plan.Mode == rvplan.Any) && r.faults.Has(faults.NoSyntheticAdded) {
		sendInitial = false
	}
	if plan.Mode == rvplan.NotOlderThan {
		if err := r.waitFor(ctx, plan.Revision); err != nil {
			return nil, err
		}
	}
	switch {
	case plan.Mode == rvplan.Exact:
		if c := r.store.CompactedRevision(); after < c {
			return nil, rvplan.WatchTooOld(after, c)
		}
	case sendInitial:
		snap, err := r.sharedSnapshot(ctx, prefix)
		if err != nil {
			return nil, r.storeErr(k, "", err)
		}
		initial, after = snap, snap.revision
	default:
		after = r.store.CurrentRevision()
	}
	wctx, cancel := context.WithCancel(ctx)
	stored := storedSelectorOf(k, version, sel)
	sw, err := r.store.Watch(wctx, prefix, after, r.eventFilter(stored))
	if err != nil {
		cancel()
		initial.release()
		if errors.Is(err, storage.ErrCompacted) {
			return nil, rvplan.WatchTooOld(after, r.store.CompactedRevision())
		}
		if errors.Is(err, storage.ErrFutureRevision) {
			return nil, rvplan.TooLargeResourceVersion(after, r.store.CurrentRevision())
		}
		return nil, r.storeErr(k, "", err)
	}
	initDone := initDoneOf(ctx)
	w := &Watch{ctx: wctx, watcher: sw, cancel: cancel, done: make(chan struct{}), start: after}
	w.pump = func(send func(WatchEvent) bool, idle func()) {
		defer close(w.done)
		defer sw.Stop()
		defer initDone()
		if initial != nil {
			memoryRelease.begin()
			err := r.sendInitial(wctx, k, version, sel, initial.items, after, send)
			initial.release()
			initial = nil
			memoryRelease.end()
			if err != nil {
				// A stored object that cannot be read ends the watch with an
				// ERROR event naming it, never with a silent gap.
				w.err = err
				send(errorEvent(err))
				return
			}
		}
		if plan.InitialEventsEndBookmark {
			if !send(WatchEvent{Type: Bookmark, Revision: after, InitialEventsEnd: true}) {
				return
			}
		}
		initDone()
		for {
			ev, ok := sw.Next(idle)
			if !ok {
				if wctx.Err() != nil {
					return // stopped, or the request ended
				}
				w.err = sw.Err()
				switch {
				case errors.Is(w.err, storage.ErrCorrupt):
					send(errorEvent(r.storeErr(k, "", w.err)))
				case errors.Is(w.err, storage.ErrCompacted):
					// The bbolt store compacted history this watch had
					// yet to replay: a 410, as kube-apiserver sends when
					// etcd compacts a watch's history.
					send(errorEvent(rvplan.WatchTooOld(after, r.store.CompactedRevision())))
				}
				return
			}
			out, ok := r.translate(k, version, ev, sel, stored)
			if ok && !send(out) {
				return
			}
		}
	}
	return w, nil
}

// snapshot is a collection as stored at one revision, shared read-only by
// the watches that send it as their initial state.
type snapshot struct {
	key      snapshotKey
	revision int64
	items    []storage.KeyValue
	refs     int // watches still sending it; guarded by snapshots.mu
}

type snapshotKey struct {
	store    storage.Store // registries of several servers share the process
	prefix   string
	revision int64
}

// snapshots are the shared snapshots in use. Hundreds of watches of one
// collection started together (clients reconnecting after a restart, or
// the amplification of issue #18) used to hold a list of it each; now
// they hold one, and it is dropped when the last of them is done with it.
var snapshots = struct {
	mu sync.Mutex
	m  map[snapshotKey]*snapshot
}{m: map[snapshotKey]*snapshot{}}

// sharedSnapshot returns the collection under prefix at the current
// revision, shared with the other watches that asked at that revision.
// The caller releases it.
func (r *Registry) sharedSnapshot(ctx context.Context, prefix string) (*snapshot, error) {
	key := snapshotKey{store: r.store, prefix: prefix, revision: r.store.CurrentRevision()}
	snapshots.mu.Lock()
	if s, ok := snapshots.m[key]; ok {
		s.refs++
		snapshots.mu.Unlock()
		return s, nil
	}
	snapshots.mu.Unlock()
	// The bbolt store leaves values in its file: each watch reads them one
	// at a time as it sends them, instead of the snapshot holding them all.
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: prefix, SkipFileValues: true})
	if err != nil {
		return nil, err
	}
	key.revision = res.Revision
	snapshots.mu.Lock()
	defer snapshots.mu.Unlock()
	if s, ok := snapshots.m[key]; ok {
		s.refs++
		return s, nil
	}
	s := &snapshot{key: key, revision: res.Revision, items: res.Items, refs: 1}
	snapshots.m[key] = s
	return s, nil
}

// release drops one watch's hold on the snapshot; nil is a no-op.
func (s *snapshot) release() {
	if s == nil {
		return
	}
	snapshots.mu.Lock()
	defer snapshots.mu.Unlock()
	if s.refs--; s.refs == 0 {
		delete(snapshots.m, s.key)
	}
}

// memoryRelease gives memory back to the OS once a burst of watch
// initialisations is over. Each watch sending its initial state holds a
// connection, buffers and the object in flight; hundreds at once raise the
// heap, and the Go runtime keeps the pages until its next collection, which
// an idle server may not run for two minutes, and then returns them only
// gradually. So when at least burstWatches initialisations overlapped and
// the last of them ends, the memory is released a moment later, at most
// once per releaseInterval (a forced collection costs CPU in proportion to
// the live heap).
var memoryRelease = &burstTracker{threshold: burstWatches, quiet: 250 * time.Millisecond,
	interval: 10 * time.Second, release: releaseMemory}

const burstWatches = 32

// releaseMemory collects twice, so that what the burst left in sync.Pools
// (HTTP and JSON buffers, dropped only by a second collection) goes too,
// and returns the free pages to the OS at once.
func releaseMemory() {
	runtime.GC()
	debug.FreeOSMemory()
}

// burstTracker counts running watch initialisations and schedules release
// once a burst of at least threshold of them has ended.
type burstTracker struct {
	threshold int
	quiet     time.Duration // after the burst, before releasing
	interval  time.Duration // the least time between two releases
	release   func()

	mu     sync.Mutex
	active int // initialisations running
	peak   int // most running at once since the last release
	timer  *time.Timer
	gen    uint64 // names the scheduled release; begin cancels it by moving on
	last   time.Time
}

func (b *burstTracker) begin() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active++
	b.peak = max(b.peak, b.active)
	if b.timer != nil {
		b.timer.Stop() // the burst goes on
		b.timer = nil
		b.gen++
	}
}

func (b *burstTracker) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.active--
	if b.active > 0 || b.peak < b.threshold {
		return
	}
	delay := max(b.quiet, time.Until(b.last.Add(b.interval)))
	gen := b.gen
	b.timer = time.AfterFunc(delay, func() { b.fire(gen) })
}

// fire releases memory unless the release named gen was cancelled.
func (b *burstTracker) fire(gen uint64) {
	b.mu.Lock()
	if b.gen != gen || b.timer == nil {
		b.mu.Unlock()
		return
	}
	b.timer, b.peak, b.last = nil, 0, time.Now()
	b.gen++
	b.mu.Unlock()
	b.release()
}

// initBatch is how many initial objects a watch decodes per decoding slot:
// one, so that a watch whose client reads slowly holds one decoded object.
const initBatch = 1

// initSlots bounds the watches decoding their initial state at one time,
// process-wide: the work is CPU-bound, so more than a few at once only
// makes every one of them slower.
var initSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// sendInitial sends the ADDED events of the initial state. It returns nil
// when done or when ctx ended (the caller stops either way).
func (r *Registry) sendInitial(ctx context.Context, k *Kind, version string, sel Selector, items []storage.KeyValue, rev int64, send func(WatchEvent) bool) error {
	batch := make([]Object, 0, initBatch)
	for len(items) > 0 {
		select {
		case initSlots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		for len(items) > 0 && len(batch) < initBatch && ctx.Err() == nil {
			kv := items[0]
			items = items[1:]
			if kv.Value == nil {
				var err error
				if kv, err = r.snapshotValue(ctx, k, kv, rev); err != nil {
					<-initSlots
					return err
				}
			}
			if !sel.Empty() && !r.storedMayMatch(k, version, sel, kv) {
				continue
			}
			obj, err := r.decode(k, version, kv, 0)
			if err != nil {
				<-initSlots
				return err
			}
			if sel.Matches(k, obj) {
				batch = append(batch, obj)
			}
		}
		<-initSlots
		for i, obj := range batch {
			if !send(WatchEvent{Type: Added, Object: obj, Revision: rev}) {
				return nil
			}
			batch[i] = nil
		}
		batch = batch[:0]
		if ctx.Err() != nil {
			return nil
		}
	}
	return nil
}

// snapshotValue reads the value a shared snapshot left in the bbolt file
// (storage.ListOptions.SkipFileValues): the key as it was at rev. History
// compacted meanwhile ends the watch with a 410, as kube-apiserver's does
// when etcd compacts a watch's revision.
func (r *Registry) snapshotValue(ctx context.Context, k *Kind, kv storage.KeyValue, rev int64) (storage.KeyValue, error) {
	got, err := r.store.Get(ctx, kv.Key, rev)
	if errors.Is(err, storage.ErrCompacted) {
		// Compacted past rev: the key's state then is still its latest
		// unless it was written since.
		if got, err = r.store.Get(ctx, kv.Key, 0); err == nil && got.ModRevision != kv.ModRevision {
			err = storage.ErrCompacted
		}
	}
	switch {
	case errors.Is(err, storage.ErrCompacted) || errors.Is(err, storage.ErrNotFound):
		return kv, rvplan.WatchTooOld(rev, r.store.CompactedRevision())
	case err != nil:
		return kv, r.storeErr(k, "", err)
	}
	return got, nil
}

// errorEvent is an ERROR event carrying err's Status.
func errorEvent(err error) WatchEvent {
	var se apierrors.APIStatus
	if !errors.As(err, &se) {
		se = apierrors.NewInternalError(err)
	}
	st := se.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	var obj Object
	if b, err := json.Marshal(st); err == nil {
		_ = json.Unmarshal(b, &obj)
	}
	return WatchEvent{Type: Error, Object: obj}
}

type initDoneKey struct{}

// WithInitDone returns a context whose watches call done once their
// initial state has been delivered (or the watch ended first): the HTTP
// layer counts watch initialisation against its in-flight limit until then.
func WithInitDone(ctx context.Context, done func()) context.Context {
	return context.WithValue(ctx, initDoneKey{}, done)
}

// initDoneOf returns the context's callback, safe to call more than once.
func initDoneOf(ctx context.Context) func() {
	done, _ := ctx.Value(initDoneKey{}).(func())
	if done == nil {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(done) }
}

// translate turns a store event into a watch event, applying the selector:
// an object that starts matching is ADDED, one that stops is DELETED. Where
// stored decides the selector from the values' labels and the key, the
// values are not decoded for it (the object sent still is); otherwise the
// decoded values are matched.
func (r *Registry) translate(k *Kind, version string, ev storage.Event, sel Selector, stored *storedSelector) (WatchEvent, bool) {
	if ev.Type == storage.EventProgress {
		return WatchEvent{Type: Bookmark, Revision: ev.Revision}, true
	}
	dec := func(b []byte, prev bool) *eventEntry {
		if b == nil {
			return nil
		}
		return r.events.get(eventKey{kind: k, version: version, revision: ev.Revision, prev: prev}, func() Object {
			o, err := parseStored(b)
			if err != nil || o == nil {
				return nil
			}
			meta(o)["resourceVersion"] = strconv.FormatInt(ev.Revision, 10)
			if conv, err := k.fromStorage(o, version); err == nil {
				o = conv
			} else {
				o["apiVersion"], o["kind"] = k.APIVersion(version), k.Kind
			}
			return o
		})
	}
	objectOf := func(e *eventEntry) Object {
		if e == nil {
			return nil
		}
		return e.obj
	}
	update := ev.Type == storage.EventPut && !ev.IsCreate
	var cur *eventEntry
	now, before, decided := r.decideStored(stored, ev)
	if !decided {
		cur = dec(ev.Value, false)
		now = sel.Matches(k, objectOf(cur))
		before = update && (sel.Empty() || sel.Matches(k, objectOf(dec(ev.PrevValue, true))))
	}
	var typ string
	switch {
	case !update:
		typ = Added // a create
		if ev.Type == storage.EventDelete {
			typ = Deleted
		}
		if !now {
			return WatchEvent{}, false
		}
	case now && before:
		typ = Modified
	case now:
		typ = Added
	case before:
		typ = Deleted
	default:
		return WatchEvent{}, false
	}
	if cur == nil {
		cur = dec(ev.Value, false)
	}
	if objectOf(cur) == nil {
		return WatchEvent{}, false // as a decoded value that matches nothing
	}
	return WatchEvent{Type: typ, Object: cur.obj, Revision: ev.Revision, cached: cur}, true
}

// IsExpired reports whether err is a 410.
func IsExpired(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }
