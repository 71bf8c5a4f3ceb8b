package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Record format. Each value of bucket "revisions" is one write:
//
//	kind  createRev(uvarint) at(varint) keyLen(uvarint) key  headCRC(4)  [value valueCRC(4)]
//
// kind is 'p' (put) or 'd' (delete); the value and its checksum follow for
// puts only. Both checksums are CRC-32C over the 8-byte revision followed by
// the bytes they protect (headCRC: kind through key; valueCRC: the value),
// so a record copied to the wrong revision fails too. Two checksums rather
// than one: a damaged header means the record cannot be trusted to name its
// key, and the file is refused; a damaged value still names its key, so the
// store opens and reads of that key fail with ErrCorrupt naming it.
//
// Bucket "heads" holds, under the same revision, a copy of the record's
// header alone (kind through headCRC, the same bytes): loading the file
// reads it instead of the records, whose pages are mostly values.
//
// Files written before checksums existed hold records of kind 'P' and 'D'
// (the same fields, no checksums); they are read, and OpenBolt rewrites
// them with checksums the first time it opens the file read-write.
const (
	recordPut          byte = 'p'
	recordDelete       byte = 'd'
	legacyRecordPut    byte = 'P'
	legacyRecordDelete byte = 'D'
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func checksum(rev int64, b []byte) uint32 {
	// The revision's 8 bytes (big-endian) go through the table one at a
	// time: handing crc32 a slice of them would put them on the heap.
	crc := ^uint32(0)
	for shift := 56; shift >= 0; shift -= 8 {
		crc = castagnoli[byte(crc)^byte(rev>>shift)] ^ crc>>8
	}
	return crc32.Update(^crc, castagnoli, b)
}

// encodeRecord renders a write in the current format.
func encodeRecord(e *logEntry) []byte {
	b, _ := encodeWrite(e)
	return b
}

// encodeWrite renders a write as its record and the record's header (what
// bucket "heads" holds), a prefix of the record.
func encodeWrite(e *logEntry) (rec, head []byte) {
	kind := recordPut
	if e.ev.Type == EventDelete {
		kind = recordDelete
	}
	b := make([]byte, 0, 1+3*binary.MaxVarintLen64+len(e.ev.Key)+len(e.ev.Value)+8)
	b = append(b, kind)
	b = binary.AppendUvarint(b, uint64(e.createRev))
	b = binary.AppendVarint(b, e.at)
	b = binary.AppendUvarint(b, uint64(len(e.ev.Key)))
	b = append(b, e.ev.Key...)
	b = binary.BigEndian.AppendUint32(b, checksum(e.ev.Revision, b))
	head = b[:len(b):len(b)]
	if kind == recordPut {
		start := len(b)
		b = append(b, e.ev.Value...)
		b = binary.BigEndian.AppendUint32(b, checksum(e.ev.Revision, b[start:]))
	}
	return b, head
}

type record struct {
	kind      byte // recordPut or recordDelete
	createRev int64
	at        int64
	key       string
	value     []byte
	legacy    bool  // written without checksums
	damaged   error // the value fails its checksum (ErrCorrupt, naming the key)
}

var errCorrupt = errors.New("corrupt record")

// decodeRecord reads the record stored at rev. An error means the record
// cannot be trusted at all; a damaged value only sets record.damaged.
func decodeRecord(rev int64, b []byte) (record, error) { return decodeRecordValue(rev, b, true) }

// decodeHeader reads a record without its value: what loading the file
// needs (the value's checksum is checked when the value is read).
func decodeHeader(rev int64, b []byte) (record, error) { return decodeRecordValue(rev, b, false) }

// decodeValue returns a copy of the value of key's put record b stored at
// rev, checked against its checksum: the read path, which allocates only the
// copy (the header was checked when the file was opened).
func decodeValue(rev int64, b []byte, key string) ([]byte, error) {
	if len(b) < 1 || (b[0] != recordPut && b[0] != legacyRecordPut) {
		return nil, fmt.Errorf("value of key %q at revision %d: the record there is not a value: %w", key, rev, ErrCorrupt)
	}
	rest := b[1:]
	for range 2 { // createRev, at
		_, n := binary.Varint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("value of key %q at revision %d: %v: %w", key, rev, errCorrupt, ErrCorrupt)
		}
		rest = rest[n:]
	}
	kl, n := binary.Uvarint(rest)
	if n <= 0 || kl > uint64(len(rest)-n) || string(rest[n:n+int(kl)]) != key {
		return nil, fmt.Errorf("value of key %q at revision %d: the record there is not that key's: %w", key, rev, ErrCorrupt)
	}
	rest = rest[n+int(kl):]
	if b[0] == recordPut {
		if len(rest) < 8 {
			return nil, fmt.Errorf("value of key %q at revision %d: %v: %w", key, rev, errCorrupt, ErrCorrupt)
		}
		rest = rest[4:] // the header's checksum
		sum := binary.BigEndian.Uint32(rest[len(rest)-4:])
		rest = rest[:len(rest)-4]
		if sum != checksum(rev, rest) {
			return nil, fmt.Errorf("value of key %q at revision %d fails its checksum: %w", key, rev, ErrCorrupt)
		}
	}
	return append([]byte{}, rest...), nil // bbolt memory is only valid inside the transaction
}

// header is a record's header as parseHeader finds it; key points into
// the bytes parsed.
type header struct {
	kind      byte // recordPut or recordDelete
	createRev int64
	at        int64
	key       []byte
	legacy    bool // written without checksums
	size      int  // the header's length, its checksum included
}

// parseHeader reads the header at the start of b, the record or the heads
// entry stored at rev, and checks its checksum.
func parseHeader(rev int64, b []byte) (header, error) {
	var h header
	if len(b) < 1 {
		return h, errCorrupt
	}
	switch b[0] {
	case recordPut, recordDelete:
	case legacyRecordPut, legacyRecordDelete:
		h.legacy = true
	default:
		return h, errCorrupt
	}
	h.kind = b[0] | 0x20 // lower case: the kinds of both formats agree
	rest := b[1:]
	cr, n := binary.Uvarint(rest)
	if n <= 0 {
		return h, errCorrupt
	}
	rest = rest[n:]
	at, n := binary.Varint(rest)
	if n <= 0 {
		return h, errCorrupt
	}
	rest = rest[n:]
	kl, n := binary.Uvarint(rest)
	if n <= 0 || kl > uint64(len(rest)-n) {
		return h, errCorrupt
	}
	rest = rest[n:]
	h.createRev, h.at, h.key = int64(cr), at, rest[:kl:kl]
	h.size = len(b) - len(rest) + int(kl)
	if !h.legacy {
		if len(b)-h.size < 4 || binary.BigEndian.Uint32(b[h.size:]) != checksum(rev, b[:h.size]) {
			return h, fmt.Errorf("%w: header checksum mismatch", errCorrupt)
		}
		h.size += 4
	}
	return h, nil
}

// decodeHead reads an entry of bucket "heads": a current-format header
// and nothing else.
func decodeHead(rev int64, b []byte) (header, error) {
	h, err := parseHeader(rev, b)
	switch {
	case err != nil:
		return h, err
	case h.legacy || h.size != len(b):
		return h, errCorrupt
	}
	return h, nil
}

// checkTail checks what follows a record's header: nothing for a
// deletion, a value and its checksum (at least 4 bytes) for a put.
func checkTail(h header, tail []byte) error {
	switch {
	case h.kind == recordDelete && len(tail) != 0:
		return errCorrupt
	case h.kind == recordPut && !h.legacy && len(tail) < 4:
		return errCorrupt
	}
	return nil
}

func decodeRecordValue(rev int64, b []byte, withValue bool) (record, error) {
	h, err := parseHeader(rev, b)
	r := record{kind: h.kind, createRev: h.createRev, at: h.at, key: string(h.key), legacy: h.legacy}
	if err != nil {
		return r, err
	}
	rest := b[h.size:]
	if err := checkTail(h, rest); err != nil || r.kind == recordDelete {
		return r, err
	}
	if !r.legacy {
		if !withValue {
			return r, nil
		}
		sum := binary.BigEndian.Uint32(rest[len(rest)-4:])
		rest = rest[:len(rest)-4]
		if sum != checksum(rev, rest) {
			r.damaged = fmt.Errorf("value of key %q at revision %d fails its checksum: %w", r.key, rev, ErrCorrupt)
		}
	}
	if withValue {
		r.value = append([]byte{}, rest...) // bbolt memory is only valid inside the transaction
	}
	return r, nil
}
