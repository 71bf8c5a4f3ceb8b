package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// scan is what the load reads from the file: every record's header, in
// revision order, and the meta revisions.
type scan struct {
	recs               []loadedRecord
	current, compacted int64
	legacy             int // records still in the format without checksums
}

// scanTx reads the meta revisions and every record's header, from bucket
// "heads" when fromHeads is set (a few pages) or else from the records
// themselves (every page of the file), and checks that the history after
// the compacted revision is whole. Every error it returns means the file
// cannot be trusted. The values stay in the file, and each is checked
// against its checksum when it is read.
func scanTx(tx *bolt.Tx, fromHeads bool) (sc scan, err error) {
	name := bucketRevisions
	if fromHeads {
		name = bucketHeads
	}
	meta, revs := tx.Bucket(bucketMeta), tx.Bucket(name)
	if meta == nil && revs == nil && tx.Bucket(bucketRevisions) == nil {
		return sc, nil // created, never written: an empty store
	}
	if meta == nil || revs == nil || tx.Bucket(bucketRevisions) == nil {
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
	faulted := 0 // recs[:faulted] are prefaulted, a chunk at a time (cap may be far more than needed)
	c := revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return sc, fmt.Errorf("bad revision key %x", k)
		}
		rev := int64(binary.BigEndian.Uint64(k))
		var h header
		if fromHeads {
			h, err = decodeHead(rev, v)
		} else if h, err = parseHeader(rev, v); err == nil {
			err = checkTail(h, v[h.size:])
		}
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
		if h.legacy {
			sc.legacy++
		}
		if len(recs) == faulted {
			faulted = min(faulted+1<<14, cap(recs))
			prefault(slabBytes(recs[len(recs):faulted]))
		}
		recs = append(recs, loadedRecord{key: h.key, rev: rev, createRev: h.createRev, at: h.at, deleted: h.kind == recordDelete})
	}
	if len(recs) == 0 && current > compacted || len(recs) > 0 && max(compacted, recs[len(recs)-1].rev) != current {
		return sc, fmt.Errorf("history ends before the current revision %d", current)
	}
	sc.recs = recs
	return sc, nil
}

// build rebuilds the index and the revision log from a scan, inside the
// scan's transaction (the keys are still the file's bytes); it reads
// nothing else from the file. An error means the file cannot be trusted.
func (s *MVCCStore) build(sc scan) error {
	recs := sc.recs
	order := sortByKey(recs)
	// Each key is copied out of the file once, into one string that holds
	// them all; the nodes and their first versions are one allocation
	// each too. (They stay allocated while any key of the load lives.)
	nkeys, size := 0, 0
	for j, o := range order {
		if j == 0 || !bytes.Equal(recs[o.i].key, recs[order[j-1].i].key) {
			nkeys++
			size += len(recs[o.i].key)
		}
	}
	arena := make([]byte, 0, size)
	prefault(arena[:size])
	for j, o := range order {
		if j == 0 || !bytes.Equal(recs[o.i].key, recs[order[j-1].i].key) {
			arena = append(arena, recs[o.i].key...)
		}
	}
	// Never written again: one string whose substrings are the keys.
	keys := unsafe.String(unsafe.SliceData(arena), len(arena))
	nodes := make([]treapNode, 0, nkeys)
	versions := make([]version, len(recs))
	s.compacted, s.rev = sc.compacted, sc.current
	s.log = make([]logEntry, sc.current-sc.compacted) // scanTx found exactly these revisions
	prefault(slabBytes(nodes[:nkeys]))
	prefault(slabBytes(versions))
	prefault(slabBytes(s.log))
	for j := 0; j < len(order); {
		key := recs[order[j].i].key
		end := j + 1
		for end < len(order) && bytes.Equal(recs[order[end].i].key, key) {
			end++
		}
		nodes = append(nodes, treapNode{keyEntry: keyEntry{key: keys[:len(key)], versions: versions[j:j:end]}})
		keys = keys[len(key):]
		n := &nodes[len(nodes)-1]
		for _, o := range order[j:end] {
			if err := s.loadRecord(n, recs[o.i]); err != nil {
				return fmt.Errorf("revision %d: %w", recs[o.i].rev, err)
			}
		}
		j = end
	}
	s.index = buildIndex(nodes)
	return nil
}

// sortByKey orders records, given in revision order, by key, then
// revision: that groups each key's versions oldest first and gives the
// keys in index order, with no map and no second sort (buildIndex). It
// returns the records' indexes in that order.
//
// The sort moves an index and 8 bytes of the key (an integer), not the
// records, and compares integers, not keys: keys sort by their first 8
// bytes, then each run that ties by the next 8, and so on. Keys share
// long prefixes ("/registry/core/configmaps/..."): a run where all tie
// costs one pass, as the sort finds it already in order.
func sortByKey(recs []loadedRecord) []keyOrder {
	order := make([]keyOrder, len(recs))
	prefault(slabBytes(order))
	for i := range order {
		order[i].i = uint32(i)
	}
	sortRun(order, recs, 0)
	return order
}

// keyOrder is one record as sortByKey sorts it.
type keyOrder struct {
	chunk uint64 // 8 bytes of the key from the run's depth, zero-padded
	i     uint32 // the record's index: its revision order
}

func sortRun(run []keyOrder, recs []loadedRecord, depth int) {
	for j := range run {
		key := recs[run[j].i].key
		if depth+8 <= len(key) {
			run[j].chunk = binary.BigEndian.Uint64(key[depth:])
			continue
		}
		var b [8]byte
		if depth < len(key) {
			copy(b[:], key[depth:])
		}
		run[j].chunk = binary.BigEndian.Uint64(b[:])
	}
	slices.SortFunc(run, func(a, b keyOrder) int {
		if a.chunk != b.chunk {
			return cmp.Compare(a.chunk, b.chunk)
		}
		return cmp.Compare(a.i, b.i)
	})
	for start := 0; start < len(run); {
		end, longer := start, false
		for ; end < len(run) && run[end].chunk == run[start].chunk; end++ {
			longer = longer || len(recs[run[end].i].key) > depth+8
		}
		switch {
		case end-start == 1:
		case longer:
			sortRun(run[start:end], recs, depth+8)
		default:
			// The keys end in these 8 bytes and tie with the padding: the
			// shorter ("k" before "k\x00"), and one key's versions by revision.
			slices.SortFunc(run[start:end], func(a, b keyOrder) int {
				if c := cmp.Compare(len(recs[a.i].key), len(recs[b.i].key)); c != 0 {
					return c
				}
				return cmp.Compare(a.i, b.i)
			})
		}
		start = end
	}
}

// slabBytes is the memory of s, for prefault.
func slabBytes[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), uintptr(len(s))*unsafe.Sizeof(s[0]))
}

// loadedRecord is a record's header as scanTx gathers it.
type loadedRecord struct {
	key            []byte // the file's bytes: valid in the scan's transaction only
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
func buildIndex(sorted []treapNode) keyIndex {
	var stack []*treapNode // the rightmost path, priorities falling
	for i := range sorted {
		n := &sorted[i]
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
