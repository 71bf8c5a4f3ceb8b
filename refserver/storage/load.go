package storage

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// loadTx rebuilds the index and the revision log from the file and
// returns the revisions still in the format without checksums. Every
// error it returns means the file cannot be trusted.
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
	c := revs.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(k) != 8 {
			return nil, fmt.Errorf("bad revision key %x", k)
		}
		rev := int64(binary.BigEndian.Uint64(k))
		r, err := decodeRecord(rev, v)
		if err != nil {
			return nil, fmt.Errorf("revision %d: %w", rev, err)
		}
		if r.legacy {
			legacy = append(legacy, rev)
		}
		if r.damaged != nil {
			if s.damaged == nil {
				s.damaged = make(map[int64]error)
			}
			s.damaged[rev] = r.damaged
		}
		if err := s.loadRecord(rev, r, current); err != nil {
			return nil, fmt.Errorf("revision %d: %w", rev, err)
		}
	}
	if got := s.compacted + int64(len(s.log)); got != current {
		return nil, fmt.Errorf("history ends at revision %d, current is %d", got, current)
	}
	s.rev = current
	return legacy, nil
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
