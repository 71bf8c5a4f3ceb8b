package registry

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

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
	sw, err := r.store.Watch(wctx, prefix, after, r.selectorFilter(k, version, sel))
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
			out, ok := r.translate(k, version, ev, sel)
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
			if !sel.Empty() && !r.storedMayMatch(k, sel, kv) {
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
		// Compacted at rev, its state is still the latest unless the key
		// was written since.
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

// storedMayMatch is the cheap pass of a selector over the object stored
// in kv, before it is decoded. False means the object is certainly not
// selected; true means it may be. Labels come from the label cache (a value
// whose labels cannot be read may match: the decode reports it), and
// metadata.name and metadata.namespace from the key, which the registry
// writes from them; other fields (kind-specific ones) need the whole
// object. Conversions here leave metadata as stored, so the stored labels
// are those of every version.
func (r *Registry) storedMayMatch(k *Kind, sel Selector, kv storage.KeyValue) bool {
	if byKey, _ := keyDecided(k, sel.Fields); byKey != nil && !byKey.Matches(keyFields{k: k, rest: strings.TrimPrefix(kv.Key, basePrefix(k))}) {
		return false
	}
	if sel.Labels == nil || sel.Labels.Empty() {
		return true
	}
	sl := r.labels.get(kv)
	return !sl.ok || sel.Labels.Matches(sl.set)
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
// an object that starts matching is ADDED, one that stops is DELETED.
func (r *Registry) translate(k *Kind, version string, ev storage.Event, sel Selector) (WatchEvent, bool) {
	if ev.Type == storage.EventProgress {
		return WatchEvent{Type: Bookmark, Revision: ev.Revision}, true
	}
	dec := func(b []byte, prev bool) Object {
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
	cur := dec(ev.Value, false)
	switch ev.Type {
	case storage.EventDelete:
		if sel.Matches(k, cur) {
			return WatchEvent{Type: Deleted, Object: cur, Revision: ev.Revision}, true
		}
		return WatchEvent{}, false
	}
	now := sel.Matches(k, cur)
	if ev.IsCreate {
		return WatchEvent{Type: Added, Object: cur, Revision: ev.Revision}, now
	}
	before := sel.Empty() || sel.Matches(k, dec(ev.PrevValue, true))
	switch {
	case now && before:
		return WatchEvent{Type: Modified, Object: cur, Revision: ev.Revision}, true
	case now:
		return WatchEvent{Type: Added, Object: cur, Revision: ev.Revision}, true
	case before:
		return WatchEvent{Type: Deleted, Object: cur, Revision: ev.Revision}, true
	}
	return WatchEvent{}, false
}

// selectorFilter is the store's test, for a watch with a selector, of
// whether a write can concern it: translate sends an event only if the
// object written, or the one it replaced, matches, so a write of neither
// need not wake the watch's goroutine. With many watches each selecting a
// share of a collection (or one object, as kubectl wait and client-go's
// single-object watches do with metadata.name), most writes concern few of
// them; kube-apiserver's watch cache hands such events to every watcher all
// the same, and each one filters it. Labels are read from the label cache
// once per event (eventLabels), a value whose labels cannot be read is
// kept, and metadata.name and metadata.namespace come from the key, which
// the registry writes from them (so they are the same before and after a
// write). The filter is nil where that does not decide: a field selector on
// another field, or a version other than the storage version, whose
// conversion may change labels.
func (r *Registry) selectorFilter(k *Kind, version string, sel Selector) storage.EventFilter {
	if sel.Empty() || version != k.StorageVersion() {
		return nil
	}
	byKey, all := keyDecided(k, sel.Fields)
	if !all {
		return nil
	}
	var byLabels labels.Selector
	if sel.Labels != nil && !sel.Labels.Empty() {
		byLabels = sel.Labels
	}
	base := basePrefix(k)
	matches := func(sl storedLabels) bool { return !sl.ok || byLabels.Matches(sl.set) }
	return func(ev storage.Event) bool {
		if ev.Type != storage.EventPut && ev.Type != storage.EventDelete {
			return true
		}
		if byKey != nil && !byKey.Matches(keyFields{k: k, rest: strings.TrimPrefix(ev.Key, base)}) {
			return false
		}
		if byLabels == nil {
			return true
		}
		cur, prev, hasPrev := r.lastEvent.of(r.labels, ev)
		return matches(cur) || (hasPrev && matches(prev))
	}
}

// keyDecided is the part of the field selector fs (of kind k) that the key
// decides: its requirements on metadata.name, and on metadata.namespace of
// a namespaced kind, unless k serves those fields itself (nil for none).
// all is whether that is every requirement of fs.
func keyDecided(k *Kind, fs fields.Selector) (byKey fields.Selector, all bool) {
	if fs == nil || fs.Empty() {
		return nil, true
	}
	reqs := fs.Requirements()
	decided := make([]fields.Selector, 0, len(reqs))
	for _, req := range reqs {
		_, special := k.Fields[req.Field]
		if special || !(keyFields{k: k}).Has(req.Field) {
			continue
		}
		switch req.Operator {
		case selection.Equals, selection.DoubleEquals:
			decided = append(decided, fields.OneTermEqualSelector(req.Field, req.Value))
		case selection.NotEquals:
			decided = append(decided, fields.OneTermNotEqualSelector(req.Field, req.Value))
		}
	}
	switch {
	case len(decided) == len(reqs):
		return fs, true
	case len(decided) == 0:
		return nil, false
	}
	return fields.AndSelectors(decided...), false
}

// keyFields reads metadata.name and metadata.namespace from a key, the rest
// after the kind's prefix ("ns/name" or "name"), as objectFields reads them
// from the object stored there.
type keyFields struct {
	k    *Kind
	rest string
}

func (f keyFields) Has(field string) bool {
	return field == "metadata.name" || (field == "metadata.namespace" && f.k.Namespaced)
}

func (f keyFields) Get(field string) string {
	ns, name := "", f.rest
	if f.k.Namespaced {
		ns, name, _ = strings.Cut(f.rest, "/")
	}
	switch {
	case field == "metadata.name":
		return name
	case field == "metadata.namespace" && f.k.Namespaced:
		return ns
	}
	return ""
}

// eventLabels remembers the labels of one event's values.
type eventLabels struct {
	mu        sync.Mutex
	key       string
	rev       int64
	cur, prev storedLabels
	hasPrev   bool
}

// of returns the labels of ev's object (the value written, or the one a
// DELETE removed) and, for an update, of the value it replaced, reading
// them from the label cache once per event.
func (e *eventLabels) of(c *labelCache, ev storage.Event) (cur, prev storedLabels, hasPrev bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.key != ev.Key || e.rev != ev.Revision {
		e.key, e.rev, e.hasPrev = ev.Key, ev.Revision, false
		if ev.Type == storage.EventDelete {
			e.cur = c.get(storage.KeyValue{Key: ev.Key, Value: ev.Value, ModRevision: ev.PrevRevision})
		} else {
			e.cur = c.get(storage.KeyValue{Key: ev.Key, Value: ev.Value, ModRevision: ev.Revision})
			if !ev.IsCreate {
				e.prev = c.get(storage.KeyValue{Key: ev.Key, Value: ev.PrevValue, ModRevision: ev.PrevRevision})
				e.hasPrev = true
			}
		}
	}
	return e.cur, e.prev, e.hasPrev
}

// IsExpired reports whether err is a 410.
func IsExpired(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }
