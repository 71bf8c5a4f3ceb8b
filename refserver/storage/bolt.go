package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// File layout. Bucket "revisions" maps an 8-byte big-endian revision to the
// write made at it; it holds exactly the versions the in-memory index keeps
// (the uncompacted log plus, for each live key, its value as of the
// compacted revision). Bucket "meta" holds the current and compacted
// revisions. Previous values (PrevValue, a deletion's Value) are not stored:
// they are the key's preceding version, rebuilt at load. record.go has the
// record format.
var (
	bucketRevisions = []byte("revisions")
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
// An existing file is first opened read-only and checked whole: bbolt's
// own consistency check, the file's length against its pages, and every
// record with its checksums. Only a file that passes is opened read-write,
// so a file that is refused is left byte for byte as it was. A missing file
// is created; an empty (0-byte) one is refused with ErrEmptyFile unless
// Options.AllowEmptyFile is set, because it usually means the data is gone.
// A value that fails its checksum does not stop the open: reads of that key
// at that revision fail with ErrCorrupt. Records written before checksums
// existed are rewritten with them, and Options.Logf says so.
func OpenBolt(path string, opts Options) (*MVCCStore, error) {
	s := newStore(opts)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("storage: %w", err)
	case info.Size() == 0 && !opts.AllowEmptyFile:
		return nil, fmt.Errorf("storage: %s: %w", path, ErrEmptyFile)
	case info.Size() > 0:
		if err := s.loadChecked(path, info.Size()); err != nil {
			return nil, fmt.Errorf("storage: %s: %w (the file was left unchanged: restore it from a backup, or move it away to start an empty store)", path, err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	if err := s.prepareFile(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("storage: %s: %w", path, err)
	}
	s.persist = &boltPersister{db: db}
	if err := s.ApplyRetention(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: compact %s: %w", path, err)
	}
	s.startSweep()
	return s, nil
}

// loadChecked validates the file read-only and loads it. A fault while
// reading the mapped file (pages the file does not have) is caught and
// reported as damage instead of crashing the process.
func (s *MVCCStore) loadChecked(path string, size int64) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer pauseGC()()
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%w: reading it failed: %v", ErrDamaged, v)
		}
	}()
	db, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second, MmapFlags: checkMmapFlags})
	if errors.Is(err, berrors.ErrTimeout) {
		return errors.New("the file is locked by another process")
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		if tx.Size() > size {
			return fmt.Errorf("%w: the file is %d bytes but its pages need %d (truncated)", ErrDamaged, size, tx.Size())
		}
		sc, err := scanTx(tx)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		// bbolt's check walks every page from another goroutine, which a
		// fault would crash: the scan above has already read every page it
		// reaches from ours. It runs while the index is built from the
		// scan, which reads nothing from the file.
		checked := tx.Check()
		err = s.build(sc)
		var first error
		for e := range checked {
			if first == nil {
				first = e
			}
		}
		if first != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, first)
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		s.legacy = sc.legacy
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

// prepareFile makes a validated (or new) file ready for writes: it creates
// the buckets of a new file and adds checksums to records written by an
// earlier version, in one transaction.
func (s *MVCCStore) prepareFile(db *bolt.DB) error {
	legacy := s.legacy
	s.legacy = nil
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketRevisions, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		revs := tx.Bucket(bucketRevisions)
		for _, rev := range legacy {
			r, err := decodeRecord(rev, revs.Get(revKey(rev)))
			if err != nil {
				return fmt.Errorf("revision %d: %w", rev, err)
			}
			e := logEntry{ev: Event{Type: EventPut, Key: r.key, Value: r.value, Revision: rev}, createRev: r.createRev, at: r.at}
			if r.kind == recordDelete {
				e.ev.Type = EventDelete
			}
			if err := revs.Put(revKey(rev), encodeRecord(&e)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && len(legacy) > 0 {
		s.opts.Logf("storage: %s: added checksums to %d records written by an earlier version", db.Path(), len(legacy))
	}
	return err
}

type boltPersister struct{ db *bolt.DB }

func (p *boltPersister) commit(rec *logEntry, drops []int64, compacted int64) error {
	return p.db.Update(func(tx *bolt.Tx) error {
		revs, meta := tx.Bucket(bucketRevisions), tx.Bucket(bucketMeta)
		for _, r := range drops {
			if err := revs.Delete(revKey(r)); err != nil {
				return err
			}
		}
		if rec != nil {
			revs.FillPercent = 1 // revisions only ever append
			if err := revs.Put(revKey(rec.ev.Revision), encodeRecord(rec)); err != nil {
				return err
			}
			if err := meta.Put(metaCurrent, revKey(rec.ev.Revision)); err != nil {
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

func (p *boltPersister) close() error { return p.db.Close() }

func revKey(rev int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(rev)) }
