package storage

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// scan is what loadChecked reads from the file: every record's header, in
// revision order, and the meta revisions.
type scan struct {
	recs               []loadedRecord
	current, compacted int64
	legacy             []int64 // revisions still in the format without checksums
}

// scanTx reads the meta revisions and every record's header from the file
// and checks that the history after the compacted revision is whole. Every
// error it returns means the file cannot be trusted. The values stay in the
// file, and each is checked against its checksum when it is read.
func scanTx(tx *bolt.Tx) (sc scan, err error) {
	meta, revs := tx.Bucket(bucketMeta), tx.Bucket(bucketRevisions)
	if meta == nil && revs == nil {
		return sc, nil // created, never written: an empty store
	}
	if meta == nil || revs == nil {
		return sc, errors.New("a bucket is missing")
	}
	current, compacted := metaRev(meta, metaCurrent), metaRev(meta, metaCompacted)
	if current < 0 || compacted < 0 || compacted > current {
		return sc, fmt.Errorf("bad meta: current %d, compacted %d", current, compacted)
	}
	sc.current, sc.compacted = current, compacted
	// There are at most current records (one per revision) and a record
	// takes at least 32 bytes of the file, which bounds what a damaged meta
	// may make us allocate.
	recs := make([]loadedRecord, 0, min(current, tx.Size()/32))
	c := revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return sc, fmt.Errorf("bad revision key %x", k)
		}
		rev := int64(binary.BigEndian.Uint64(k))
		r, err := decodeHeader(rev, v)
		if err != nil {
			return sc, fmt.Errorf("revision %d: %w", rev, err)
		}
		if rev > current || rev <= 0 {
			return sc, fmt.Errorf("revision %d: outside (0, %d]", rev, current)
		}
		// Revision keys come sorted and unique, so the history after the
		// compacted revision is whole when each one follows the last.
		if last := compacted; rev > compacted {
			if len(recs) > 0 {
				last = max(last, recs[len(recs)-1].rev)
			}
			if rev != last+1 {
				return sc, fmt.Errorf("revision %d: history gap: expected revision %d", rev, last+1)
			}
		}
		if r.legacy {
			sc.legacy = append(sc.legacy, rev)
		}
		recs = append(recs, loadedRecord{key: r.key, rev: rev, createRev: r.createRev, at: r.at, deleted: r.kind == recordDelete})
	}
	if len(recs) == 0 && current > compacted || len(recs) > 0 && max(compacted, recs[len(recs)-1].rev) != current {
		return sc, fmt.Errorf("history ends before the current revision %d", current)
	}
	sc.recs = recs
	return sc, nil
}

// build rebuilds the index and the revision log from a scan; it reads
// nothing from the file. An error means the file cannot be trusted.
func (s *MVCCStore) build(sc scan) error {
	recs := sc.recs
	// Keys arrive in revision order, that is in no key order. Sorting the
	// records by key (then revision) groups each key's versions oldest
	// first and yields the keys in index order, with no map and no second
	// sort (buildIndex).
	slices.SortFunc(recs, func(a, b loadedRecord) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.rev, b.rev)
	})
	s.compacted, s.rev = sc.compacted, sc.current
	s.log = make([]logEntry, sc.current-sc.compacted) // scanTx found exactly these revisions
	var nodes []*treapNode
	for i := 0; i < len(recs); {
		j := i + 1
		for j < len(recs) && recs[j].key == recs[i].key {
			j++
		}
		n := &treapNode{keyEntry: keyEntry{key: recs[i].key, versions: make([]version, 0, j-i)}}
		for _, r := range recs[i:j] {
			if err := s.loadRecord(n, r); err != nil {
				return fmt.Errorf("revision %d: %w", r.rev, err)
			}
		}
		nodes = append(nodes, n)
		i = j
	}
	s.index = buildIndex(nodes)
	return nil
}

// loadedRecord is a record's header as scanTx gathers it.
type loadedRecord struct {
	key            string
	rev, createRev int64
	at             int64
	deleted        bool
}

func metaRev(b *bolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

// loadRecord adds record r, the next version of key node n, to n and to
// its place in the log.
func (s *MVCCStore) loadRecord(n *treapNode, r loadedRecord) error {
	wasLive := n.liveNow()
	v := version{modRev: r.rev, createRev: r.createRev, deleted: r.deleted} // the value stays in the file
	if r.rev <= s.compacted {
		// A key's value as of the compacted revision: one per key, never a tombstone.
		if v.deleted || len(n.versions) > 0 {
			return errCorrupt
		}
	} else {
		ev := Event{Type: EventPut, Key: n.key, Revision: r.rev, IsCreate: !wasLive}
		if v.deleted {
			if !wasLive {
				return fmt.Errorf("deletion of absent key %q", n.key)
			}
			ev.Type, ev.IsCreate = EventDelete, false
		}
		e := logEntry{ev: ev, createRev: r.createRev, at: r.at}
		if wasLive {
			e.prevRev = n.versions[len(n.versions)-1].modRev
		}
		s.log[r.rev-s.compacted-1] = e
	}
	n.versions = append(n.versions, v)
	return nil
}

// buildIndex makes the treap of nodes, sorted by key, in O(n): with keys
// in order, a stack builds the tree whose priorities (drawn here) are
// heap-ordered, the treap that inserting them one by one would give; the
// live counts are then summed bottom-up.
func buildIndex(sorted []*treapNode) keyIndex {
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
