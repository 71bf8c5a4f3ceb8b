package storage

import (
	"context"
	"fmt"
	"strings"
)

// Create writes a new key; ErrKeyExists if it is present.
func (s *MVCCStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	if err := s.writable(ctx); err != nil {
		return 0, err
	}
	value = cloneBytes(value) // before the lock: writers and readers wait on it
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	if n := s.index.get(key); n != nil && n.liveNow() {
		return 0, fmt.Errorf("create %q: %w", key, ErrKeyExists)
	}
	rev := s.rev + 1
	ev := Event{Type: EventPut, Key: key, Value: value, Revision: rev, IsCreate: true}
	if err := s.commitLocked(ev, rev); err != nil {
		return 0, err
	}
	return rev, nil
}

// Update replaces the value of an existing key, checking expectModRevision
// when it is non-zero.
func (s *MVCCStore) Update(ctx context.Context, key string, value []byte, expectModRevision int64) (int64, error) {
	if err := s.writable(ctx); err != nil {
		return 0, err
	}
	value = cloneBytes(value)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	cur, prev, err := s.currentLocked("update", key, expectModRevision)
	if err != nil {
		return 0, err
	}
	rev := s.rev + 1
	ev := Event{Type: EventPut, Key: key, Value: value, PrevValue: prev, Revision: rev}
	if err := s.commitLocked(ev, cur.createRev); err != nil {
		return 0, err
	}
	return rev, nil
}

// Delete removes a key, checking expectModRevision when it is non-zero, and
// returns the deleted key as it was.
func (s *MVCCStore) Delete(ctx context.Context, key string, expectModRevision int64) (KeyValue, int64, error) {
	if err := s.writable(ctx); err != nil {
		return KeyValue{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return KeyValue{}, 0, ErrClosed
	}
	cur, prev, err := s.currentLocked("delete", key, expectModRevision)
	if err != nil {
		return KeyValue{}, 0, err
	}
	rev := s.rev + 1
	ev := Event{Type: EventDelete, Key: key, Value: prev, Revision: rev}
	if err := s.commitLocked(ev, cur.createRev); err != nil {
		return KeyValue{}, 0, err
	}
	return KeyValue{Key: key, Value: prev, CreateRevision: cur.createRev, ModRevision: cur.modRev}, rev, nil
}

// currentLocked returns the live version of key and its value, applying
// the precondition.
func (s *MVCCStore) currentLocked(op, key string, expectModRevision int64) (version, []byte, error) {
	n := s.index.get(key)
	if n == nil || !n.liveNow() {
		return version{}, nil, fmt.Errorf("%s %q: %w", op, key, ErrNotFound)
	}
	cur := n.versions[len(n.versions)-1]
	value, err := s.valueAt(key, cur)
	if err != nil {
		return version{}, nil, fmt.Errorf("storage: %s: %w", op, err)
	}
	if expectModRevision != 0 && cur.modRev != expectModRevision {
		return version{}, nil, fmt.Errorf("%s %q: modRevision is %d, expected %d: %w",
			op, key, cur.modRev, expectModRevision, ErrConflict)
	}
	return cur, value, nil
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
	ev.PrevRevision = s.applyLocked(entry)
	s.applyCompactionLocked(plan)
	for w := range s.watchers {
		if strings.HasPrefix(ev.Key, w.prefix) && (w.keep == nil || w.keep(ev)) {
			w.enqueue(ev)
		}
	}
	if s.revWait != nil {
		close(s.revWait)
		s.revWait = nil
	}
	return nil
}

// applyLocked adds a write to the key index and the revision log and
// returns the revision of the key's value before it (0 if none). With a
// persister, the file holds the values: index and log keep none.
func (s *MVCCStore) applyLocked(e logEntry) int64 {
	ev := e.ev
	n := s.index.insert(ev.Key)
	wasLive := n.liveNow()
	if wasLive {
		e.ev.PrevRevision = n.versions[len(n.versions)-1].modRev
	}
	v := version{modRev: ev.Revision, createRev: e.createRev, value: ev.Value}
	if ev.Type == EventDelete {
		v = version{modRev: ev.Revision, createRev: e.createRev, deleted: true}
	}
	if s.persist != nil {
		v.value, e.ev.Value, e.ev.PrevValue = nil, nil, nil
	}
	n.versions = append(n.versions, v)
	switch isLive := n.liveNow(); {
	case isLive && !wasLive:
		s.index.addLive(ev.Key, 1)
	case !isLive && wasLive:
		s.index.addLive(ev.Key, -1)
	}
	s.log.push(e)
	s.rev = ev.Revision
	return e.ev.PrevRevision
}
