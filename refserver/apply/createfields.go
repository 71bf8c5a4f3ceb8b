package apply

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/structured-merge-diff/v6/schema"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// A create's own entry owns every field of the new object: the typed path
// (fastUpdate) converts the object to a typed value, lists its field set,
// adds every prefix (addedFromEmpty), takes the server's metadata away
// (stripSet) and turns the set into fieldsV1 (setToFields). For an object
// made of maps and scalars alone, each of those steps is a plain function of
// the object's keys, so createFields writes the fieldsV1 in one walk of the
// object against the schema. It checks what the typed conversion would check
// on the way (fields the schema declares, scalar types) and declines (ok
// false) wherever it would take a rule it does not model: a list, a null, an
// atomic map, a value the schema refuses. The typed path stays the
// reference; a test holds the two equal.

// createFields is the fieldsV1 of the entry a create of obj (of the
// Manager's kind) gives its writer; ok false declines, as for an obj that
// is not its own JSON copy.
func (m *Manager) createFields(obj map[string]any) (map[string]any, bool) {
	root, ok := m.walkRoot()
	if !ok {
		return nil, false
	}
	return mapFields(root, obj, updateStrip, everyField)
}

// createUpdate is Update's answer for a create (live nil) of an object
// that brings no managedFields, read as it comes: createFields checks on
// its walk that the object is its own JSON copy, which normalise would
// otherwise prove with a walk of its own. ok false declines (fastUpdate
// then normalises the object and tries again).
func (m *Manager) createUpdate(live, updated map[string]any, manager string) (map[string]any, bool) {
	if live != nil || !m.ownKind(updated) {
		return nil, false
	}
	updMeta, _ := updated["metadata"].(map[string]any)
	if updMeta == nil || hasLastApplied(updMeta) {
		return nil, false
	}
	if _, present := updMeta["managedFields"]; present {
		return nil, false
	}
	out, outMeta := withMetadataCopy(updated, updMeta)
	fields, ok := m.createFields(out)
	if !ok {
		return nil, false
	}
	if len(fields) > 0 {
		self := m.updateEntry(manager, nil)
		outMeta["managedFields"] = []any{entryObject(&self, fields)}
	}
	return out, true
}

// fieldsMode is which fields of an object a walk lists as members.
type fieldsMode int

const (
	// everyField: every field, and every map holding one (a create's, or
	// an update's, entry: a comparison with the empty object lists them).
	everyField fieldsMode = iota
	// fieldSetFields: what structured-merge-diff's ToFieldSet lists, the
	// scalars, the empty maps and every entry of a map that is not a
	// struct (an applier's entry: its configuration's field set).
	fieldSetFields
	// checkOnly: none; the walk only checks the object.
	checkOnly
)

// mapFields is the fieldsV1 of the map obj of type t, its members chosen
// by mode: a member is {}, or its fields below with "." added, except
// members of strip (the paths below obj that no entry records). Like
// matchesFields it declines an obj that is not its own JSON copy.
func mapFields(t *walkType, obj map[string]any, strip *stripNode, mode fieldsMode) (map[string]any, bool) {
	w := fieldsWalk{mode: mode}
	fields, _, ok := w.walk(t, obj, strip)
	return fields, ok
}

// fieldsWalk is mapFields' walk. It builds the fieldsV1 map, or with emit
// writes it as JSON instead (appendFields): one walk, so that the bytes the
// stored-entry path compares and writes (storedentry.go) list exactly what
// the map would.
type fieldsWalk struct {
	mode fieldsMode
	// copied: obj need only have a JSON copy, not be one (scalarReads):
	// live, which the library reads through its copy.
	copied bool
	// emit: the fields go to buf, not into maps.
	emit bool
	buf  []byte
	// members is the scratch space each map's members are sorted in when
	// emitting: a stack the walks of nested maps push onto and pop (what
	// it held stays beyond its length until it is reused or cleared).
	members []fieldMember
}

// fieldMember is one member of an object being emitted.
type fieldMember struct {
	key   string
	value any
}

// appendFields appends to w.buf what json.Marshal writes for
// mapFields(t, obj, strip, w.mode): members sorted by key ("." before
// every "f:" key, and "f:"+a before "f:"+b as a before b), every leaf {}.
// false: mapFields declines (w.buf then ends in part of a write).
func (w *fieldsWalk) appendFields(t *walkType, obj map[string]any, strip *stripNode) bool {
	w.emit = true
	w.buf = append(w.buf, '{')
	if _, _, ok := w.walk(t, obj, strip); !ok {
		return false
	}
	w.buf = append(w.buf, '}')
	return true
}

// walk lists obj's fields: as a map (nil in checkOnly mode) or, emitting,
// onto w.buf after an open '{'. listed is how many members it listed.
func (w *fieldsWalk) walk(t *walkType, obj map[string]any, strip *stripNode) (fields map[string]any, listed int, ok bool) {
	if !t.mapOK || obj == nil {
		return nil, 0, false
	}
	if !w.emit {
		if w.mode != checkOnly {
			fields = make(map[string]any, len(obj))
		}
		for k, v := range obj {
			l, ok := w.field(t, k, v, strip, fields)
			if !ok {
				return nil, 0, false
			}
			if l {
				listed++
			}
		}
		return fields, listed, true
	}
	// JSON lists members in key order. The scratch slice may move while
	// a member's own walk pushes onto it: it is indexed afresh each time.
	start := len(w.members)
	for k, v := range obj {
		w.members = append(w.members, fieldMember{k, v})
	}
	sortMembers(w.members[start:])
	ok = true
	for i := start; i < start+len(obj); i++ {
		l, fine := w.field(t, w.members[i].key, w.members[i].value, strip, nil)
		if !fine {
			ok = false
			break
		}
		if l {
			listed++
		}
	}
	w.members = w.members[:start]
	return nil, listed, ok
}

// sortMembers sorts ms by key: by insertion for the few members most
// objects have, which is faster than a sort's general case there.
func sortMembers(ms []fieldMember) {
	if len(ms) > 12 {
		slices.SortFunc(ms, func(a, b fieldMember) int { return strings.Compare(a.key, b.key) })
		return
	}
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].key < ms[j-1].key; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// field checks obj's member k, v and lists it into fields (or w.buf)
// when it is listed.
func (w *fieldsWalk) field(t *walkType, k string, v any, strip *stripNode, fields map[string]any) (listed, ok bool) {
	vt, declared, ok := t.field(k)
	if !ok || !utf8.ValidString(k) {
		return false, false // a field the schema does not declare
	}
	member, below := strip.stripped(k)
	switch v := v.(type) {
	case map[string]any:
		if w.mode == checkOnly {
			_, _, ok := w.walk(vt, v, below)
			return false, ok
		}
		if w.mode == fieldSetFields {
			member = member && (len(v) == 0 || !declared)
		}
		if w.emit {
			return w.emitMap(vt, k, v, below, member)
		}
		c, n, ok := w.walk(vt, v, below)
		if !ok {
			return false, false
		}
		if member && n > 0 {
			c["."] = map[string]any{}
		}
		if member || n > 0 {
			fields["f:"+k] = c
		}
		return member || n > 0, true
	case string, bool, int64, float64:
		if !scalarFits(vt, v) || !scalarReads(v, w.copied) {
			return false, false
		}
		if !member || w.mode == checkOnly {
			return false, true
		}
		if w.emit {
			w.buf = append(appendFieldKey(w.buf, k), "{}"...)
		} else {
			fields["f:"+k] = map[string]any{}
		}
		return true, true
	default: // a list, a null, or not a JSON value
		return false, false
	}
}

// emitMap is field's listing of the map v at k when emitting. "." sorts
// first: it is written before the fields below, and taken back if none is
// listed, as is the whole member if it is not one.
func (w *fieldsWalk) emitMap(t *walkType, k string, v map[string]any, below *stripNode, member bool) (listed, ok bool) {
	unlisted := len(w.buf)
	w.buf = append(appendFieldKey(w.buf, k), '{')
	empty := len(w.buf)
	if member {
		w.buf = append(w.buf, `".":{}`...)
	}
	_, n, ok := w.walk(t, v, below)
	switch {
	case !ok:
		return false, false
	case n > 0:
	case member:
		w.buf = w.buf[:empty]
	default:
		w.buf = w.buf[:unlisted]
		return false, true
	}
	w.buf = append(w.buf, '}')
	return true, true
}

// appendFieldKey appends the JSON key "f:"+k of a member and its colon,
// after a comma unless it is the first of its object.
func appendFieldKey(dst []byte, k string) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	// AppendString quotes k; "f:" goes inside the quote (neither byte
	// needs escaping, so this is the quoting of "f:"+k).
	n := len(dst)
	dst = jsonvalue.AppendString(append(dst, `"f:`...), k)
	copy(dst[n+3:], dst[n+4:])
	dst[len(dst)-1] = ':'
	return dst
}

// scalarFits reports whether the typed conversion accepts the scalar v for
// type t (structured-merge-diff's scalar validation).
func scalarFits(t *walkType, v any) bool {
	if t.scalar == nil {
		return false
	}
	var ok bool
	switch *t.scalar {
	case schema.String:
		_, ok = v.(string)
	case schema.Boolean:
		_, ok = v.(bool)
	case schema.Numeric:
		switch v.(type) {
		case int64, float64:
			ok = true
		default:
			ok = false
		}
	case schema.Untyped:
		ok = true // every JSON scalar
	default:
		ok = false
	}
	return ok
}

// An update whose object has one entry, the writer's own Update entry,
// owning exactly the fields of live (as the writer's create left it, and
// each of its updates since): the typed path takes from the entry what the
// write removed and gives the writer what it added or changed, which leaves
// it owning exactly the fields of the object written, stamped now if the
// write added or changed a field outside the server's metadata (else the
// entry keeps its time), and no entry if the object has no such field.
// matchesFields checks the entry against live without listing live's
// fields, and against the written object, whose fields are listed only
// when they differ (a field added or removed).
//
// It is the common write (every update and merge patch of an object by the
// client that created it), so it reads both objects as they come, without
// normalise: the walks that compare them with the entry visit every value
// of both and check on the way that the written object is its own JSON
// copy (jsonvalue.Stable, PreserveInts) and that live has one (its
// integers may be float64s, as the registry decodes stored objects), which
// normalise's own walks would otherwise prove first. Objects that are not,
// or lack their apiVersion or kind, decline to the typed path.

// soleOwnerUpdate is Update's answer for such an update; ok false
// declines. The entry must be live's own list (the registry hands updated
// live's managedFields, or updated has none).
func (m *Manager) soleOwnerUpdate(live, updated map[string]any, manager string) (map[string]any, bool) {
	if live == nil || !m.ownKind(live) || !m.ownKind(updated) {
		return nil, false
	}
	liveMeta, _ := live["metadata"].(map[string]any)
	updMeta, _ := updated["metadata"].(map[string]any)
	if liveMeta == nil || updMeta == nil || hasLastApplied(liveMeta) || hasLastApplied(updMeta) {
		return nil, false
	}
	list, _ := liveMeta["managedFields"].([]any)
	if raw, present := updMeta["managedFields"]; present {
		if given, _ := raw.([]any); !sameList(given, list) {
			return nil, false
		}
	}
	if len(list) != 1 {
		return nil, false
	}
	if manager == "" {
		manager = "unknown"
	}
	// Another writer's entry is the typed path's: seen before decoding it.
	if first, _ := list[0].(map[string]any); first["manager"] != any(manager) || first["operation"] != any("Update") {
		return nil, false
	}
	entry, ok := m.decodeEntry(list[0])
	if !ok {
		return nil, false
	}
	e := &entry
	self := mfEntry{manager: manager, operation: "Update", apiVersion: m.gv}
	if e.fields == nil || !e.sameManager(&self) {
		return nil, false
	}
	root, ok := m.walkRoot()
	if !ok {
		return nil, false
	}
	var key []byte
	if !matchesFields(root, live, e.fields, liveStrip, 0, &key, true) {
		return nil, false
	}
	out, outMeta := withMetadataCopy(updated, updMeta)
	integersInt64(outMeta)
	// The object written has the fields live has (a write of values
	// only): the entry's fieldsV1, which has just matched them, is its
	// own. Else they are listed anew.
	fields := e.fields
	if !matchesFields(root, out, fields, updateStrip, 0, &key, false) {
		if fields, ok = mapFields(root, out, updateStrip, everyField); !ok {
			return nil, false
		}
	}
	if len(fields) > 0 {
		kept := *e
		if changedOutside(live, out, updateStrip) {
			kept = m.updateEntry(manager, nil)
		}
		outMeta["managedFields"] = []any{entryObject(&kept, fields)}
	}
	return out, true
}

// integersInt64 turns md's integral float64s into the int64s the library's
// copy reads them as, in place: md is the Update's own copy of the written
// object's metadata, where the registry carries the stored generation over
// as it decoded it (a float64). Numbers without an exact copy are left for
// the walk to decline.
func integersInt64(md map[string]any) {
	for k, v := range md {
		if wholeFloat(v) {
			md[k] = int64(v.(float64))
		}
	}
}

// hasWholeFloats reports whether integersInt64 would change md.
func hasWholeFloats(md map[string]any) bool {
	for _, v := range md {
		if wholeFloat(v) {
			return true
		}
	}
	return false
}

// wholeFloat: a float64 that a JSON round trip keeping integers gives as int64.
func wholeFloat(v any) bool {
	f, ok := v.(float64)
	return ok && f == math.Trunc(f) && jsonvalue.RoundTrips(f, jsonvalue.PreserveInts)
}

// ownKind reports whether obj names the Manager's apiVersion and kind.
func (m *Manager) ownKind(obj map[string]any) bool {
	av, _ := obj["apiVersion"].(string)
	k, _ := obj["kind"].(string)
	return av == m.gv && k == m.gvk.Kind
}

// matchesFields reports whether fields (with extra keys besides the
// fields', a "." or none) is what mapFields lists for obj in everyField
// mode, checking obj against the schema on the way as mapFields does,
// without building it, and that obj is its own JSON copy
// (jsonvalue.Stable under PreserveInts): false when it is not. An obj read
// only through its copy (copied: live, which the library normalises and
// none of whose values reach the answer) need only have one: its scalars
// may be integral float64s, as the registry decodes stored objects, where
// the library sees int64s equal to them. key is scratch space for the
// keys looked up.
func matchesFields(t *walkType, obj, fields map[string]any, strip *stripNode, extra int, key *[]byte, copied bool) bool {
	if !t.mapOK || obj == nil {
		return false
	}
	matched := 0
	for k, v := range obj {
		if strip != nil && strip.ignore != "" && k == strip.ignore {
			continue
		}
		vt, _, ok := t.field(k)
		if !ok || !utf8.ValidString(k) {
			return false
		}
		member, below := strip.stripped(k)
		*key = append(append((*key)[:0], "f:"...), k...)
		got, present := fields[string(*key)]
		node, isMap := got.(map[string]any)
		if present && (!isMap || node == nil) { // fieldsV1 is checked as the object is
			return false
		}
		switch v := v.(type) {
		case map[string]any:
			nonEmpty := hasFields(v, below)
			if !member && !nonEmpty { // listed nowhere, checked all the same
				if present || !matchesFields(vt, v, nil, below, 0, key, copied) {
					return false
				}
				continue
			}
			if !present {
				return false
			}
			dot := 0
			if member && nonEmpty {
				if d, ok := node["."].(map[string]any); !ok || d == nil || len(d) != 0 {
					return false
				}
				dot = 1
			}
			if !matchesFields(vt, v, node, below, dot, key, copied) {
				return false
			}
			matched++
		case string, bool, int64, float64:
			if !scalarFits(vt, v) || !scalarReads(v, copied) || present != member || present && len(node) != 0 {
				return false
			}
			if present {
				matched++
			}
		default:
			return false
		}
	}
	return matched+extra == len(fields)
}

// scalarReads reports whether matchesFields may read the scalar v in
// place: v is its own JSON copy, or it has one and copied says that is
// enough.
func scalarReads(v any, copied bool) bool {
	if copied {
		return jsonvalue.RoundTrips(v, jsonvalue.PreserveInts)
	}
	return jsonvalue.Stable(v, jsonvalue.PreserveInts)
}

// hasFields reports whether mapFields lists anything for the map obj: a key
// that is not a member of strip, or one with fields below it.
func hasFields(obj map[string]any, strip *stripNode) bool {
	if strip == nil {
		return len(obj) > 0
	}
	for k, v := range obj {
		member, below := strip.stripped(k)
		if member {
			return true
		}
		if m, ok := v.(map[string]any); ok && hasFields(m, below) {
			return true
		}
	}
	return false
}

// sameFields reports whether two fieldsV1 maps are equal.
func sameFields(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, av := range a {
		am, _ := av.(map[string]any)
		bm, ok := b[k].(map[string]any)
		if !ok || am == nil || !sameFields(am, bm) {
			return false
		}
	}
	return true
}

// changedOutside reports whether going from l to n adds a field or changes
// a scalar (structured-merge-diff's comparison: a value of another type is
// a change, numbers compare as numbers) anywhere but at a member of strip.
// Both are objects createFields accepted.
func changedOutside(l, n map[string]any, strip *stripNode) bool {
	for k, nv := range n {
		member, below := strip.stripped(k)
		lv, inLive := l[k]
		if nm, isMap := nv.(map[string]any); isMap {
			lm, wasMap := lv.(map[string]any)
			if member && (!inLive || !wasMap) {
				return true
			}
			if changedOutside(lm, nm, below) {
				return true
			}
			continue
		}
		if member && (!inLive || !sameScalar(lv, nv)) {
			return true
		}
	}
	return false
}

// sameScalar is structured-merge-diff's equality of two JSON scalars.
func sameScalar(a, b any) bool {
	af, aFloat := a.(float64)
	bf, bFloat := b.(float64)
	if aFloat || bFloat {
		if ai, ok := a.(int64); ok {
			af, aFloat = float64(ai), true
		}
		if bi, ok := b.(int64); ok {
			bf, bFloat = float64(bi), true
		}
		return aFloat && bFloat && af == bf
	}
	return a == b // int64, string, bool: equal only to the same type
}
