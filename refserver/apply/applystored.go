package apply

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// An applier's first apply to an object one other writer tracks, with the
// one Update entry that writer's create and updates leave (owning exactly
// the object's fields, soleOwnerUpdate's case): plainApply's answer keeps
// that entry as it was, unless the merge changes a field it owns (a
// conflict, declined), and lists the applier's Apply entry before it (the
// library's order puts Apply before Update). So with the registry keeping
// live's managedFields as their stored bytes (see UpdateStored), the
// answer needs no decoding of them: the stored entry is checked as
// UpdateStored checks it (its bytes are json.Marshal's of an Update entry
// owning exactly live's fields, written by the same walk), and the new list
// is the Apply entry's bytes followed by the stored entry's. Anything else
// declines to the caller, which decodes the bytes and calls Apply.

// ApplyStored is Apply for a live object whose metadata.managedFields the
// caller kept as the bytes stored for them (liveMF, as for UpdateStored),
// without force (an apply that forces takes the same answer when nothing
// conflicts, and declines where something does): neither live nor applied
// carries metadata.managedFields. ok true: out is Apply's answer without
// metadata.managedFields, and outMF the JSON of the list it carries, in a
// slice of its own. ok false declines: the caller decodes liveMF into
// live's metadata and calls Apply.
//
// Neither input is modified; out may share values with both, as Apply's
// answer does.
func (m *Manager) ApplyStored(live map[string]any, liveMF []byte, applied map[string]any, manager string) (out map[string]any, outMF []byte, ok bool) {
	// fastApply's conditions on the Manager, the manager and the patch.
	if m.Default != nil || !utf8.ValidString(manager) || live == nil || m.subresource != "" {
		return nil, nil, false
	}
	// A list of more entries than one (the applier's own among them, on
	// every re-apply) declines before any walk. The member name with its
	// quotes occurs once per entry: in a fieldsV1 every key starts "f:",
	// and inside a string a quote is escaped. (Only a decline rests on it.)
	if bytes.Count(liveMF, []byte(`"fieldsType":`)) != 1 {
		return nil, nil, false
	}
	if applied, ok = m.normalise(applied); !ok {
		return nil, nil, false
	}
	if _, present := applied["metadata"]; present && !keptShape(applied) {
		return nil, nil, false
	}
	if live, ok = m.normalise(live); !ok || !keptShape(live) {
		return nil, nil, false
	}
	manager, root, w, ok := m.storedStart(manager)
	if !ok {
		return nil, nil, false
	}
	defer putStoredWalk(w)

	// The stored entry: one Update entry, its writer's name read from its
	// bytes and then the whole list checked as UpdateStored checks it
	// (never the applier's own entry: that would be an Apply one).
	owner, ok := storedWriter(liveMF)
	if !ok {
		return nil, nil, false
	}
	storedFields, _, ok := w.soleStoredEntry(liveMF, m.gv, owner)
	if !ok {
		return nil, nil, false
	}
	// Only the list's ends are checked so far: a list of more entries, or
	// anything else between them, fails the comparison with live's fields.
	w.buf, w.mode = w.buf[:0], everyField
	if !w.appendFields(root, live, updateStrip) || len(w.buf) == len("{}") || !bytes.Equal(w.buf, storedFields) {
		return nil, nil, false
	}

	// The merge, and its conflicts: the entry owns every field of live
	// outside the server's metadata, so any of those the merge modified.
	var changed mergeChanges
	merged, ok := mergeApplied(live, applied, nil, updateStrip, &changed)
	if !ok || changed.listed {
		return nil, nil, false
	}

	// The applier's entry: its configuration's field set, stamped when
	// the object changed. A configuration of the server's metadata alone
	// gives none (left to plainApply).
	w.buf, w.mode = w.buf[:0], fieldSetFields
	if !w.appendFields(root, applied, updateStrip) || len(w.buf) == len("{}") {
		return nil, nil, false
	}
	var now [32]byte
	var stamp []byte
	obj := live
	if changed.any {
		obj = merged
		stamp = m.now().UTC().AppendFormat(now[:0], time.RFC3339)
	}
	// [applier's entry] becomes [applier's entry, the stored entry].
	list := entryList(m.gv, w.buf, manager, "Apply", stamp, len(liveMF))
	list = append(append(list[:len(list)-1], ','), liveMF[1:]...)
	out, _ = withMetadataCopy(obj, obj["metadata"].(map[string]any))
	m.heard("stored first apply")
	return out, list, true
}

// storedWriter is the manager named in the last entry of mf, when mf ends
// as json.Marshal writes an Update entry with a manager (its name is the
// JSON string after the last `,"manager":`); soleStoredEntry then checks
// the whole list against that name.
func storedWriter(mf []byte) (string, bool) {
	const key = `,"manager":`
	i := bytes.LastIndex(mf, []byte(key))
	j := bytes.LastIndex(mf, []byte(`,"operation":"Update"`))
	if i < 0 || j < i+len(key) {
		return "", false
	}
	raw := mf[i+len(key) : j]
	var name string
	s, ok := jsonvalue.ParseValue(raw, jsonvalue.Float64)
	if ok {
		name, ok = s.(string)
	} else { // escapes are encoding/json's to read
		ok = json.Unmarshal(raw, &name) == nil
	}
	return name, ok && name != ""
}
