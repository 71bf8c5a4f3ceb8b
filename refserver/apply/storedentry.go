package apply

import (
	"bytes"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// The registry stores an object as JSON; for an update it may keep live's
// metadata.managedFields as the bytes stored for them instead of decoding
// them, since the common update, by the writer owning every field
// (soleOwnerUpdate), needs them only to compare with the objects' fields
// and to write them back. UpdateStored gives soleOwnerUpdate's answer from
// those bytes: it accepts them only in the form json.Marshal writes the
// list of one such entry, writes the fieldsV1 mapFields would list for
// live (fieldsWalk.appendFields) and compares the bytes, and writes the new
// list's bytes the same way. Anything else declines to the caller, which
// then decodes the bytes and calls Update.

// UpdateStored is Update for a live object whose metadata.managedFields
// the caller kept as the bytes stored for them (liveMF: the JSON array as
// encoding/json encodes the decoded list, no whitespace, keys sorted)
// instead of decoding them: neither live nor updated carries
// metadata.managedFields. ok true: out is Update's answer without
// metadata.managedFields, and outMF the JSON of the list that answer
// carries (nil when it carries none). ok false declines: the caller
// decodes liveMF into both objects' metadata and calls Update.
//
// When the entry is unchanged outMF is liveMF itself (its capacity cut to
// its length): neither may be written to afterwards. out is updated itself
// where Update's answer has its values as they are (Update's shares them
// with updated): the caller gives updated over to it, and writes to either
// show in both.
func (m *Manager) UpdateStored(live map[string]any, liveMF []byte, updated map[string]any, manager string) (out map[string]any, outMF []byte, ok bool) {
	// soleOwnerUpdate's conditions on the objects, fastUpdate's on the
	// manager.
	if !utf8.ValidString(manager) || live == nil || !m.ownKind(live) || !m.ownKind(updated) || m.subresource != "" {
		return nil, nil, false
	}
	updMeta, _ := updated["metadata"].(map[string]any)
	if !keptShape(live) || !keptShape(updated) {
		return nil, nil, false
	}
	manager, root, w, ok := m.storedStart(manager)
	if !ok {
		return nil, nil, false
	}
	defer putStoredWalk(w)

	// The entry first, so that another writer's declines before any walk.
	storedFields, stamp, ok := w.soleStoredEntry(liveMF, m.gv, manager)
	if !ok {
		return nil, nil, false
	}
	// updated itself answers (a copy was a twentieth of an update's
	// allocations) unless its metadata has whole numbers as float64, which
	// Update's answer has as int64: then a copy, updated left as it was.
	out, outMeta := updated, updMeta
	if hasWholeFloats(updMeta) {
		out, outMeta = withMetadataCopy(updated, updMeta)
		integersInt64(outMeta)
	}
	// The written object's fields, which it must hold as its own JSON copy.
	w.buf, w.copied = w.buf[:0], false
	if !w.appendFields(root, out, updateStrip) {
		return nil, nil, false
	}
	fields := w.buf[:len(w.buf):len(w.buf)]
	// The entry's answer is those fields when it owns exactly live's
	// (matchesFields, read through live's copy: live had no managedFields to
	// pass over), and also when it owns exactly the written object's, as
	// after most updates, which change values and keep keys: the update
	// takes from the entry only fields it removes, which the written object
	// lacks, and gives it only fields the written object has. Then live's
	// walk only checks it, listing nothing. (The comparison with a walk's
	// bytes is also what proves the entry's middle to be a fieldsV1, as
	// soleStoredEntry asks.)
	sameFields := bytes.Equal(fields, storedFields)
	w.copied = true
	if sameFields {
		w.emit, w.mode = false, checkOnly
		if _, _, ok := w.walk(root, live, updateStrip); !ok {
			return nil, nil, false
		}
	} else if !w.appendFields(root, live, updateStrip) || !bytes.Equal(w.buf[len(fields):], storedFields) {
		return nil, nil, false
	}
	if len(fields) == len("{}") { // no field: no entry
		return out, nil, true
	}
	var now [32]byte
	if changedOutside(live, out, updateStrip) {
		stamp = m.now().UTC().AppendFormat(now[:0], time.RFC3339) // updateEntry's time
	} else if sameFields {
		return out, liveMF[:len(liveMF):len(liveMF)], true
	}
	return out, entryList(m.gv, fields, manager, "Update", stamp, 0), true
}

// CreateStored is Update's answer for a create (no live object) given as
// UpdateStored gives it: out without metadata.managedFields, and outMF the
// JSON of the list createUpdate's answer carries (nil for none), written
// from the walk that lists the new object's fields instead of through the
// fieldsV1 maps. ok false declines: the caller calls Update.
func (m *Manager) CreateStored(updated map[string]any, manager string) (out map[string]any, outMF []byte, ok bool) {
	if !utf8.ValidString(manager) || !m.ownKind(updated) || m.zero != nil || m.subresource != "" {
		return nil, nil, false
	}
	if !keptShape(updated) {
		return nil, nil, false
	}
	manager, root, w, ok := m.storedStart(manager)
	if !ok {
		return nil, nil, false
	}
	defer putStoredWalk(w)
	out = updated // no copy: the walk below only reads it
	w.buf, w.copied = w.buf[:0], false
	if !w.appendFields(root, out, updateStrip) {
		return nil, nil, false
	}
	if len(w.buf) == len("{}") { // no field: no entry
		return out, nil, true
	}
	var now [32]byte
	stamp := m.now().UTC().AppendFormat(now[:0], time.RFC3339) // updateEntry's time
	return out, entryList(m.gv, w.buf, manager, "Update", stamp, 0), true
}

// keptShape reports whether obj (live, or the object or configuration
// written) has the shape the stored answers read: metadata, without
// kubectl's last-applied annotation (which the library keeps in step) and
// without managedFields (the caller holds live's as bytes).
func keptShape(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil || hasLastApplied(md) {
		return false
	}
	_, present := md["managedFields"]
	return !present
}

// storedStart is how every stored answer starts: the writer's name as its
// entry gives it ("unknown" for none), the compiled type of the Manager's
// kind and an emitting walk from storedWalks, to give back with
// putStoredWalk; ok false when the schema gives no type.
func (m *Manager) storedStart(manager string) (name string, root *walkType, w *fieldsWalk, ok bool) {
	if root, ok = m.walkRoot(); !ok {
		return "", nil, nil, false
	}
	if manager == "" {
		manager = "unknown"
	}
	return manager, root, storedWalks.Get().(*fieldsWalk), true
}

// storedWalks recycles the emitting walks' buffers between updates.
var storedWalks = sync.Pool{New: func() any {
	return &fieldsWalk{buf: make([]byte, 0, 512), members: make([]fieldMember, 0, 32)}
}}

// putStoredWalk gives w back, unless a very large object made its buffers
// ones not worth keeping, without the members of the objects it walked
// (which would stay alive with it).
func putStoredWalk(w *fieldsWalk) {
	if cap(w.buf) > 64<<10 || cap(w.members) > 1<<10 {
		return
	}
	clear(w.members[:cap(w.members)])
	*w = fieldsWalk{buf: w.buf[:0], members: w.members[:0]}
	storedWalks.Put(w)
}

// soleStoredEntry splits mf, when it is the bytes json.Marshal gives a list
// of one entry that soleOwnerUpdate accepts as manager's own (an Update at
// apiVersion gv with fieldsType FieldsV1, no subresource, a time
// decodeEntry accepts or none), into that entry's fieldsV1 and time (nil
// for none). Any other bytes decline: both ends are compared with what
// json.Marshal writes, so that once the caller has found the middle to be
// json.Marshal's bytes of a fieldsV1, all of mf is the list as decoded.
// It uses w.buf as scratch space.
func (w *fieldsWalk) soleStoredEntry(mf []byte, gv, manager string) (fieldsV1, stamp []byte, ok bool) {
	// json.Marshal writes a canonical time, whose length is fixed, as is.
	const timeLen = len("2006-01-02T15:04:05Z")
	if !bytes.HasSuffix(mf, []byte(`,"operation":"Update"}]`)) {
		if len(mf) < timeLen+len(`"}]`) {
			return nil, nil, false
		}
		stamp = mf[len(mf)-len(`"}]`)-timeLen : len(mf)-len(`"}]`)]
	}
	w.buf = appendEntryTail(w.buf[:0], manager, "Update", stamp)
	if !bytes.HasSuffix(mf, w.buf) {
		return nil, nil, false
	}
	body := mf[:len(mf)-len(w.buf)]
	if stamp != nil {
		if _, ok := entryTime(string(stamp)); !ok {
			return nil, nil, false
		}
	}
	w.buf = appendEntryHead(w.buf[:0], gv)
	if len(body) <= len(w.buf) || !bytes.HasPrefix(body, w.buf) {
		return nil, nil, false
	}
	return body[len(w.buf):], stamp, true
}

// entryList is the JSON of the list of manager's one entry of operation
// ("Update" or "Apply") at apiVersion gv, with the fieldsV1 fields and the
// time stamp, in a slice of its own, with room for more (extra bytes).
func entryList(gv string, fields []byte, manager, operation string, stamp []byte, extra int) []byte {
	const frame = len(`[{"apiVersion":"","fieldsType":"FieldsV1","fieldsV1":,"manager":"","operation":"","time":""}]`)
	list := make([]byte, 0, frame+len(gv)+len(fields)+len(manager)+len(operation)+len(stamp)+8+extra) // a few escapes
	list = appendEntryHead(list, gv)
	list = append(list, fields...)
	return appendEntryTail(list, manager, operation, stamp)
}

// appendEntryHead and appendEntryTail write json.Marshal's bytes of the
// list of one entry (entryObject's map) around its fieldsV1: members in key
// order, manager, stamp (its time, a canonical one, which needs no
// escaping) omitted when empty.
func appendEntryHead(dst []byte, gv string) []byte {
	dst = append(dst, `[{"apiVersion":`...)
	dst = jsonvalue.AppendString(dst, gv)
	return append(dst, `,"fieldsType":"FieldsV1","fieldsV1":`...)
}

func appendEntryTail(dst []byte, manager, operation string, stamp []byte) []byte {
	if manager != "" {
		dst = append(dst, `,"manager":`...)
		dst = jsonvalue.AppendString(dst, manager)
	}
	dst = append(append(append(dst, `,"operation":"`...), operation...), '"')
	if len(stamp) > 0 {
		dst = append(append(append(dst, `,"time":"`...), stamp...), '"')
	}
	return append(dst, "}]"...)
}
