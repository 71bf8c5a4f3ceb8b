package storage

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"sort"
	"sync"
	"unsafe"

	bolt "go.etcd.io/bbolt"
)

// scan is what the load reads from the file: every record's header, in
// two halves by revision each ordered by key, and the meta revisions.
type scan struct {
	recs               []loadedRecord // indexed by sorted; may hold unused (zero) entries
	sorted             [2][]keyOrder  // each half by key, then revision (sortByKey); the first's revisions precede the second's
	current, compacted int64
	legacy             int // records still in the format without checksums
}

// records is how many records the scan found.
func (sc *scan) records() int { return len(sc.sorted[0]) + len(sc.sorted[1]) }

// scanTx reads the meta revisions and every record's header, from bucket
// "heads" when fromHeads is set (a few pages) or else from the records
// themselves (every page of the file), copies the keys out of the file,
// checks that the history after the compacted revision is whole, and
// orders the records by key in two halves. Every error it returns means
// the file cannot be trusted, and is the one that reading the records one
// by one in revision order would meet first. The values stay in the file,
// and each is checked against its checksum when it is read.
//
// The halves are the records of the lower and of the upper half of the
// revisions, each read and then sorted by key on its own goroutine (build
// merges them). On the 2-core VM the first read of each page of the file
// costs about 10 µs even when the page is mapped: two readers halve that
// as well as the work.
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
	// may make us allocate; each half holds at most the revisions it spans.
	total := uint64(min(current, tx.Size()/32))
	c := revs.Cursor()
	first, _ := c.First()
	last, _ := c.Last()
	var halves [2]scanHalf
	halves[0].capacity = total
	if len(first) == 8 && len(last) == 8 {
		lo, hi := binary.BigEndian.Uint64(first), binary.BigEndian.Uint64(last)
		if mid := lo + (hi-lo)/2 + 1; lo < hi { // hi-lo+1 may overflow; mid does not
			halves[0].stop = binary.BigEndian.AppendUint64(nil, mid)
			halves[0].capacity = min(mid-lo, total)
			halves[1].start, halves[1].capacity = halves[0].stop, min(hi-mid+1, total)
		}
	}
	recs := make([]loadedRecord, halves[0].capacity+halves[1].capacity)
	order := alignedSlab[keyOrder](len(recs))
	halves[1].base = int(halves[0].capacity)
	for i := range halves {
		h := &halves[i]
		h.recs = recs[h.base : h.base+int(h.capacity)]
		h.order = order[h.base : h.base+int(h.capacity)]
	}
	// Prefaulted here (madvise calls on two cores at once cost more than
	// they save), in one piece when it is small enough: more of it in
	// 2 MiB pages.
	if len(recs) <= 2*perChunk {
		prefault(slabBytes(recs))
		prefault(slabBytes(order[:cap(order)]))
		halves[0].faulted, halves[1].faulted = len(halves[0].recs), len(halves[1].recs)
	} else {
		halves[0].prefault()
		halves[1].prefault()
	}
	halves[0].newKeyChunk(0)
	halves[1].newKeyChunk(0)
	var wg sync.WaitGroup
	if halves[1].start != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			halves[1].read(revs, fromHeads, current, compacted, recs)
		}()
	}
	halves[0].read(revs, fromHeads, current, compacted, recs)
	wg.Wait()
	a, b := &halves[0], &halves[1]
	if a.err != nil {
		return sc, a.err
	}
	// The first record of the second half follows the last of the first:
	// checked here, after its own checks, as a reading in order would.
	if b.n > 0 {
		if rev := b.recs[0].rev; rev > compacted {
			prev := compacted
			if a.n > 0 {
				prev = max(prev, a.recs[a.n-1].rev)
			}
			if rev != prev+1 {
				return sc, fmt.Errorf("revision %d: history gap: expected revision %d", rev, prev+1)
			}
		}
	}
	if b.err != nil {
		return sc, b.err
	}
	n := a.n + b.n
	lastRev := compacted
	if b.n > 0 {
		lastRev = max(lastRev, b.recs[b.n-1].rev)
	} else if a.n > 0 {
		lastRev = max(lastRev, a.recs[a.n-1].rev)
	}
	if n == 0 && current > compacted || n > 0 && lastRev != current {
		return sc, fmt.Errorf("history ends before the current revision %d", current)
	}
	sc.legacy = a.legacy + b.legacy
	sc.recs, sc.sorted = recs, [2][]keyOrder{a.order[:a.n], b.order[:b.n]}
	return sc, nil
}

// scanHalf is the part of the records one goroutine of scanTx reads: the
// revisions from start (nil: the first) to before stop (nil: the last).
// recs and order are its part of scanTx's slabs, at index base; it fills
// n of them.
type scanHalf struct {
	start, stop []byte
	capacity    uint64
	base        int
	recs        []loadedRecord
	order       []keyOrder
	n, legacy   int
	faulted     int    // recs[:faulted] and order[:faulted] are prefaulted
	keys        []byte // the chunk the keys are being copied to
	err         error  // met at record n
}

// keyChunk: the keys a half reads are copied out of the file into chunks
// of up to this size. Sorting and building then read them from a few MiB
// of memory rather than from pages scattered over the file (a third less
// time to sort), and when every key has a single version no other copy is
// needed (build).
const keyChunk = hugePage

// copyKey copies key into the half's chunk of keys. Chunks are never
// written again once a key is in them.
func (h *scanHalf) copyKey(key []byte) []byte {
	if cap(h.keys)-len(h.keys) < len(key) {
		h.newKeyChunk(len(key))
	}
	start := len(h.keys)
	h.keys = append(h.keys, key...)
	return h.keys[start:len(h.keys):len(h.keys)]
}

// newKeyChunk starts a chunk of keys with room for at least need bytes:
// the first sized for 40-byte keys, the next ones twice the last, up to
// keyChunk.
func (h *scanHalf) newKeyChunk(need int) {
	size := min(keyChunk, max(64<<10, int(min(h.capacity, keyChunk/40))*40))
	if h.keys != nil {
		size = min(keyChunk, 2*cap(h.keys))
	}
	h.keys = alignedSlab[byte](max(size, need))[:0]
	prefault(h.keys[:cap(h.keys)])
}

// prefault prefaults the next records of the half (and their entries in
// order), a chunk at a time: its capacity may be far more than it needs.
func (h *scanHalf) prefault() {
	end := min(h.faulted+perChunk, len(h.recs))
	prefault(slabBytes(h.recs[h.faulted:end]))
	prefault(slabBytes(h.order[h.faulted:end]))
	h.faulted = end
}

// perChunk: a half's records are prefaulted 4 MiB at a time.
const perChunk = (4 << 20) / int(unsafe.Sizeof(loadedRecord{}))

// read reads the half's records, checking each as scanTx says except for
// the history gap before its first (scanTx checks that), then sorts them
// by key. A fault while reading the mapped file is its error: the fault
// protection is per goroutine.
func (h *scanHalf) read(revs *bolt.Bucket, fromHeads bool, current, compacted int64, all []loadedRecord) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			h.err = fmt.Errorf("reading it failed: %v", v)
		}
	}()
	if h.err = h.scan(revs, fromHeads, current, compacted); h.err != nil {
		return
	}
	sortByKey(h.order[:h.n], all, h.base)
}

func (h *scanHalf) scan(revs *bolt.Bucket, fromHeads bool, current, compacted int64) error {
	c := revs.Cursor()
	var k, v []byte
	if h.start == nil {
		k, v = c.First()
	} else {
		k, v = c.Seek(h.start)
	}
	for ; k != nil && (h.stop == nil || bytes.Compare(k, h.stop) < 0); k, v = c.Next() {
		if len(k) != 8 {
			return fmt.Errorf("bad revision key %x", k)
		}
		rev := int64(binary.BigEndian.Uint64(k))
		var hd header
		var err error
		if fromHeads {
			hd, err = decodeHead(rev, v)
		} else if hd, err = parseHeader(rev, v); err == nil {
			err = checkTail(hd, v[hd.size:])
		}
		if err != nil {
			return fmt.Errorf("revision %d: %w", rev, err)
		}
		if rev > current || rev <= 0 {
			return fmt.Errorf("revision %d: outside (0, %d]", rev, current)
		}
		// Revision keys come sorted and unique, so the history after the
		// compacted revision is whole when each one follows the last.
		if h.n > 0 && rev > compacted {
			if last := max(compacted, h.recs[h.n-1].rev); rev != last+1 {
				return fmt.Errorf("revision %d: history gap: expected revision %d", rev, last+1)
			}
		}
		if hd.legacy {
			h.legacy++
		}
		if h.n == h.faulted {
			if h.n == len(h.recs) { // cannot happen: unique revisions in (0, current], 32 bytes each
				return fmt.Errorf("revision %d: more records than the file can hold", rev)
			}
			h.prefault()
		}
		h.recs[h.n] = loadedRecord{key: h.copyKey(hd.key), rev: rev, createRev: hd.createRev, at: hd.at, deleted: hd.kind == recordDelete}
		h.n++
	}
	return nil
}

// build rebuilds the index and the revision log from a scan; it reads
// nothing from the file. An error means the file cannot be trusted; it is
// the first in key order.
//
// The keys are cut in two ranges where one key ends, near the middle, and
// each range is merged from the two sorted halves and built on its own
// goroutine, its treap too; the two treaps are then joined. Memory is
// allocated (and prefaulted) between those steps, on one goroutine: on
// the 2-core VM madvise calls on two cores of one process at once cost
// more than they save.
func (s *MVCCStore) build(sc scan) error {
	recs, a, b := sc.recs, sc.sorted[0], sc.sorted[1]
	ca, cb := cutByKey(a, b, recs)
	order := alignedSlab[keyOrder](sc.records())
	versions := make([]version, len(order))
	s.compacted, s.rev = sc.compacted, sc.current
	entries := s.log.preallocate(int(sc.current - sc.compacted)) // scanTx found exactly these revisions
	prefault(slabBytes(order[:cap(order)]))
	prefault(slabBytes(versions))
	prefault(slabBytes(entries))
	parts := [2]keyRange{
		{a: a[:ca], b: b[:cb], order: order[:ca+cb], versions: versions[:ca+cb]},
		{a: a[ca:], b: b[cb:], order: order[ca+cb:], versions: versions[ca+cb:]},
	}
	inParallel(&parts, func(r *keyRange) { r.merge(recs) })
	// A key with a single version keeps the bytes scanTx copied it to;
	// when some key has several, each is copied once more, so that the
	// copies of its versions are not kept.
	copyKeys := parts[0].nkeys+parts[1].nkeys < len(order)
	for i := range parts {
		r := &parts[i]
		if copyKeys {
			r.arena = alignedSlab[byte](r.size)
			prefault(r.arena) // kept: no more than it needs
		}
		r.nodes = make([]treapNode, r.nkeys)
		prefault(slabBytes(r.nodes))
	}
	inParallel(&parts, func(r *keyRange) {
		if s.fill(r, recs, copyKeys); r.err == nil {
			r.root = buildTreap(r.nodes)
		}
	})
	for _, r := range parts {
		if r.err != nil {
			return r.err
		}
	}
	s.index = keyIndex{root: joinTreaps(parts[0].root, parts[1].root), size: len(parts[0].nodes) + len(parts[1].nodes)}
	return nil
}

// inParallel runs fn on both ranges, the second on another goroutine.
func inParallel(parts *[2]keyRange, fn func(r *keyRange)) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		fn(&parts[1])
	}()
	fn(&parts[0])
	wg.Wait()
}

// cutByKey returns where to cut halves a and b, each sorted by key, so
// that every key before the cuts is before every key after them: at the
// first version of the middle key of the longer one.
func cutByKey(a, b []keyOrder, recs []loadedRecord) (ca, cb int) {
	long := a
	if len(b) > len(a) {
		long = b
	}
	if len(long) == 0 {
		return 0, 0
	}
	key := recs[long[len(long)/2].i].key
	before := func(h []keyOrder) int {
		return sort.Search(len(h), func(j int) bool { return bytes.Compare(recs[h[j].i].key, key) >= 0 })
	}
	return before(a), before(b)
}

// keyRange is one of build's two ranges of keys: its records in each half
// of the scan, merged into order, and what build makes of them.
type keyRange struct {
	a, b        []keyOrder
	order       []keyOrder
	nkeys, size int // keys, and their bytes
	arena       []byte
	nodes       []treapNode
	root        *treapNode // the treap of nodes
	versions    []version
	err         error
}

// merge merges the range's records from the two halves into order (each
// sorted by key then revision; every revision in a precedes those in b),
// and counts its keys and their bytes.
func (r *keyRange) merge(recs []loadedRecord) {
	a, b, out := r.a, r.b, r.order
	i, j := 0, 0
	var last []byte
	for k := range out {
		if j == len(b) || i < len(a) && bytes.Compare(recs[a[i].i].key, recs[b[j].i].key) <= 0 {
			out[k] = a[i]
			i++
		} else {
			out[k] = b[j]
			j++
		}
		if key := recs[out[k].i].key; k == 0 || !bytes.Equal(key, last) {
			r.nkeys++
			r.size += len(key)
			last = key
		}
	}
}

// fill makes the range's nodes and log entries. A key's string is the
// bytes scanTx copied it to, or with copyKeys a copy in the range's arena,
// one string that holds each key once (its bytes are written here, before
// anything reads them, and never again). Chunks of keys and arenas, like
// the nodes and the versions, stay allocated while any key in them lives.
func (s *MVCCStore) fill(r *keyRange, recs []loadedRecord, copyKeys bool) {
	keys := unsafe.String(unsafe.SliceData(r.arena), len(r.arena))
	order, at := r.order, 0
	for j, k := 0, 0; j < len(order); k++ {
		key := recs[order[j].i].key
		end := j + 1
		for end < len(order) && bytes.Equal(recs[order[end].i].key, key) {
			end++
		}
		n := &r.nodes[k]
		n.versions = r.versions[j:j:end]
		if !copyKeys {
			n.key = unsafe.String(unsafe.SliceData(key), len(key))
		} else {
			copy(r.arena[at:], key)
			n.key = keys[at : at+len(key)]
			at += len(key)
		}
		for _, o := range order[j:end] {
			if err := s.loadRecord(n, recs[o.i]); err != nil {
				r.err = fmt.Errorf("revision %d: %w", recs[o.i].rev, err)
				return
			}
		}
		j = end
	}
}

// sortByKey orders records by key, then revision: that groups each key's
// versions oldest first and gives the keys in index order, with no map
// and no second sort (buildIndex). order gets the indexes in recs of the
// records it holds, base onwards, which are in revision order, and is
// sorted.
//
// The sort moves an index and 8 bytes of the key (an integer), not the
// records, and compares integers, not keys: keys sort by their first 8
// bytes, then each run that ties by the next 8, and so on. Keys share
// long prefixes ("/registry/core/configmaps/..."): the bytes all keys of
// a run share are skipped in one pass.
func sortByKey(order []keyOrder, recs []loadedRecord, base int) {
	for j := range order {
		order[j].i = uint32(base + j)
	}
	sortRun(order, recs, 0)
}

// keyOrder is one record as sortByKey sorts it.
type keyOrder struct {
	chunk uint64 // 8 bytes of the key from the run's depth, zero-padded
	i     uint32 // the record's index: its revision order
}

func sortRun(run []keyOrder, recs []loadedRecord, depth int) {
	// Bytes every key of the run shares from depth on are skipped at once
	// rather than 8 at a time, a pass over the run each.
	if len(run) > 1 {
		first := recs[run[0].i].key
		shared := len(first) - min(depth, len(first))
		for _, o := range run[1:] {
			if shared = min(shared, commonPrefix(first[min(depth, len(first)):], recs[o.i].key[min(depth, len(recs[o.i].key)):])); shared == 0 {
				break
			}
		}
		depth += shared
	}
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

// commonPrefix is the length of the longest prefix a and b share.
func commonPrefix(a, b []byte) int {
	n, i := min(len(a), len(b)), 0
	for ; i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]); i += 8 {
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// hugePage is the size of a large page (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// alignedSlab returns n zero Ts that start on a hugePage boundary, for
// prefault to back with large pages; its capacity runs to the end of the
// large page holding the last. It takes up to two large pages more address
// space (one when n fills its large pages), never touched: T must hold no
// pointers, so that the collector does not read them either. Under half a
// large page it is an ordinary allocation.
func alignedSlab[T any](n int) []T {
	size := int(unsafe.Sizeof(*new(T)))
	per := hugePage / size // hugePage is a multiple of the sizes used here
	if n < per/2 {
		return make([]T, n)
	}
	whole := (n + per - 1) / per * per
	s := make([]T, whole+per-1)
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	skip := int(((addr+hugePage-1)&^(hugePage-1) - addr) / uintptr(size))
	return s[skip : skip+n : skip+whole]
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
	key            []byte // a copy of the file's bytes (scanHalf.copyKey)
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
			e.ev.PrevRevision = n.versions[len(n.versions)-1].modRev
		}
		*s.log.at(int(r.rev - s.compacted - 1)) = e
	}
	n.versions = append(n.versions, v)
	return nil
}

// buildIndex makes the treap of nodes, sorted by key, in O(n): with keys
// in order, a stack builds the tree whose priorities (drawn here) are
// heap-ordered, the treap that inserting them one by one would give; the
// live counts are then summed bottom-up.
func buildIndex(sorted []treapNode) keyIndex {
	return keyIndex{root: buildTreap(sorted), size: len(sorted)}
}

// buildTreap is buildIndex's treap, its root.
func buildTreap(sorted []treapNode) *treapNode {
	var stack []*treapNode // the rightmost path, priorities falling
	for i := range sorted {
		stack = push(stack, &sorted[i])
	}
	if len(stack) == 0 {
		return nil
	}
	countLive(stack[0])
	return stack[0]
}

// joinTreaps joins two treaps, every key of l before every key of r,
// into the one treap their nodes and priorities make, in O(depth).
func joinTreaps(l, r *treapNode) *treapNode {
	switch {
	case l == nil:
		return r
	case r == nil:
		return l
	case l.prio > r.prio:
		l.right = joinTreaps(l.right, r)
		l.recount()
		return l
	default:
		r.left = joinTreaps(l, r.left)
		r.recount()
		return r
	}
}

// push adds n, the greatest key yet, to the treap whose rightmost path is
// stack, and returns the new rightmost path.
func push(stack []*treapNode, n *treapNode) []*treapNode {
	n.prio = rand.Uint64()
	var last *treapNode
	for len(stack) > 0 && stack[len(stack)-1].prio < n.prio {
		last, stack = stack[len(stack)-1], stack[:len(stack)-1]
	}
	n.left = last
	if len(stack) > 0 {
		stack[len(stack)-1].right = n
	}
	return append(stack, n)
}

// countLive sets the live counts of a subtree whose counts are unset.
func countLive(n *treapNode) int {
	if n == nil {
		return 0
	}
	n.live = countLive(n.left) + countLive(n.right) + selfLive(n)
	return n.live
}
