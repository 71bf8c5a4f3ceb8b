package storage

import (
	"context"
	"fmt"
	"time"
)

// compactionPlan says which history a compaction drops. It is computed
// before anything changes so that the bbolt backend can make it durable
// first; applying it afterwards cannot fail.
type compactionPlan struct {
	target int64 // new compacted revision; 0 when nothing is compacted
	trims  []trim
	drops  []int64 // modRevs of the dropped versions (for the file)
}

// trim drops the first n versions of one key.
type trim struct {
	node *treapNode
	n    int
}

// Compact drops the states before revision and the changes up to it, keeping
// each key's version at revision. A revision at or below the compacted one is a no-op;
// one beyond the current revision compacts up to the current revision.
func (s *MVCCStore) Compact(revision int64) error {
	if err := s.writable(context.Background()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.compactLocked(min(revision, s.rev))
}

func (s *MVCCStore) compactLocked(target int64) error {
	plan := s.planCompactionLocked(target)
	if plan.target == 0 {
		return nil
	}
	if s.persist != nil {
		if err := s.persist.commit(nil, plan.drops, plan.target); err != nil {
			return fmt.Errorf("storage: persist compaction to %d: %w", plan.target, err)
		}
	}
	s.applyCompactionLocked(plan)
	return nil
}

// retentionTargetLocked is the revision the retention policy compacts to
// once the store's head revision is head (the current revision, or the one
// a write is about to take). A revision is dropped once it is beyond
// HistoryMaxRevisions, or once it stopped being current (its successor was
// written) more than HistoryWindow ago. The head itself is never dropped.
func (s *MVCCStore) retentionTargetLocked(now time.Time, head int64) int64 {
	target := s.compacted
	if n := int64(s.opts.HistoryMaxRevisions); n > 0 && head-n > target {
		target = head - n
	}
	if w := s.opts.HistoryWindow; w > 0 {
		cutoff := now.Add(-w).UnixNano()
		// log[i] holds revision compacted+1+i; revision compacted+i ended when it was written.
		for i := 1 + int(target-s.compacted); i < s.log.len() && s.log.at(i).at <= cutoff; i++ {
			target = s.compacted + int64(i)
		}
	}
	return min(target, head-1, s.rev)
}

// planCompactionLocked works out what compacting to target drops. Only keys
// written in (compacted, target] can lose versions, so the cost is
// proportional to the revisions dropped, not to the number of keys.
func (s *MVCCStore) planCompactionLocked(target int64) compactionPlan {
	if target <= s.compacted {
		return compactionPlan{}
	}
	plan := compactionPlan{target: target}
	dropped := int(target - s.compacted)
	var seen map[*treapNode]struct{}
	if dropped > 1 {
		// A write usually drops one revision: no map for that.
		seen = make(map[*treapNode]struct{}, dropped)
	}
	for i := range dropped {
		n := s.index.get(s.log.at(i).ev.Key)
		if seen != nil {
			if _, dup := seen[n]; dup {
				continue
			}
			seen[n] = struct{}{}
		}
		// i = number of versions at or below target; versions[i-1] is the
		// state at target, kept when it is a value, dropped when a tombstone.
		i := 0
		for i < len(n.versions) && n.versions[i].modRev <= target {
			i++
		}
		drop := i - 1
		if i > 0 && n.versions[i-1].deleted {
			drop = i
		}
		if drop <= 0 {
			continue
		}
		for _, v := range n.versions[:drop] {
			plan.drops = append(plan.drops, v.modRev)
		}
		plan.trims = append(plan.trims, trim{node: n, n: drop})
	}
	return plan
}

// applyCompactionLocked carries out a plan. Dropped log entries are never
// overwritten, because watchers may still be replaying them (revLog.drop).
func (s *MVCCStore) applyCompactionLocked(plan compactionPlan) {
	if plan.target <= s.compacted {
		return
	}
	for _, t := range plan.trims {
		n := t.node
		clear(n.versions[:t.n]) // release the dropped values
		n.versions = n.versions[t.n:]
		if len(n.versions) == 0 {
			s.index.remove(n.key)
		}
	}
	s.log.drop(int(plan.target - s.compacted))
	s.compacted = plan.target
}

// startSweep runs the history window in the background so that history
// expires even when no writes arrive.
func (s *MVCCStore) startSweep() {
	every := s.opts.CompactInterval
	if every <= 0 || (s.opts.HistoryWindow <= 0 && s.opts.HistoryMaxRevisions == 0) {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				_ = s.ApplyRetention() // a failed file write is retried on the next tick
			}
		}
	}()
}

// ApplyRetention compacts whatever the history window and revision count
// drop at the current time of Options.Clock. Writes and the background sweep
// call it; tests call it after moving an injected clock.
func (s *MVCCStore) ApplyRetention() error {
	if err := s.writable(context.Background()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.compactLocked(s.retentionTargetLocked(s.opts.Clock(), s.rev))
}
