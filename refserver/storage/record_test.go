package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzDecodeRecord: any bytes decode to a record or an error, never a
// panic; the read path's decodeValue agrees; whatever decodes re-encodes (in the current format) to a record
// that decodes the same; and a current-format record with any byte of its
// value changed is caught by the value checksum.
func FuzzDecodeRecord(f *testing.F) {
	for _, e := range []logEntry{
		{ev: Event{Type: EventPut, Key: "/registry/core/configmaps/ns/a", Value: []byte(`{"data":{"x":"1"}}`), Revision: 3}, createRev: 2, at: 5},
		{ev: Event{Type: EventDelete, Key: "k", Revision: 9}, createRev: 4, at: -7},
	} {
		f.Add(e.ev.Revision, encodeRecord(&e))
	}
	f.Add(int64(1), []byte{'P', 1, 1, 1, 'k', 'v'})
	f.Add(int64(1), []byte{'D', 1, 1, 1, 'k'})
	f.Fuzz(func(t *testing.T, rev int64, b []byte) {
		if h, err := decodeHead(rev, b); err == nil && (h.legacy || h.size != len(b)) {
			t.Fatalf("decodeHead accepted more than a current header: %+v", h)
		}
		r, err := decodeRecord(rev, b)
		if err != nil {
			return
		}
		// The read path agrees with the full decode on what it accepts.
		v, err := decodeValue(rev, b, r.key)
		switch {
		case r.kind == recordPut && r.damaged == nil && (err != nil || !bytes.Equal(v, r.value)):
			t.Fatalf("decodeValue of a sound put: %q, %v; decodeRecord: %q", v, err, r.value)
		case (r.kind != recordPut || r.damaged != nil) && !errors.Is(err, ErrCorrupt):
			t.Fatalf("decodeValue of a deletion or a damaged value: %q, %v", v, err)
		}
		if _, err := decodeValue(rev, b, r.key+"x"); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("decodeValue accepted the record of another key: %v", err)
		}
		e := logEntry{ev: Event{Type: EventPut, Key: r.key, Value: r.value, Revision: rev}, createRev: r.createRev, at: r.at}
		if r.kind == recordDelete {
			e.ev.Type = EventDelete
		}
		enc, head := encodeWrite(&e)
		// The header bucket "heads" holds is the record's own first bytes.
		if h, err := decodeHead(rev, head); err != nil || !bytes.HasPrefix(enc, head) || string(h.key) != r.key ||
			h.kind != r.kind || h.createRev != r.createRev || h.at != r.at || checkTail(h, enc[len(head):]) != nil {
			t.Fatalf("the header of %+v: %+v, %v", r, h, err)
		}
		r2, err := decodeRecord(rev, enc)
		if err != nil || r2.damaged != nil || r2.key != r.key || !bytes.Equal(r2.value, r.value) || r2.kind != r.kind {
			t.Fatalf("re-encoded record %+v decodes to %+v, %v", r, r2, err)
		}
		if r.kind == recordPut && len(r.value) > 0 {
			enc[len(enc)-5] ^= 0x01 // the value's last byte
			if r3, err := decodeRecord(rev, enc); err != nil || !errors.Is(r3.damaged, ErrCorrupt) {
				t.Fatalf("a changed value byte went unnoticed: %+v, %v", r3, err)
			}
		}
	})
}

// TestChecksum: a record's checksum is CRC-32C over the 8-byte big-endian
// revision followed by the bytes, as files already written hold it.
func TestChecksum(t *testing.T) {
	for _, tc := range []struct {
		rev int64
		b   string
	}{{0, ""}, {1, "k"}, {0x0102030405060708, "a longer header and value"}, {-1, "\xff"}} {
		want := crc32.Checksum(binary.BigEndian.AppendUint64(nil, uint64(tc.rev))[:8:8], castagnoli)
		want = crc32.Update(want, castagnoli, []byte(tc.b))
		if got := checksum(tc.rev, []byte(tc.b)); got != want {
			t.Errorf("checksum(%d, %q) = %#x, want %#x", tc.rev, tc.b, got, want)
		}
	}
}
