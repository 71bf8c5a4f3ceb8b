package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// loadTx rebuilds the index and the revision log from the file and
// returns the revisions still in the format without checksums. Every
// error it returns means the file cannot be trusted. It reads each
// record's header only: the values stay in the file, and each is checked
// against its checksum when it is read.
func (s *MVCCStore) loadTx(tx *bolt.Tx) (legacy []int64, err error) {
	meta, revs := tx.Bucket(bucketMeta), tx.Bucket(bucketRevisions)
	if meta == nil && revs == nil {
		return nil, nil // created, never written: an empty store
	}
	if meta == nil || revs == nil {
		return nil, errors.New("a bucket is missing")
	}
	current, compacted := metaRev(meta, metaCurrent), metaRev(meta, metaCompacted)
	if current < 0 || compacted < 0 || compacted > current {
		return nil, fmt.Errorf("bad meta: current %d, compacted %d", current, compacted)
	}
	s.compacted = compacted
	// The log will hold current-compacted entries and there are at most
	// current records (one per revision); a record takes at least 32 bytes
	// of the file, which bounds what a damaged meta may make us allocate.
	s.log = make([]logEntry, 0, min(current-compacted, tx.Size()/32))
	// Keys arrive in revision order, that is in no key order: they are
	// gathered in a map and the index is built once, from them sorted,
	// instead of inserting each into the treap (buildIndex).
	nodes := make(map[string]*treapNode, min(current, tx.Size()/32))
	c := revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return nil, fmt.Errorf("bad revision key %x", k)
		}
		rev := int64(binary.BigEndian.Uint64(k))
		r, err := decodeHeader(rev, v)
		if err != nil {
			return nil, fmt.Errorf("revision %d: %w", rev, err)
		}
		if r.legacy {
			legacy = append(legacy, rev)
		}
		n := nodes[r.key]
		if n == nil {
			n = &treapNode{keyEntry: keyEntry{key: r.key}}
			nodes[r.key] = n
		}
		if err := s.loadRecord(n, rev, r, current); err != nil {
			return nil, fmt.Errorf("revision %d: %w", rev, err)
		}
	}
	if got := s.compacted + int64(len(s.log)); got != current {
		return nil, fmt.Errorf("history ends at revision %d, current is %d", got, current)
	}
	s.rev = current
	s.index = buildIndex(nodes)
	return legacy, nil
}

func metaRev(b *bolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// loadRecord adds the record at rev to key node n and to the log.
func (s *MVCCStore) loadRecord(n *treapNode, rev int64, r record, current int64) error {
	if rev > current || rev <= 0 {
		return fmt.Errorf("outside (0, %d]", current)
	}
	wasLive := n.liveNow()
	v := version{modRev: rev, createRev: r.createRev, deleted: r.kind == recordDelete} // the value stays in the file
	if rev <= s.compacted {
		// A key's value as of the compacted revision: one per key, never a tombstone.
		if v.deleted || len(n.versions) > 0 {
			return errCorrupt
		}
	} else {
		if want := s.compacted + int64(len(s.log)) + 1; rev != want {
			return fmt.Errorf("history gap: expected revision %d", want)
		}
		ev := Event{Type: EventPut, Key: r.key, Revision: rev, IsCreate: !wasLive}
		if v.deleted {
			if !wasLive {
				return fmt.Errorf("deletion of absent key %q", r.key)
			}
			ev.Type, ev.IsCreate = EventDelete, false
		}
		e := logEntry{ev: ev, createRev: r.createRev, at: r.at}
		if wasLive {
			e.prevRev = n.versions[len(n.versions)-1].modRev
		}
		s.log = append(s.log, e)
	}
	n.versions = append(n.versions, v)
	return nil
}

// buildIndex makes the treap of nodes in O(n) after sorting them: with
// keys in order, a stack builds the tree whose priorities (drawn here) are
// heap-ordered, the treap that inserting them one by one would give; the
// live counts are then summed bottom-up.
func buildIndex(nodes map[string]*treapNode) keyIndex {
	sorted := make([]*treapNode, 0, len(nodes))
	for _, n := range nodes {
		sorted = append(sorted, n)
	}
	slices.SortFunc(sorted, func(a, b *treapNode) int { return strings.Compare(a.key, b.key) })
	var stack []*treapNode // the rightmost path, priorities falling
	for _, n := range sorted {
		n.prio = rand.Uint64()
		var last *treapNode
		for len(stack) > 0 && stack[len(stack)-1].prio < n.prio {
			last, stack = stack[len(stack)-1], stack[:len(stack)-1]
		}
		n.left = last
		if len(stack) > 0 {
			stack[len(stack)-1].right = n
		}
		stack = append(stack, n)
	}
	ix := keyIndex{size: len(sorted)}
	if len(stack) > 0 {
		ix.root = stack[0]
		countLive(ix.root)
	}
	return ix
}

// countLive sets the live counts of a subtree whose counts are unset.
func countLive(n *treapNode) int {
	if n == nil {
		return 0
	}
	n.live = countLive(n.left) + countLive(n.right) + selfLive(n)
	return n.live
}
