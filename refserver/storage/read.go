package storage

import (
	"context"
	"fmt"
	"slices"
)

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
	value, err := s.valueAt(key, v)
	if err != nil {
		return KeyValue{}, fmt.Errorf("storage: %w", err)
	}
	return KeyValue{Key: key, Value: value, CreateRevision: v.createRev, ModRevision: v.modRev}, nil
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
	case revision < s.compacted:
		// The compacted revision's own state is kept whole (compact.go), as
		// etcd serves its compact revision: a page served there right after
		// a compaction gives a continue token that still works after the
		// next write.
		return 0, fmt.Errorf("revision %d, compacted %d: %w", revision, s.compacted, ErrCompacted)
	}
	return revision, nil
}

// List reads keys in key order at one revision. Candidates, KeyFilter and
// Filter run under the store's read lock and must not call back into the
// store.
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
	if rev == s.rev && opts.Filter == nil && opts.KeyFilter == nil && opts.Candidates == nil {
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
	skipFile := opts.SkipFileValues && opts.Filter == nil
	var candidates []string
	useCandidates := false
	if opts.Candidates != nil {
		if candidates, useCandidates = opts.Candidates(rev); useCandidates && opts.Limit == 0 {
			res.Items = make([]KeyValue, 0, min(len(candidates), 1024))
		}
	}
	err = s.reading(func(get valueGetter) error {
		var err error
		visit := func(n *treapNode) bool {
			if bounded && n.key >= end {
				return false
			}
			v, ok := n.at(rev)
			if !ok {
				return true
			}
			if opts.KeyFilter != nil && !opts.KeyFilter(n.key, v.modRev) {
				return true
			}
			kv := KeyValue{Key: n.key, Value: v.value, CreateRevision: v.createRev, ModRevision: v.modRev}
			if !skipFile {
				if kv.Value, err = valueOf(get, n.key, v); err != nil {
					return false
				}
			}
			if opts.Filter != nil && !opts.Filter(kv) {
				return true
			}
			res.Items = append(res.Items, kv)
			if opts.Limit > 0 && int64(len(res.Items)) >= opts.Limit {
				full, last = true, n.key
				return false
			}
			return true
		}
		if !useCandidates {
			s.index.ascend(start, visit)
			return err
		}
		i, _ := slices.BinarySearch(candidates, start)
		j := len(candidates)
		if bounded {
			j, _ = slices.BinarySearch(candidates, end)
		}
		s.index.visitKeys(candidates[i:max(i, j)], visit)
		return err
	})
	if err != nil {
		return ListResult{}, fmt.Errorf("storage: %w", err)
	}
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
		for i := int(rev - s.compacted); i < s.log.len(); i++ {
			k := s.log.at(i).ev.Key
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
