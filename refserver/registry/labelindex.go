package registry

import (
	"context"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/apiconform/apiconform/refserver/storage"
)

// labelIndex lets a list whose label selector has an equality requirement
// (k=v, k==v, k in (a,b)) visit only the objects that can match, instead of
// every object of the collection (issue #17).
//
// # Design
//
// Per kind (collection prefix) and namespace, an inverted index maps each
// label key=value to the keys carrying it. It lives in the registry, not in
// storage: the store knows bytes, and the index must read labels exactly
// as the list's matching reads them (labelcache.go's parse). It sees every
// write because the registry's store is wrapped (indexedStore below), so
// writes that bypass commit (namespace and CRD cleanup, admin endpoints)
// are seen too (the registry must be its store's only writer, as in the
// server: another registry's writes to the same store would be unseen).
// The store gives the list its snapshot: storage's
// ListOptions.Candidates asks the index for keys under the store's read
// lock, once the revision R of the read is known, so no write commits
// between the question and the read.
//
// The index answers with a SUPERSET of the keys matching at R; every
// candidate is still checked against its labels at R as a scan checks it,
// so items, limit, continue and resourceVersion come out as a scan's.
// Soundness rests on three rules:
//
//   - Additions come first: a write adds its new labels (as a pending
//     contribution) before the store commits it, so any revision the
//     store can read has its labels indexed.
//   - Removals come after, and are dated: a key leaves a label's list
//     only once the write replacing (or deleting) the version carrying it
//     has committed, or failed; the index then records removedAt, the
//     newest revision from which the key's entry is complete again. Each
//     key is counted once per version contributing a label (committed
//     version and writes in flight), so writes of one key ending in any
//     order leave the labels of its newest version. A list at R uses the
//     index only when R >= removedAt: a latest read always can; a list at
//     an older exact revision or continuing an old snapshot falls back to
//     the scan when labels were removed since.
//   - A kind is indexed only from the first list that could use it: from
//     then on writes are tracked (tracking), and one scan of the whole
//     collection under the store's read lock (build) merges what was
//     stored before, including what an earlier process wrote. The index
//     serves only when that build is done and every write that began
//     before tracking has ended (untracked == 0), and only at revisions at
//     or after the build's (removedAt starts there).
//
// The index is used only for the kind's storage version, where the stored
// labels are the labels matched (a conversion may change labels).
//
// # Memory
//
// The index holds at most labelIndexSize keys over every kind (the label
// cache's entry count); a kind that would grow past it stops being indexed
// for the rest of the process (its lists scan, as before). Objects without
// labels take no entry. Per key: an entry in the kind's key map, one slot
// per label in its namespace's postings, and the labels, the same slice
// the label cache holds for the key's revision (a write gives it to both).
// Measured: 30,000 configmaps with two labels each, created through the
// registry, take 6 MB more heap with their kind indexed than without
// (about 200 bytes a key), so about 6.5 MB at the bound, plus ~100 bytes a
// key for labels the label cache has dropped. 100,000 objects of one kind
// exceed the bound: that kind's index is dropped and its lists scan
// (indexing them would cost about 20 MB and 10 MB more of labels).
type labelIndex struct {
	mu    sync.Mutex
	kinds map[string]*kindIndex // by collection prefix (basePrefix)
	size  int                   // keys held over every kind
	max   int
	// served and declined count the lists the index answered and those it
	// left to the scan (tests check that both paths ran).
	served, declined int
}

// scanOnlyKey in a list's context makes it scan as if there were no index
// (tests compare the two paths).
type scanOnlyKey struct{}

// labelIndexSize bounds the keys the index holds (see Memory above).
const labelIndexSize = labelCacheSize

type kindIndex struct {
	tracking  bool  // writes are indexed
	building  bool  // a build is under way
	built     bool  // the collection as stored before tracking is merged
	off       bool  // grew past the bound: never indexed again
	untracked int   // writes in flight that began before tracking
	removedAt int64 // the index is complete for reads at or after this revision
	keys      map[string]*indexedKey
	spaces    map[string]map[labelPair]*posting // namespace ("" for cluster-scoped) → label → keys
}

type labelPair struct{ key, value string }

// indexedKey is what the index knows of one key: the labels of its newest
// committed version known, and how many writes of it are in flight (each
// holds its own labels in the index until it ends).
type indexedKey struct {
	rev     int64
	labels  compactLabels
	pending int
}

// posting is the keys carrying one label, each counted once per version
// (committed or in flight) carrying it.
type posting struct {
	keys   map[string]int32
	sorted []string // keys in order, never modified once built; nil when stale
}

func (p *posting) sortedKeys() []string {
	if p.sorted == nil {
		s := make([]string, 0, len(p.keys))
		for k := range p.keys {
			s = append(s, k)
		}
		slices.Sort(s)
		p.sorted = s
	}
	return p.sorted
}

func newLabelIndex() *labelIndex {
	return &labelIndex{kinds: map[string]*kindIndex{}, max: labelIndexSize}
}

// splitKey returns the collection prefix of a registry key
// (/registry/<group>/<resource>/) and its namespace ("" for a
// cluster-scoped key).
func splitKey(key string) (prefix, ns string, ok bool) {
	slashes := 0
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		if slashes++; slashes == 4 {
			prefix = key[:i+1]
			rest := key[i+1:]
			if j := strings.IndexByte(rest, '/'); j >= 0 {
				ns = rest[:j]
			}
			return prefix, ns, strings.HasPrefix(key, "/registry/")
		}
	}
	return "", "", false
}

// indexWrite is one write in flight, from begin to end.
type indexWrite struct {
	ki      *kindIndex
	key     string
	value   []byte        // the value written (nil for a delete)
	known   knownLabels   // the value's labels when the writer gave them
	labels  compactLabels // tracked: the labels added at begin
	tracked bool
}

// knownLabels are the labels of a value being written when the writer
// knows them without parsing the value (ok false: parse it).
type knownLabels struct {
	set compactLabels
	ok  bool
}

// begin registers a write of key (value nil: a delete) before it goes to
// the store; end must follow with its outcome.
func (ix *labelIndex) begin(key string, value []byte, kl knownLabels) *indexWrite {
	prefix, _, ok := splitKey(key)
	if !ok {
		return nil
	}
	ix.mu.Lock()
	ki := ix.kinds[prefix]
	if ki == nil {
		ki = &kindIndex{}
		ix.kinds[strings.Clone(prefix)] = ki
	}
	if ki.off {
		ix.mu.Unlock()
		return nil
	}
	w := &indexWrite{ki: ki, key: key, value: value, known: kl}
	if !ki.tracking {
		ki.untracked++
		ix.mu.Unlock()
		return w
	}
	w.tracked = true
	if value == nil || kl.ok {
		// Nothing to parse: one critical section.
		defer ix.mu.Unlock()
		e := ix.entryLocked(ki, key)
		if e == nil {
			return nil
		}
		e.pending++
		w.labels = kl.set
		ki.addLocked(key, w.labels, +1)
		return w
	}
	// Reserve the key (it stays while the write is in flight), then
	// parse outside the lock: nothing reads the labels before the commit.
	e := ix.entryLocked(ki, key)
	if e == nil {
		ix.mu.Unlock()
		return nil
	}
	e.pending++
	ix.mu.Unlock()
	if w.labels, ok = labelsOf(value, kl); !ok {
		ix.mu.Lock()
		ix.dropLocked(ki)
		ix.mu.Unlock()
		return nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ki.off {
		ki.addLocked(key, w.labels, +1)
	}
	return w
}

// end records the outcome of w: committed at rev when ok.
func (ix *labelIndex) end(w *indexWrite, rev int64, ok bool) {
	if w == nil {
		return
	}
	ki := w.ki
	if !w.tracked {
		// Begun before tracking: the labels go in now if tracking has
		// started since (a build that began later read this commit).
		// Labels the writer gave (or a delete's none) need no parse, so
		// no look at tracking outside the critical section either.
		cl, tracking := w.known.set, true
		if ok && w.value != nil && !w.known.ok {
			ix.mu.Lock()
			tracking = ki.tracking && !ki.off
			ix.mu.Unlock()
			if tracking {
				var parsed bool
				if cl, parsed = labelsOf(w.value, w.known); !parsed {
					ix.mu.Lock()
					ix.dropLocked(ki)
					ix.mu.Unlock()
					return
				}
			}
		}
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if ki.off {
			return
		}
		ki.untracked--
		if tracking && ok && ki.tracking {
			ix.applyLocked(ki, w.key, rev, cl)
		}
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ki.off {
		return
	}
	e := ki.keys[w.key]
	e.pending--
	removed := false
	if ok && rev > e.rev {
		old := e.labels
		e.rev, e.labels = rev, w.labels
		ki.addLocked(w.key, e.labels, +1)
		removed = ki.addLocked(w.key, old, -1)
	}
	if ki.addLocked(w.key, w.labels, -1) || removed {
		ki.removedAt = max(ki.removedAt, e.rev)
	}
	ix.releaseLocked(ki, w.key, e)
}

// applyLocked makes (rev, cl) the key's newest committed version unless a
// newer one is known.
func (ix *labelIndex) applyLocked(ki *kindIndex, key string, rev int64, cl compactLabels) {
	e := ki.keys[key]
	if e == nil {
		if len(cl) == 0 {
			return // nothing to index, and nothing was
		}
		if e = ix.entryLocked(ki, key); e == nil {
			return
		}
	}
	if rev <= e.rev {
		ix.releaseLocked(ki, key, e)
		return
	}
	old := e.labels
	e.rev, e.labels = rev, cl
	ki.addLocked(key, cl, +1)
	if ki.addLocked(key, old, -1) {
		ki.removedAt = max(ki.removedAt, rev)
	}
	ix.releaseLocked(ki, key, e)
}

// entryLocked returns key's entry, creating it; nil when that drops the
// kind's index for growing past the bound.
func (ix *labelIndex) entryLocked(ki *kindIndex, key string) *indexedKey {
	if e := ki.keys[key]; e != nil {
		return e
	}
	if ix.size >= ix.max {
		ix.dropLocked(ki)
		return nil
	}
	if ki.keys == nil {
		ki.keys = map[string]*indexedKey{}
	}
	e := &indexedKey{}
	ki.keys[key] = e
	ix.size++
	return e
}

// releaseLocked forgets a key with nothing left to index.
func (ix *labelIndex) releaseLocked(ki *kindIndex, key string, e *indexedKey) {
	if e.pending == 0 && len(e.labels) == 0 {
		delete(ki.keys, key)
		ix.size--
	}
}

// dropLocked stops indexing ki for good: its lists scan from now on.
func (ix *labelIndex) dropLocked(ki *kindIndex) {
	if ki.off {
		return
	}
	ix.size -= len(ki.keys)
	*ki = kindIndex{off: true}
}

// addLocked adds delta to key's count in each of cl's labels; it reports
// whether the key left some label's list.
func (ki *kindIndex) addLocked(key string, cl compactLabels, delta int32) (removed bool) {
	if len(cl) == 0 {
		return false
	}
	_, ns, _ := splitKey(key)
	sp := ki.spaces[ns]
	if sp == nil {
		if delta < 0 {
			return false
		}
		if ki.spaces == nil {
			ki.spaces = map[string]map[labelPair]*posting{}
		}
		sp = map[labelPair]*posting{}
		ki.spaces[ns] = sp
	}
	for i := 0; i+1 < len(cl); i += 2 {
		lp := labelPair{cl[i], cl[i+1]}
		p := sp[lp]
		if delta > 0 {
			if p == nil {
				p = &posting{keys: map[string]int32{}}
				sp[lp] = p
			}
			if p.keys[key] == 0 {
				p.sorted = nil
			}
			p.keys[key] += delta
			continue
		}
		if p == nil {
			continue
		}
		if n := p.keys[key] + delta; n > 0 {
			p.keys[key] = n
			continue
		}
		delete(p.keys, key)
		p.sorted, removed = nil, true
		if len(p.keys) == 0 {
			delete(sp, lp)
		}
	}
	if len(sp) == 0 {
		delete(ki.spaces, ns)
	}
	return removed
}

// indexable returns the requirements of sel the index can answer: k=v,
// k==v and k in (...), each met only by objects carrying one of its labels.
func indexable(sel labels.Selector) []labels.Requirement {
	if sel == nil {
		return nil
	}
	reqs, ok := sel.Requirements()
	if !ok {
		return nil
	}
	var out []labels.Requirement
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			out = append(out, r)
		}
	}
	return out
}

// labelCandidates returns the Candidates hook for a list of the collection
// under prefix with sel, or nil when the list must scan (no equality
// requirement, another version than the stored one, index off). The
// first such list of a kind builds its index.
func (r *Registry) labelCandidates(ctx context.Context, k *Kind, version, prefix string, sel Selector) func(int64) ([]string, bool) {
	ix := r.index
	if ix == nil || !k.storedAsServed(version) || ctx.Value(scanOnlyKey{}) != nil {
		return nil
	}
	reqs := indexable(sel.Labels)
	if len(reqs) == 0 {
		return nil
	}
	base := basePrefix(k)
	ix.mu.Lock()
	ki := ix.kinds[base]
	if ki == nil {
		ki = &kindIndex{}
		ix.kinds[base] = ki
	}
	if ki.off {
		ix.mu.Unlock()
		return nil
	}
	ki.tracking = true
	build := !ki.built && !ki.building
	ki.building = ki.building || build
	ix.mu.Unlock()
	if build {
		r.buildLabelIndex(ctx, ki, base)
	}
	return func(rev int64) ([]string, bool) {
		return ix.candidates(ki, base, prefix, reqs, rev)
	}
}

// buildLabelIndex merges the collection as stored into ki. The merge runs
// in the list's Filter, under the store's read lock: no write commits
// during it, so no write newer than the build can have ended before the
// merge of its key.
func (r *Registry) buildLabelIndex(ctx context.Context, ki *kindIndex, base string) {
	ix := r.index
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: base, Filter: func(kv storage.KeyValue) bool {
		sl := r.labels.get(kv)
		ix.mu.Lock()
		defer ix.mu.Unlock()
		if ki.off {
			return false
		}
		if !sl.ok {
			ix.dropLocked(ki)
			return false
		}
		cl, _ := sl.set.(compactLabels)
		ix.applyLocked(ki, kv.Key, kv.ModRevision, cl)
		return false
	}})
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ki.building = false
	if err != nil || ki.off {
		return // the next list tries again (or scans for good)
	}
	ki.removedAt = max(ki.removedAt, res.Revision)
	ki.built = true
}

// candidates answers a list of listPrefix at rev: the sorted keys carrying
// a label of the most selective requirement, or ok false when the index
// cannot answer at rev.
func (ix *labelIndex) candidates(ki *kindIndex, base, listPrefix string, reqs []labels.Requirement, rev int64) ([]string, bool) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ki.off || !ki.built || ki.untracked > 0 || rev < ki.removedAt {
		ix.declined++
		return nil, false
	}
	ix.served++
	var spaces []map[labelPair]*posting
	if rest := listPrefix[len(base):]; rest == "" {
		for _, sp := range ki.spaces {
			spaces = append(spaces, sp)
		}
	} else if sp := ki.spaces[strings.TrimSuffix(rest, "/")]; sp != nil {
		spaces = append(spaces, sp)
	}
	var best []*posting
	bestN := -1
	for _, req := range reqs {
		var ps []*posting
		n := 0
		for _, sp := range spaces {
			for _, v := range req.ValuesUnsorted() {
				if p := sp[labelPair{req.Key(), v}]; p != nil {
					ps = append(ps, p)
					n += len(p.keys)
				}
			}
		}
		if bestN < 0 || n < bestN {
			best, bestN = ps, n
		}
	}
	switch len(best) {
	case 0:
		return nil, true
	case 1:
		return best[0].sortedKeys(), true
	}
	out := make([]string, 0, bestN)
	for _, p := range best {
		out = append(out, p.sortedKeys()...)
	}
	slices.Sort(out)
	return slices.Compact(out), true
}

// writtenLabels are the labels c's object stores, when the stored bytes
// are its own JSON (no conversion on the way to the storage version):
// parsing the stored value costs more than the rest of the index's work on
// a write, and the object's labels are what parsing would give.
func writtenLabels(k *Kind, c *change) knownLabels {
	if c.op != opCreate && c.op != opPut || str(c.obj["apiVersion"]) != k.APIVersion(k.StorageVersion()) {
		return knownLabels{}
	}
	lm, _ := mapOf(c.obj["metadata"])["labels"].(map[string]any)
	return knownLabels{set: newCompactLabels(lm, str), ok: true}
}

// labelsOf returns the labels of value: kl's when known.
func labelsOf(value []byte, kl knownLabels) (compactLabels, bool) {
	if kl.ok {
		return kl.set, true
	}
	sl := parseLabels(value)
	cl, _ := sl.set.(compactLabels)
	return cl, sl.ok
}

// indexedStore is the registry's store: every write goes through the
// label index on its way (begin before the store, end after), leaves its
// labels in the label cache, and, for a namespace, its state in the
// registry's (namespaceStates).
type indexedStore struct {
	storage.Store
	index      *labelIndex
	labels     *labelCache // given the labels a write parsed or took
	namespaces *namespaceStates
}

// written ends w, keeping the labels the index took (or the writer gave)
// for the value in the label cache too (one copy for both).
func (s *indexedStore) written(w *indexWrite, key string, value []byte, kl knownLabels, rev int64, err error) {
	s.index.end(w, rev, err == nil)
	if err != nil || value == nil {
		return
	}
	switch {
	case kl.ok:
		s.labels.put(labelKey{key: key, revision: rev}, storedLabels{set: kl.set, ok: true})
	case w != nil && w.tracked:
		s.labels.put(labelKey{key: key, revision: rev}, storedLabels{set: w.labels, ok: true})
	}
}

func (s *indexedStore) Create(ctx context.Context, key string, value []byte) (int64, error) {
	return s.create(ctx, key, value, knownLabels{})
}

func (s *indexedStore) Update(ctx context.Context, key string, value []byte, expectModRevision int64) (int64, error) {
	return s.update(ctx, key, value, expectModRevision, knownLabels{})
}

func (s *indexedStore) Delete(ctx context.Context, key string, expectModRevision int64) (storage.KeyValue, int64, error) {
	name, isNamespace := s.namespaces.writing(key)
	if isNamespace {
		defer s.namespaces.done()
	}
	w := s.index.begin(key, nil, knownLabels{})
	kv, rev, err := s.Store.Delete(ctx, key, expectModRevision)
	s.index.end(w, rev, err == nil)
	if isNamespace {
		s.namespaces.written(name, nil, err == nil)
	}
	return kv, rev, err
}

// create is Create with the value's labels when the writer knows them.
func (s *indexedStore) create(ctx context.Context, key string, value []byte, kl knownLabels) (int64, error) {
	name, isNamespace := s.namespaces.writing(key)
	if isNamespace {
		defer s.namespaces.done()
	}
	w := s.index.begin(key, value, kl)
	rev, err := s.Store.Create(ctx, key, value)
	s.written(w, key, value, kl, rev, err)
	if isNamespace {
		s.namespaces.written(name, value, err == nil)
	}
	return rev, err
}

// update is Update with the value's labels when the writer knows them.
func (s *indexedStore) update(ctx context.Context, key string, value []byte, expectModRevision int64, kl knownLabels) (int64, error) {
	name, isNamespace := s.namespaces.writing(key)
	if isNamespace {
		defer s.namespaces.done()
	}
	w := s.index.begin(key, value, kl)
	rev, err := s.Store.Update(ctx, key, value, expectModRevision)
	s.written(w, key, value, kl, rev, err)
	if isNamespace {
		s.namespaces.written(name, value, err == nil)
	}
	return rev, err
}
