package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// File layout. Bucket "revisions" maps an 8-byte big-endian revision to the
// write made at it; it holds exactly the versions the in-memory index keeps
// (the uncompacted log plus, for each live key, its value as of the
// compacted revision). Bucket "heads" maps the same revisions to the same
// records' headers alone, so that loading reads a few pages instead of
// every page of values; both are written, and deleted by compaction, in one
// transaction. Bucket "meta" holds the current and compacted revisions.
// Previous values (PrevValue, a deletion's Value) are not stored: they are
// the key's preceding version, rebuilt at load. record.go has the record
// format.
var (
	bucketRevisions = []byte("revisions")
	bucketHeads     = []byte("heads")
	bucketMeta      = []byte("meta")
	metaCurrent     = []byte("current")
	metaCompacted   = []byte("compacted")
)

// OpenBolt opens (or creates) a store persisted in a bbolt file. Reads and
// watches are served by the same in-memory engine as NewMemory; every write
// and compaction is committed to the file (fsync) before it returns, and
// reopening restores keys, values, revisions, the uncompacted history and
// the revision counter.
//
// An existing file is opened read-only and checked whole before anything
// is written to it: bbolt's own consistency check, the file's length
// against its pages, and every record against its header in bucket
// "heads". Only a file that passes is opened read-write, so a file that
// is refused is left byte for byte as it was. To start quickly, OpenBolt
// checks the length and loads the headers (which checks them and the
// history they make), and returns a store that serves reads; the rest of
// the check runs in the background and every write waits for it.
// WaitChecked reports its outcome; when it fails, every write returns the
// same ErrDamaged error. A file that cannot be loaded is refused at once.
//
// A missing file is created; an empty (0-byte) one is refused with
// ErrEmptyFile unless Options.AllowEmptyFile is set, because it usually
// means the data is gone. A value that fails its checksum does not stop
// the open: reads of that key at that revision fail with ErrCorrupt. A
// file written by an earlier version (records without checksums, or no
// bucket "heads") is checked whole before OpenBolt returns, then brought
// up to date in one transaction, and Options.Logf says so.
func OpenBolt(path string, opts Options) (*MVCCStore, error) {
	s, begin, err := OpenBoltDeferred(path, opts)
	if err != nil {
		return nil, err
	}
	begin()
	return s, nil
}

// OpenBoltDeferred is OpenBolt, except that the work a load from bucket
// "heads" leaves for after it returns waits until begin is called: the
// rest of the check, and garbage collection, which the load pauses (a
// collection right after it would mark the whole loaded heap). A server
// calls begin once it serves, so that neither competes with its start-up
// for the CPU. The first write, WaitChecked and Close call it too, so the
// check cannot be left waiting; begin may be called more than once.
func OpenBoltDeferred(path string, opts Options) (_ *MVCCStore, begin func(), err error) {
	s := newStore(opts)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, nil, fmt.Errorf("storage: %w", err)
	case info.Size() == 0 && !opts.AllowEmptyFile:
		return nil, nil, fmt.Errorf("storage: %s: %w", path, ErrEmptyFile)
	case info.Size() > 0:
		// Writes wait for the check, so a file they could not write must
		// fail now, not after the store is serving.
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("storage: %w", err)
		}
		f.Close()
		resumeGC := pauseGC()
		db, err := s.loadChecked(path, info.Size())
		if err != nil || db == nil {
			resumeGC()
		}
		if err != nil {
			return nil, nil, refused(path, err)
		}
		if db != nil { // loaded from bucket "heads": check the rest in the background
			p := &boltPersister{path: path, db: db, checked: make(chan struct{}), begun: make(chan struct{})}
			p.begin = sync.OnceFunc(func() {
				close(p.begun)
				resumeGC()
			})
			s.persist = p
			s.bg.Add(1)
			go s.checkInBackground(p)
			s.startSweep()
			return s, p.begin, nil
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	if err := s.prepareFile(db); err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("storage: %s: %w", path, err)
	}
	s.persist = &boltPersister{path: path, db: db, checked: closedChan, begin: func() {}}
	if err := s.ApplyRetention(); err != nil {
		_ = s.Close()
		return nil, nil, fmt.Errorf("storage: compact %s: %w", path, err)
	}
	s.startSweep()
	return s, func() {}, nil
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// refused is the error of a file that fails its checks.
func refused(path string, err error) error {
	return fmt.Errorf("storage: %s: %w (the file was left unchanged: restore it from a backup, or move it away to start an empty store)", path, err)
}

// loadChecked opens the file read-only, checks its length against its
// pages and loads it. A file with bucket "heads" is loaded from it, and
// the read-only handle is returned for reads while checkInBackground
// checks the rest. Any other file (written by an earlier version) is
// checked whole here, as the background check would, and nil is returned.
// A fault while reading the mapped file (pages the file does not have) is
// caught and reported as damage instead of crashing the process.
func (s *MVCCStore) loadChecked(path string, size int64) (_ *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: reading it failed: %v", ErrDamaged, v)
		}
	}()
	db, err := openReadOnly(path, false)
	if err != nil {
		return nil, err
	}
	err = db.View(func(tx *bolt.Tx) error {
		if tx.Size() > size {
			return fmt.Errorf("%w: the file is %d bytes but its pages need %d (truncated)", ErrDamaged, size, tx.Size())
		}
		return nil
	})
	db.Close()
	if err != nil {
		return nil, err
	}
	// Now that the free list is known to be in the file, it is loaded at
	// open: bbolt's check would load it lazily, racing with the read
	// transactions served meanwhile.
	if db, err = openReadOnly(path, true); err != nil {
		return nil, err
	}
	prefaultFile(db.Info().Data, size)
	fromHeads := false
	err = db.View(func(tx *bolt.Tx) error {
		fromHeads = tx.Bucket(bucketHeads) != nil
		sc, err := scanTx(tx, fromHeads)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		if fromHeads {
			if err := s.build(sc); err != nil {
				return fmt.Errorf("%w: %v", ErrDamaged, err)
			}
			return nil
		}
		// bbolt's check walks every page from another goroutine, which a
		// fault would crash: the scan above has already read every page it
		// reaches from ours. It runs while the index is built from the
		// scan, which reads nothing from the file.
		checked := tx.Check()
		err = s.build(sc)
		if first := firstError(checked); first != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, first)
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		s.migrate = sc.legacy > 0 || sc.records() > 0 || sc.current > 0
		return nil
	})
	if err != nil || !fromHeads {
		db.Close()
		return nil, err
	}
	return db, nil
}

func openReadOnly(path string, freelist bool) (*bolt.DB, error) {
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, PreLoadFreelist: freelist, Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, errors.New("the file is locked by another process")
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return db, nil
}

// firstError drains bbolt's check (which must run to its end before its
// transaction may close) and returns the first problem it found.
func firstError(checked <-chan error) error {
	var first error
	for e := range checked {
		if first == nil {
			first = e
		}
	}
	return first
}

// checkInBackground finishes the check of a file loaded from bucket
// "heads": every record must be there with the header "heads" gave, and
// bbolt's check must pass. Then the file is reopened read-write and writes
// proceed; otherwise they fail, and the file is never opened read-write.
func (s *MVCCStore) checkInBackground(p *boltPersister) {
	defer s.bg.Done()
	select {
	case <-p.begun:
	case <-s.stop: // p.check returns at once
	}
	if beforeCheck != nil {
		beforeCheck(s.stop)
	}
	err := p.check(s.stop)
	if err == nil {
		err = p.reopen()
	}
	p.err = err
	close(p.checked)
	if err == nil {
		if err := s.ApplyRetention(); err != nil && !errors.Is(err, ErrClosed) {
			s.opts.Logf("storage: %s: compact: %v", p.path, err) // the sweep retries
		}
	}
}

// beforeCheck, when set, runs before the background check: tests hold
// the check there (until stop is closed, at the latest).
var beforeCheck func(stop <-chan struct{})

// errStopped: the store was closed while its file was being checked.
var errStopped = fmt.Errorf("the check of the file was interrupted: %w", ErrClosed)

// check reads every record through the read-only handle and compares it
// with its entry in bucket "heads", which the load checked (checksum,
// history): a record whose header is the same bytes passes the same
// checks. Then bbolt's check runs. stop ends it early.
func (p *boltPersister) check(stop <-chan struct{}) error {
	err := p.compareHeads(stop)
	if err != nil && !errors.Is(err, ErrClosed) {
		err = refused(p.path, err)
	}
	return err
}

func (p *boltPersister) compareHeads(stop <-chan struct{}) (err error) {
	// The fault protection is per goroutine: this one reads every page
	// bbolt's check will read, as the load does for a file without heads.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: reading it failed: %v", ErrDamaged, v)
		}
	}()
	return p.db.View(func(tx *bolt.Tx) error {
		revs, heads := tx.Bucket(bucketRevisions).Cursor(), tx.Bucket(bucketHeads).Cursor()
		rk, rv := revs.First()
		hk, hv := heads.First()
		for n := 0; rk != nil || hk != nil; n++ {
			if n%256 == 0 {
				select {
				case <-stop:
					return errStopped
				default:
				}
				// Requests first: the check runs for a second or so for
				// 100,000 objects, from the moment the server is ready.
				runtime.Gosched()
			}
			switch c := bytes.Compare(rk, hk); {
			case hk == nil || rk != nil && c < 0:
				return fmt.Errorf("%w: record %x has no header in bucket heads", ErrDamaged, rk)
			case rk == nil || c > 0:
				return fmt.Errorf("%w: revision %d: a header in bucket heads has no record", ErrDamaged, binary.BigEndian.Uint64(hk))
			}
			rev := int64(binary.BigEndian.Uint64(rk))
			if !bytes.HasPrefix(rv, hv) {
				return fmt.Errorf("%w: revision %d: %v: the record's header differs from bucket heads", ErrDamaged, rev, errCorrupt)
			}
			// decodeHead accepted hv at load, so its kind is one of the two.
			if err := checkTail(header{kind: hv[0]}, rv[len(hv):]); err != nil {
				return fmt.Errorf("%w: revision %d: %v", ErrDamaged, rev, err)
			}
			rk, rv = revs.Next()
			hk, hv = heads.Next()
		}
		select {
		case <-stop:
			return errStopped
		default:
		}
		if first := firstError(tx.Check()); first != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, first)
		}
		return nil
	})
}

// gcPause counts the loads running: the first pauses the collector, the
// last resumes it with the setting it found, so loads that overlap (tests
// opening stores in parallel) cannot leave it off.
var gcPause struct {
	sync.Mutex
	loads, percent int
}

// pauseGC stops garbage collection until the returned function is called.
// A load allocates what the store keeps (keys, index, log) and little
// else, so collecting while it runs would only mark the growing heap again
// and again.
func pauseGC() (resume func()) {
	gcPause.Lock()
	defer gcPause.Unlock()
	if gcPause.loads == 0 {
		gcPause.percent = debug.SetGCPercent(-1)
	}
	gcPause.loads++
	return func() {
		gcPause.Lock()
		defer gcPause.Unlock()
		if gcPause.loads--; gcPause.loads == 0 {
			debug.SetGCPercent(gcPause.percent)
		}
	}
}

// prepareFile makes a validated (or new) file ready for writes, in one
// transaction: it creates the buckets of a new file, and brings a file
// written by an earlier version up to date (checksums on every record, and
// bucket "heads").
func (s *MVCCStore) prepareFile(db *bolt.DB) error {
	migrate := s.migrate
	s.migrate = false
	var legacy, added int
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketRevisions, bucketHeads, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		if !migrate {
			return nil
		}
		revs, heads := tx.Bucket(bucketRevisions), tx.Bucket(bucketHeads)
		type write struct{ key, rec, head []byte }
		var writes []write // a bucket must not change under its cursor
		c := revs.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			rev := int64(binary.BigEndian.Uint64(k))
			h, err := parseHeader(rev, v)
			if err != nil {
				return fmt.Errorf("revision %d: %w", rev, err)
			}
			w := write{key: bytes.Clone(k), head: bytes.Clone(v[:h.size])}
			if h.legacy {
				r, err := decodeRecord(rev, v)
				if err != nil {
					return fmt.Errorf("revision %d: %w", rev, err)
				}
				e := logEntry{ev: Event{Type: EventPut, Key: r.key, Value: r.value, Revision: rev}, createRev: r.createRev, at: r.at}
				if r.kind == recordDelete {
					e.ev.Type = EventDelete
				}
				w.rec, w.head = encodeWrite(&e)
				legacy++
			}
			writes = append(writes, w)
		}
		heads.FillPercent = 1 // written in revision order
		for _, w := range writes {
			if w.rec != nil {
				if err := revs.Put(w.key, w.rec); err != nil {
					return err
				}
			}
			if err := heads.Put(w.key, w.head); err != nil {
				return err
			}
		}
		added = len(writes)
		return nil
	})
	if err == nil && legacy > 0 {
		s.opts.Logf("storage: %s: added checksums to %d records written by an earlier version", db.Path(), legacy)
	}
	if err == nil && migrate {
		s.opts.Logf("storage: %s: added bucket heads (the headers of %d records, written by an earlier version), from which later starts load the file", db.Path(), added)
	}
	return err
}

// boltPersister keeps the values in a bbolt file. A store loaded from
// bucket "heads" starts with a read-only handle while checkInBackground
// checks the file; writes wait for checked, and reads take mu so that the
// handle can be swapped for a read-write one under them.
type boltPersister struct {
	path    string
	mu      sync.RWMutex // held by each read transaction; exclusively to swap db
	db      *bolt.DB
	checked chan struct{} // closed once the check has ended
	err     error         // set before checked is closed: why no write may proceed
	begun   chan struct{} // closed by begin: the check may start
	begin   func()        // OpenBoltDeferred's begin
}

// writable waits for the check and returns its verdict.
func (p *boltPersister) writable(ctx context.Context) error {
	p.begin()
	select {
	case <-p.checked: // a verdict known wins over an ended ctx
		return p.err
	default:
	}
	select {
	case <-p.checked:
		return p.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// reopen replaces the read-only handle of a file that passed its check by
// a read-write one; reads in flight finish first, and reads wait meanwhile.
func (p *boltPersister) reopen() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.db.Close(); err != nil {
		return fmt.Errorf("storage: close %s: %w", p.path, err)
	}
	db, err := bolt.Open(p.path, 0o600, &bolt.Options{Timeout: time.Second})
	if err == nil {
		p.db = db
		return nil
	}
	// Go on serving reads, through a read-only handle again.
	p.db, _ = bolt.Open(p.path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	return fmt.Errorf("storage: open %s for writing: %w", p.path, err)
}

func (p *boltPersister) commit(rec *logEntry, drops []int64, compacted int64) error {
	select {
	case <-p.checked: // writers wait for it before they take the store's lock
	default:
		return errors.New("storage: a write before the file was checked")
	}
	if p.err != nil {
		return p.err
	}
	return p.db.Update(func(tx *bolt.Tx) error {
		revs, heads, meta := tx.Bucket(bucketRevisions), tx.Bucket(bucketHeads), tx.Bucket(bucketMeta)
		for _, r := range drops {
			if err := revs.Delete(revKey(r)); err != nil {
				return err
			}
			if err := heads.Delete(revKey(r)); err != nil {
				return err
			}
		}
		if rec != nil {
			revs.FillPercent, heads.FillPercent = 1, 1 // revisions only ever append
			k := revKey(rec.ev.Revision)
			b, head := encodeWrite(rec)
			if err := revs.Put(k, b); err != nil {
				return err
			}
			if err := heads.Put(k, head); err != nil {
				return err
			}
			if err := meta.Put(metaCurrent, k); err != nil {
				return err
			}
		}
		if compacted > 0 {
			return meta.Put(metaCompacted, revKey(compacted))
		}
		return nil
	})
}

// read gives fn the values of one read transaction. bbolt's memory is
// valid only inside it, so each value is copied out (decodeValue).
func (p *boltPersister) read(fn func(get valueGetter) error) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.db == nil { // reopening it failed, which the check's verdict says
		<-p.checked
		return p.err
	}
	return p.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRevisions).Cursor() // one cursor for every read: Bucket.Get makes one each
		var k [8]byte
		return fn(func(key string, rev int64) ([]byte, error) {
			binary.BigEndian.PutUint64(k[:], uint64(rev))
			found, b := c.Seek(k[:])
			if !bytes.Equal(found, k[:]) || b == nil {
				return nil, fmt.Errorf("value of key %q at revision %d: %w", key, rev, ErrCompacted)
			}
			return decodeValue(rev, b, key)
		})
	})
}

// close closes the file; the store has waited for its background work.
func (p *boltPersister) close() error {
	p.begin()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.db == nil {
		return nil
	}
	return p.db.Close()
}

func revKey(rev int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(rev)) }
