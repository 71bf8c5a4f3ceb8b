package registry

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

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
}

// Watch is a running watch.
type Watch struct {
	events  chan WatchEvent
	watcher storage.Watcher
	cancel  context.CancelFunc
	done    chan struct{}
	err     error
	start   int64
}

// StartRevision is the revision the watch started from.
func (w *Watch) StartRevision() int64 { return w.start }

// Events delivers the events; closed when the watch ends.
func (w *Watch) Events() <-chan WatchEvent { return w.events }

// RequestBookmark asks for a BOOKMARK once every change so far has been delivered.
func (w *Watch) RequestBookmark() { w.watcher.RequestProgress() }

// Stop ends the watch.
func (w *Watch) Stop() { w.cancel(); <-w.done }

// Err says why the watch ended (nil when stopped or the context ended).
func (w *Watch) Err() error { return w.err }

// ErrTooSlow is returned by Watch.Err when the watcher fell behind.
var ErrTooSlow = storage.ErrWatcherTooSlow

// Watch starts a watch per the plan. A watch from a compacted revision
// returns a 410 Expired StatusError which the HTTP layer sends as an ERROR event.
func (r *Registry) Watch(ctx context.Context, k *Kind, version, ns string, plan rvplan.Plan, sel Selector) (*Watch, error) {
	prefix := prefixOf(k, ns)
	var initial []Object
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
	if plan.Mode != rvplan.Exact {
		res, err := r.store.List(ctx, storage.ListOptions{Prefix: prefix})
		if err != nil {
			return nil, r.storeErr(k, "", err)
		}
		after = res.Revision
		if sendInitial {
			for _, kv := range res.Items {
				obj, err := r.decode(k, version, kv, 0)
				if err == nil && sel.Matches(k, obj) {
					initial = append(initial, obj)
				}
			}
		}
	} else if c := r.store.CompactedRevision(); after < c {
		return nil, rvplan.WatchTooOld(after, c)
	}
	wctx, cancel := context.WithCancel(ctx)
	sw, err := r.store.Watch(wctx, prefix, after)
	if err != nil {
		cancel()
		if errors.Is(err, storage.ErrCompacted) {
			return nil, rvplan.WatchTooOld(after, r.store.CompactedRevision())
		}
		if errors.Is(err, storage.ErrFutureRevision) {
			return nil, rvplan.TooLargeResourceVersion(after, r.store.CurrentRevision())
		}
		return nil, r.storeErr(k, "", err)
	}
	w := &Watch{events: make(chan WatchEvent), watcher: sw, cancel: cancel, done: make(chan struct{}), start: after}
	go func() {
		defer close(w.done)
		defer close(w.events)
		defer sw.Stop()
		send := func(ev WatchEvent) bool {
			select {
			case w.events <- ev:
				return true
			case <-wctx.Done():
				return false
			}
		}
		for _, obj := range initial {
			if !send(WatchEvent{Type: Added, Object: obj, Revision: after}) {
				return
			}
		}
		if plan.InitialEventsEndBookmark {
			if !send(WatchEvent{Type: Bookmark, Revision: after, InitialEventsEnd: true}) {
				return
			}
		}
		for {
			select {
			case <-wctx.Done():
				return
			case ev, ok := <-sw.Events():
				if !ok {
					w.err = sw.Err()
					return
				}
				out, ok := r.translate(k, version, ev, sel)
				if ok && !send(out) {
					return
				}
			}
		}
	}()
	return w, nil
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
			var o Object
			if json.Unmarshal(b, &o) != nil {
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

// IsExpired reports whether err is a 410.
func IsExpired(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }
