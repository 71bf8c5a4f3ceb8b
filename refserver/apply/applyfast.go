package apply

import (
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The Apply fast path: what managedfields' FieldManager.Apply computes
// (decode live's entries; a "before-first-apply" Update entry for an
// object nobody tracks; the patch and live as typed values;
// merge.Updater.Apply, which merges, prunes what the manager stopped
// applying and takes or refuses other managers' fields; the manager's set
// less the server's metadata; its time when the object changed; encode
// and sort) without the chain of managers around merge.Updater, the
// Unstructured reflection and the copies, and without the prune where it
// provably changes nothing (updaterApply). It declines (ok false) whatever
// it is not sure to answer as the library does, conflicts included: the
// library then builds the answer, 409 and all.

// beforeFirstApply names the Update entry that takes the fields of an
// untracked object the first apply finds.
const beforeFirstApply = "before-first-apply"

// selfKey is the applying manager's key in the ManagedFields the fast path
// hands merge.Updater when it has no entry yet (the others are indexes).
const selfKey = "self"

var (
	peAPIVersion = fieldpath.PathElement{FieldName: ptr("apiVersion")}
	peKind       = fieldpath.PathElement{FieldName: ptr("kind")}
)

// errOtherVersion is sameVersion's refusal: the fast path then declines.
var errOtherVersion = errors.New("apply: conversion to another version")

// sameVersion is merge.Updater's Converter for a Manager whose entries are
// all at its own version: the library's converter returns such a value
// unchanged (its apiVersion is already the target), after building an
// object to read that apiVersion from. Anything else is refused.
type sameVersion struct{ gv string }

func (c sameVersion) Convert(tv *typed.TypedValue, version fieldpath.APIVersion) (*typed.TypedValue, error) {
	if string(version) == c.gv {
		if o, ok := tv.AsValue().Unstructured().(map[string]any); ok {
			if av, _ := o["apiVersion"].(string); av == c.gv {
				return tv, nil
			}
		}
	}
	return nil, errOtherVersion
}

func (sameVersion) IsMissingVersionError(error) bool { return false }

// fastApply is Apply's fast path; ok false means decline. The result may
// share values with live and applied, which it does not modify.
func (m *Manager) fastApply(live, applied map[string]any, manager string, force bool) (out map[string]any, ok bool) {
	if m.subresource != "" {
		return nil, false
	}
	// The strategy's defaulting runs in the library on a changed object:
	// left to it. A manager name that is not UTF-8 changes in its JSON
	// identifier.
	if m.Default != nil || !utf8.ValidString(manager) {
		return nil, false
	}
	// The patch as the library reads it (see normalise), of the Manager's
	// kind (else a 400), without managedFields (else a 400) and without
	// kubectl's last-applied annotation (which the library keeps in step).
	if applied, ok = m.normalise(applied); !ok {
		return nil, false
	}
	if raw, present := applied["metadata"]; present {
		md, ok := raw.(map[string]any)
		if !ok || hasLastApplied(md) {
			return nil, false
		}
		if _, present := md["managedFields"]; present {
			return nil, false
		}
	}

	// live's entries: a list every entry of which decodes (the library
	// fails on any other), none owning managedFields, apiVersion or kind
	// (left out of the typed value, or read by conversion).
	create := live == nil
	var entries []mfEntry
	if !create {
		if live, ok = m.normalise(live); !ok {
			return nil, false
		}
		var liveMeta map[string]any
		if raw, present := live["metadata"]; present {
			if liveMeta, ok = raw.(map[string]any); !ok || hasLastApplied(liveMeta) {
				return nil, false
			}
		}
		if raw, present := liveMeta["managedFields"]; present {
			list, ok := raw.([]any)
			if !ok {
				return nil, false
			}
			if entries, ok = m.decodeEntries(list); !ok || !withSets(entries) || ownsManagedFields(entries) || ownsTypeMeta(entries) {
				return nil, false
			}
			// Both sides of the merge keep live's managedFields, which the
			// result's replace: they change nothing, so they are left out.
			live, _ = withMetadataCopy(live, liveMeta)
		}
	}

	// An applier's first apply to a tracked object of maps and scalars, or
	// its unchanged re-apply (applyplain.go).
	if len(entries) > 0 {
		if out, which, ok := m.plainApply(live, applied, entries, manager); ok {
			m.heard(which)
			return out, true
		}
	}

	// The typed values: the patch refuses duplicates, live allows them.
	patchTyped, err := m.tc.ObjectToTyped(&unstructured.Unstructured{Object: applied})
	if err != nil {
		return nil, false
	}
	liveTyped, err := m.typedLive(live, create)
	if err != nil {
		return nil, false
	}

	// An existing object without entries: an Update from the empty object
	// to live records its fields (less the server's metadata) for
	// before-first-apply, now. A create has none to record.
	if len(entries) == 0 && !create {
		added, err := addedFromEmpty(liveTyped)
		if err != nil {
			return nil, false
		}
		if set := added.Difference(stripSet); !set.Empty() {
			now := m.now().UTC()
			entries = append(entries, mfEntry{manager: beforeFirstApply, operation: "Update", apiVersion: m.gv,
				time: now.Format(time.RFC3339), seconds: now.Unix(), set: set})
		}
	}

	// The managers by key: each entry's index, the applier's own entry
	// (an Apply one of the same name, "unknown" for none) or selfKey.
	self := mfEntry{manager: manager, operation: "Apply", apiVersion: m.gv}
	if self.manager == "" {
		self.manager = "unknown"
	}
	own := -1
	managed := make(fieldpath.ManagedFields, len(entries)+1)
	for i := range entries {
		e := &entries[i]
		managed[strconv.Itoa(i)] = fieldpath.NewVersionedSet(e.set, fieldpath.APIVersion(e.apiVersion), e.operation == "Apply")
		if e.sameManager(&self) {
			own = i
		}
	}
	key := selfKey
	if own >= 0 {
		key = strconv.Itoa(own)
		self.time, self.seconds = entries[own].time, entries[own].seconds
	}
	merged, result, err := m.updaterApply(liveTyped, patchTyped, managed, key, force)
	if err != nil {
		// A conflict (merge.Conflicts) or anything else: the library's.
		return nil, false
	}

	// The entries left, the applier's without the server's metadata and
	// stamped when the object changed (merged nil: it did not).
	kept := make([]mfEntry, 0, len(result))
	for k, vs := range result {
		if k == key {
			set := vs.Set().Difference(stripSet)
			if set.Empty() {
				continue
			}
			e := self
			e.set = set
			if merged != nil {
				now := m.now().UTC()
				e.time, e.seconds = now.Format(time.RFC3339), now.Unix()
			}
			kept = append(kept, e)
			continue
		}
		i, err := strconv.Atoi(k)
		if err != nil || i < 0 || i >= len(entries) || vs.Applied() != (entries[i].operation == "Apply") ||
			string(vs.APIVersion()) != entries[i].apiVersion {
			return nil, false
		}
		e := entries[i]
		e.set = vs.Set()
		kept = append(kept, e)
	}

	// The object: the merged one, or live (the empty object on a create)
	// when nothing changed; then its managedFields.
	var obj map[string]any
	switch {
	case merged != nil:
		if obj, ok = merged.AsValue().Unstructured().(map[string]any); !ok {
			return nil, false
		}
	case create:
		obj = map[string]any{"apiVersion": m.gv, "kind": m.gvk.Kind}
	default:
		obj = live
	}
	out = make(map[string]any, len(obj)+1)
	for k, v := range obj {
		out[k] = v
	}
	if len(kept) == 0 {
		// The library removes managedFields; neither side had any.
		return out, true
	}
	list, ok := encodeEntries(kept)
	if !ok {
		return nil, false
	}
	var md map[string]any
	switch raw := out["metadata"].(type) {
	case map[string]any:
		md = make(map[string]any, len(raw)+1)
		for k, v := range raw {
			md[k] = v
		}
	case nil:
		md = map[string]any{}
	default:
		return nil, false
	}
	md["managedFields"] = list
	out["metadata"] = md
	return out, true
}

// ownsTypeMeta reports whether any entry's set has apiVersion or kind,
// which only a hand-written entry does: pruning could take them from the
// object, and sameVersion reads apiVersion.
func ownsTypeMeta(entries []mfEntry) bool {
	for i := range entries {
		s := entries[i].set
		for _, pe := range []fieldpath.PathElement{peAPIVersion, peKind} {
			if s.Members.Has(pe) {
				return true
			}
			if _, ok := s.Children.Get(pe); ok {
				return true
			}
		}
	}
	return false
}

// updaterApply is merge.Updater.Apply for the Manager's version. When the
// applier has an entry, the updater prunes what the applier applied before
// and applies no longer (most of an apply's cost); where pruneChangesNothing
// proves that pruning gives the merged object back, the result of an
// updater given no such entry (so no pruning) is the answer.
func (m *Manager) updaterApply(liveTyped, patchTyped *typed.TypedValue, managed fieldpath.ManagedFields, key string, force bool) (*typed.TypedValue, fieldpath.ManagedFields, error) {
	version := fieldpath.APIVersion(m.gv)
	own, ok := managed[key]
	if !ok {
		return m.updater.Apply(liveTyped, patchTyped, version, managed, key, force)
	}
	// The applier's set as the updater reconciles it, which it prunes by.
	last, err := typed.ReconcileFieldSetWithSchema(own.Set(), liveTyped)
	if err != nil {
		return nil, nil, err
	}
	if last == nil {
		last = own.Set()
	}
	if !last.Empty() && !touchesMetadata(last) {
		others := make(fieldpath.ManagedFields, len(managed)-1)
		for k, vs := range managed {
			if k != key {
				others[k] = vs
			}
		}
		merged, result, err := m.updater.Apply(liveTyped, patchTyped, version, others, key, force)
		skip := err == nil && pruneChangesNothing(liveTyped, merged, result[key], others, last)
		if m.prunes != nil {
			m.prunes(skip)
		}
		if skip {
			return merged, result, nil
		}
	} else if m.prunes != nil && !last.Empty() {
		m.prunes(false) // pruning runs, unproven
	}
	return m.updater.Apply(liveTyped, patchTyped, version, managed, key, force)
}

// touchesMetadata reports whether set has metadata or a field under it.
// A stored object's uid and creationTimestamp lie under metadata and no
// manager owns them, so pruneChangesNothing would refuse such a set: the
// updater is then not run a first time for nothing. (Deciding here only
// chooses between a proof and the full call, never the answer.)
func touchesMetadata(set *fieldpath.Set) bool {
	if set.Members.Has(peMetadata) {
		return true
	}
	_, ok := set.Children.Get(peMetadata)
	return ok
}

// pruneChangesNothing reports whether merge.Updater's prune gives back the
// merged object (nil: live) for an applier whose reconciled set before was
// last and is now applied, with the other managers' sets.
//
// The prune removes last's fields from the merged object, adds back (1)
// every field some manager owns or the removal left, and removes of the rest
// (2) those in last. With R the merged object's fields no manager owns
// (named fields counted as members, as the updater counts them): when every
// field of R survives the removal of last, (1) removes nothing, so (2)
// finds nothing removed and the merged object is the answer. A field r
// survives, unchanged and at the same path, when no field of last is r,
// above it or under it, nor under a list item on r's path (removing a key
// field of that item would change the item's path): apart checks that.
func pruneChangesNothing(liveTyped, merged *typed.TypedValue, applied fieldpath.VersionedSet, others fieldpath.ManagedFields, last *fieldpath.Set) bool {
	if merged == nil {
		merged = liveTyped // the updater found them equal
	}
	if applied == nil {
		return false
	}
	owned := applied.Set()
	for _, vs := range others {
		s, err := typed.ReconcileFieldSetWithSchema(vs.Set(), liveTyped)
		if err != nil {
			return false
		}
		if s == nil {
			s = vs.Set()
		}
		owned = owned.Union(s)
	}
	fields, err := merged.ToFieldSet()
	if err != nil {
		return false
	}
	sc, tr := merged.Schema(), merged.TypeRef()
	unowned := fields.EnsureNamedFieldsAreMembers(sc, tr).Difference(owned.EnsureNamedFieldsAreMembers(sc, tr))
	var rs []fieldpath.Path
	unowned.Iterate(func(p fieldpath.Path) { rs = append(rs, p.Copy()) })
	ok := true
	last.EnsureNamedFieldsAreMembers(sc, tr).Iterate(func(l fieldpath.Path) {
		for _, r := range rs {
			if ok && !apart(r, l) {
				ok = false
			}
		}
	})
	return ok
}

// apart reports whether removing l (and what is under it) from an object
// leaves the field r and the list items on its path as they are: the paths
// part, through field names only, at a field name or at list items named by
// key or value (removing an item named by its index renumbers the rest).
func apart(r, l fieldpath.Path) bool {
	for i := 0; i < len(r) && i < len(l); i++ {
		if !r[i].Equals(l[i]) {
			return r[i].Index == nil && l[i].Index == nil
		}
		if r[i].FieldName == nil {
			return false // l is this list item on r's path or under it
		}
	}
	return false // l is r, above it or under it
}
