package registry

import (
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/apiconform/apiconform/refserver/storage"
)

// A selector of labels, metadata.name and metadata.namespace is decided
// without decoding the object: labels from the label cache (parsed once per
// stored value), name and namespace from the key, which the registry writes
// from them (so they are the same before and after a write). Three places
// use that:
//   - the store's filter of a watch's live events (eventFilter): translate
//     sends an event only if the object written, or the one it replaced,
//     matches, so a write of neither need not wake the watch's goroutine.
//     With many watches each selecting a share of a collection (or one
//     object, as kubectl wait and client-go's single-object watches do with
//     metadata.name), most writes concern few of them; kube-apiserver's watch
//     cache hands such events to every watcher all the same, and each one
//     filters it;
//   - translate itself (decideStored), which then decodes only the object it
//     sends, not the value a write replaced;
//   - the initial events' cheap pass over stored objects (storedMayMatch).
// A value whose labels cannot be read is left to the decode.

// storedSelector is a watch's selector where the stored values decide it.
type storedSelector struct {
	k        *Kind
	base     string          // the kind's key prefix
	byKey    fields.Selector // nil: no field requirement
	byLabels labels.Selector // nil: no label requirement
}

// storedSelectorOf is sel's storedSelector for a watch of k in version; nil
// where the stored values do not decide it: no selector, a field other than
// name and namespace, or a version other than the storage version, whose
// conversion may change labels.
func storedSelectorOf(k *Kind, version string, sel Selector) *storedSelector {
	if sel.Empty() || !k.storedAsServed(version) {
		return nil
	}
	byKey, all := keyDecided(k, sel.Fields)
	if !all {
		return nil
	}
	s := &storedSelector{k: k, base: basePrefix(k), byKey: byKey}
	if sel.Labels != nil && !sel.Labels.Empty() {
		s.byLabels = sel.Labels
	}
	return s
}

func (s *storedSelector) keyMatches(key string) bool {
	return s.byKey == nil || s.byKey.Matches(keyFields{k: s.k, rest: strings.TrimPrefix(key, s.base)})
}

// eventFilter is the store's filter for a watch with stored selector s (nil
// for none): it drops a live event when neither the value written nor the
// one it replaced matches, and keeps it when it cannot tell.
func (r *Registry) eventFilter(s *storedSelector) storage.EventFilter {
	if s == nil {
		return nil
	}
	matches := func(sl storedLabels) bool { return !sl.ok || s.byLabels.Matches(sl.set) }
	return func(ev storage.Event) bool {
		if ev.Type != storage.EventPut && ev.Type != storage.EventDelete {
			return true
		}
		if !s.keyMatches(ev.Key) {
			return false
		}
		if s.byLabels == nil {
			return true
		}
		cur, prev, hasPrev := r.lastEvent.of(r.labels, ev)
		return matches(cur) || (hasPrev && matches(prev))
	}
}

// decideStored is whether the selector of s matches ev's object (the value
// written, or the one a DELETE removed) and, for an update, the value it
// replaced. ok is false when s is nil or a value's labels cannot be read:
// the caller decodes.
func (r *Registry) decideStored(s *storedSelector, ev storage.Event) (now, before, ok bool) {
	if s == nil {
		return false, false, false
	}
	if !s.keyMatches(ev.Key) {
		return false, false, true // the same key before and after
	}
	if s.byLabels == nil {
		return true, true, true
	}
	cur, prev, hasPrev := r.lastEvent.of(r.labels, ev)
	if !cur.ok || hasPrev && !prev.ok {
		return false, false, false
	}
	return s.byLabels.Matches(cur.set), hasPrev && s.byLabels.Matches(prev.set), true
}

// storedMayMatch is the cheap pass of a selector over the object stored
// in kv, before it is decoded for a watch in version. False means the
// object is certainly not selected; true means it may be. Fields other than
// name and namespace (kind-specific ones) need the whole object, and labels
// are read only at the storage version, as storedSelectorOf reads them.
func (r *Registry) storedMayMatch(k *Kind, version string, sel Selector, kv storage.KeyValue) bool {
	if byKey, _ := keyDecided(k, sel.Fields); byKey != nil && !byKey.Matches(keyFields{k: k, rest: strings.TrimPrefix(kv.Key, basePrefix(k))}) {
		return false
	}
	if sel.Labels == nil || sel.Labels.Empty() || !k.storedAsServed(version) {
		return true
	}
	sl := r.labels.get(kv)
	return !sl.ok || sel.Labels.Matches(sl.set)
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

// eventLabels remembers the labels of the latest event's values, so that
// the watches of one write (their filters, then translate) read them from
// the label cache once. Readers compare and take the memo without a lock:
// every watcher of a write reads it at about the same moment.
type eventLabels struct {
	last atomic.Pointer[eventLabelsMemo]
}

// eventLabelsMemo is one event's labels, never changed once stored.
type eventLabelsMemo struct {
	key       string
	rev       int64
	cur, prev storedLabels
	hasPrev   bool
}

// of returns the labels of ev's object (the value written, or the one a
// DELETE removed) and, for an update, of the value it replaced.
func (e *eventLabels) of(c *labelCache, ev storage.Event) (cur, prev storedLabels, hasPrev bool) {
	if m := e.last.Load(); m != nil && m.key == ev.Key && m.rev == ev.Revision {
		return m.cur, m.prev, m.hasPrev
	}
	m := &eventLabelsMemo{key: ev.Key, rev: ev.Revision}
	if ev.Type == storage.EventDelete {
		m.cur = c.get(storage.KeyValue{Key: ev.Key, Value: ev.Value, ModRevision: ev.PrevRevision})
	} else {
		m.cur = c.get(storage.KeyValue{Key: ev.Key, Value: ev.Value, ModRevision: ev.Revision})
		if !ev.IsCreate {
			m.prev = c.get(storage.KeyValue{Key: ev.Key, Value: ev.PrevValue, ModRevision: ev.PrevRevision})
			m.hasPrev = true
		}
	}
	e.last.Store(m)
	return m.cur, m.prev, m.hasPrev
}
