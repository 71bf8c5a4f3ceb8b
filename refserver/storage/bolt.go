package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// File layout. Bucket "revisions" maps an 8-byte big-endian revision to the
// write made at it; it holds exactly the versions the in-memory index keeps
// (the uncompacted log plus, for each live key, its value as of the
// compacted revision). Bucket "meta" holds the current and compacted
// revisions. Previous values (PrevValue, a deletion's Value) are not stored:
// they are the key's preceding version, rebuilt at load.
var (
	bucketRevisions = []byte("revisions")
	bucketMeta      = []byte("meta")
	metaCurrent     = []byte("current")
	metaCompacted   = []byte("compacted")
)

const (
	recordPut    byte = 'P'
	recordDelete byte = 'D'
)

// OpenBolt opens (or creates) a store persisted in a bbolt file. Reads and
// watches are served by the same in-memory engine as NewMemory; every write
// and compaction is committed to the file (fsync) before it returns, and
// reopening restores keys, values, revisions, the uncompacted history and
// the revision counter.
func OpenBolt(path string, opts Options) (*MVCCStore, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", path, err)
	}
	s := newStore(opts)
	if err := s.load(db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("storage: load %s: %w", path, err)
	}
	s.persist = &boltPersister{db: db}
	if err := s.ApplyRetention(); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("storage: compact %s: %w", path, err)
	}
	s.startSweep()
	return s, nil
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

func (p *boltPersister) close() error { return p.db.Close() }

func revKey(rev int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(rev)) }

// encodeRecord: kind, uvarint createRev, varint time, uvarint key length,
// key, value (puts only).
func encodeRecord(e *logEntry) []byte {
	kind := recordPut
	if e.ev.Type == EventDelete {
		kind = recordDelete
	}
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(e.ev.Key)+len(e.ev.Value))
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(e.createRev))
	b = binary.AppendVarint(b, e.at)
	b = binary.AppendUvarint(b, uint64(len(e.ev.Key)))
	b = append(b, e.ev.Key...)
	if kind == recordPut {
		b = append(b, e.ev.Value...)
	}
	return b
}

type record struct {
	kind      byte
	createRev int64
	at        int64
	key       string
	value     []byte
}

var errCorrupt = errors.New("corrupt record")

func decodeRecord(b []byte) (record, error) {
	var r record
	if len(b) < 1 || (b[0] != recordPut && b[0] != recordDelete) {
		return r, errCorrupt
	}
	r.kind, b = b[0], b[1:]
	cr, n := binary.Uvarint(b)
	if n <= 0 {
		return r, errCorrupt
	}
	b = b[n:]
	at, n := binary.Varint(b)
	if n <= 0 {
		return r, errCorrupt
	}
	b = b[n:]
	kl, n := binary.Uvarint(b)
	if n <= 0 || kl > uint64(len(b)-n) {
		return r, errCorrupt
	}
	b = b[n:]
	r.createRev, r.at, r.key = int64(cr), at, string(b[:kl])
	if r.kind == recordPut {
		r.value = append([]byte{}, b[kl:]...) // bbolt memory is only valid inside the transaction
	} else if len(b) != int(kl) {
		return r, errCorrupt
	}
	return r, nil
}

// load rebuilds the index and the revision log from the file.
func (s *MVCCStore) load(db *bolt.DB) error {
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketRevisions, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		current, compacted := metaRev(meta, metaCurrent), metaRev(meta, metaCompacted)
		if current < 0 || compacted < 0 || compacted > current {
			return fmt.Errorf("bad meta: current %d, compacted %d", current, compacted)
		}
		s.compacted = compacted
		c := tx.Bucket(bucketRevisions).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(k) != 8 {
				return fmt.Errorf("bad revision key %x", k)
			}
			rev := int64(binary.BigEndian.Uint64(k))
			r, err := decodeRecord(v)
			if err != nil {
				return fmt.Errorf("revision %d: %w", rev, err)
			}
			if err := s.loadRecord(rev, r, current); err != nil {
				return fmt.Errorf("revision %d: %w", rev, err)
			}
		}
		if got := s.compacted + int64(len(s.log)); got != current {
			return fmt.Errorf("history ends at revision %d, current is %d", got, current)
		}
		s.rev = current
		return nil
	})
}

func metaRev(b *bolt.Bucket, key []byte) int64 {
	v := b.Get(key)
	if len(v) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v))
}

func (s *MVCCStore) loadRecord(rev int64, r record, current int64) error {
	if rev > current || rev <= 0 {
		return fmt.Errorf("outside (0, %d]", current)
	}
	n := s.index.insert(r.key)
	wasLive := n.liveNow()
	var prev version
	if len(n.versions) > 0 {
		prev = n.versions[len(n.versions)-1]
	}
	v := version{modRev: rev, createRev: r.createRev, value: r.value, deleted: r.kind == recordDelete}
	if rev <= s.compacted {
		// A key's value as of the compacted revision: one per key, never a tombstone.
		if v.deleted || len(n.versions) > 0 {
			return errCorrupt
		}
	} else {
		if want := s.compacted + int64(len(s.log)) + 1; rev != want {
			return fmt.Errorf("history gap: expected revision %d", want)
		}
		ev := Event{Key: r.key, Revision: rev}
		if v.deleted {
			if !wasLive {
				return fmt.Errorf("deletion of absent key %q", r.key)
			}
			ev.Type, ev.Value = EventDelete, prev.value
		} else {
			ev.Type, ev.Value, ev.IsCreate = EventPut, r.value, !wasLive
			if wasLive {
				ev.PrevValue = prev.value
			}
		}
		s.log = append(s.log, logEntry{ev: ev, createRev: r.createRev, at: r.at})
	}
	n.versions = append(n.versions, v)
	switch isLive := n.liveNow(); {
	case isLive && !wasLive:
		s.index.addLive(r.key, 1)
	case !isLive && wasLive:
		s.index.addLive(r.key, -1)
	}
	return nil
}
