package apply

import (
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// An applier's first apply to an object other managers track, both made of
// maps and scalars: merge.Updater.Apply merges the configuration into live
// (a configuration's map merges into live's, its scalars replace live's),
// has nothing of the applier's to prune, finds a conflict wherever another
// manager owns a field the merge added or changed, and else leaves every
// other entry as it was and gives the applier its configuration's field
// set (ToFieldSet). plainApply computes that in walks of the two objects
// and declines (ok false) wherever the library would take a rule it does
// not model: a conflict (the library's 409, or with force its transfer of
// ownership), a value changing type, a list, a null, an atomic map, a value
// the schema refuses, an entry the schema would reconcile.
//
// The applier's apply of the configuration it applied last time (its entry
// holds exactly that configuration's field set) to an object the merge
// does not change is the other case taken here, as controllers apply on
// every pass: the updater's prune then removes only what the applier owned
// and owns again, and adds it back, so object and entries stay as they were.

// plainApply is the object fastApply answers for such an apply of applied
// to live (both normalised, live without managedFields; entries live's, at
// least one), and which case it was: "first apply" or "unchanged re-apply".
func (m *Manager) plainApply(live, applied map[string]any, entries []mfEntry, manager string) (map[string]any, string, bool) {
	self := mfEntry{manager: manager, operation: "Apply", apiVersion: m.gv}
	if self.manager == "" {
		self.manager = "unknown"
	}
	own := -1
	for i := range entries {
		if entries[i].sameManager(&self) {
			own = i
		}
	}
	// The merge first: it is what most often declines (an applier's
	// changed configuration), and costs least.
	changed := &fieldpath.Set{}
	merged, ok := mergeApplied(live, applied, nil, nil, &mergeChanges{paths: changed})
	if !ok || own >= 0 && !changed.Empty() {
		return nil, "", false
	}
	empty, err := m.emptyTyped()
	if err != nil {
		return nil, "", false
	}
	root, ok := m.walkRoot()
	if !ok {
		return nil, "", false
	}
	if _, ok := mapFields(root, live, nil, checkOnly); !ok {
		return nil, "", false
	}
	// The updater reconciles each entry with the schema (which is all the
	// reconciling reads of live's typed value): declined if that changes it.
	for i := range entries {
		if r, err := typed.ReconcileFieldSetWithSchema(entries[i].set, empty); err != nil || r != nil {
			return nil, "", false
		}
	}
	fields, ok := mapFields(root, applied, updateStrip, fieldSetFields)
	if !ok {
		return nil, "", false
	}
	which := "first apply"
	if own >= 0 {
		if e := &entries[own]; e.fields == nil || !sameFields(e.fields, fields) {
			return nil, "", false
		}
		which = "unchanged re-apply"
	}
	kept := make([]mfEntry, 0, len(entries)+1)
	for i, e := range entries {
		if i != own && !e.set.Intersection(changed).Empty() {
			return nil, "", false // a conflict
		}
		if !e.set.Empty() { // the updater drops an empty entry
			kept = append(kept, e)
		}
	}
	obj := live
	if !changed.Empty() {
		obj = merged
	}
	if own < 0 && len(fields) > 0 {
		e := self
		e.fields = fields
		if !changed.Empty() { // stamped when the object changed
			now := m.now().UTC()
			e.time, e.seconds = now.Format(time.RFC3339), now.Unix()
		}
		kept = append(kept, e)
	}
	out := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		out[k] = v
	}
	if len(kept) == 0 {
		return out, which, true
	}
	list, ok := encodeEntries(kept)
	if !ok {
		return nil, "", false
	}
	md := map[string]any{}
	if raw, ok := out["metadata"].(map[string]any); ok {
		md = make(map[string]any, len(raw)+1)
		for k, v := range raw {
			md[k] = v
		}
	}
	md["managedFields"] = list
	out["metadata"] = md
	return out, which, true
}

// mergeApplied is applied merged into live (the maps at path, strip the
// part of a strip set below it), and notes in ch what structured-merge-
// diff's comparison of live with the result finds added or modified: each
// new field and every field below it, each scalar now unequal. Neither
// input is modified; the result shares what did not change. A value of
// another type than live's, or a list or null where live has one, declines.
func mergeApplied(live, applied map[string]any, path fieldpath.Path, strip *stripNode, ch *mergeChanges) (map[string]any, bool) {
	out := make(map[string]any, len(live)+len(applied))
	for k, v := range live {
		out[k] = v
	}
	for k, av := range applied {
		var p fieldpath.Path
		if ch.paths != nil {
			name := k
			p = append(path[:len(path):len(path)], fieldpath.PathElement{FieldName: &name})
		}
		member, below := strip.stripped(k)
		lv, inLive := live[k]
		out[k] = av
		am, isMap := av.(map[string]any)
		switch {
		case !inLive:
			ch.any = true
			if ch.paths != nil {
				insertAll(ch.paths, p, av)
			}
		case isMap:
			lm, wasMap := lv.(map[string]any)
			if !wasMap {
				return nil, false
			}
			if len(lm) == 0 && len(am) == 0 {
				continue // equal
			}
			m, ok := mergeApplied(lm, am, p, below, ch)
			if !ok {
				return nil, false
			}
			out[k] = m
		default:
			switch av.(type) {
			case string, bool, int64, float64:
			default: // a list, a null: left to the typed path
				return nil, false
			}
			if _, wasMap := lv.(map[string]any); wasMap {
				return nil, false
			}
			if !sameScalar(lv, av) {
				ch.any = true
				ch.listed = ch.listed || member
				if ch.paths != nil {
					ch.paths.Insert(p)
				}
			}
		}
	}
	return out, true
}

// mergeChanges is what mergeApplied notes: the paths it added or modified
// (only when paths is not nil, as the general apply compares them with each
// entry: building them is most of a merge's allocations), whether there is
// any, and whether a modified scalar is one of the fields an everyField
// walk of live with the strip given lists (what the stored apply's one
// entry owns, so a conflict). An added field is never one of live's.
type mergeChanges struct {
	paths  *fieldpath.Set
	any    bool
	listed bool
}

// insertAll adds p and, for a map, every path below it.
func insertAll(set *fieldpath.Set, p fieldpath.Path, v any) {
	set.Insert(p)
	m, _ := v.(map[string]any)
	for k, c := range m {
		name := k
		insertAll(set, append(p[:len(p):len(p)], fieldpath.PathElement{FieldName: &name}), c)
	}
}
