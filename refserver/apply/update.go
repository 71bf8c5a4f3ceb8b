package apply

import (
	"sort"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// The Update fast path: what managedfields' FieldManager.Update computes
// (decode the entries, skip untracked objects, diff live against updated on
// the typed values, take changed fields from every other manager, record the
// rest for the writer minus the server-owned metadata, encode and sort)
// without its chain of managers, Unstructured reflection and copies. It
// answers only where it is sure to match the library and declines (ok
// false) everywhere else; the library stays the reference.

// maxUpdateManagers is the library's cap on Update entries: above it the
// oldest are merged into "ancient-changes", which the fast path leaves to it.
const maxUpdateManagers = 10

// stripSet is the metadata the library never records for an Update.
var stripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// typeMetaSet is what the empty object a create compares against holds.
var typeMetaSet = fieldpath.NewSet(fieldpath.MakePathOrDie("apiVersion"), fieldpath.MakePathOrDie("kind"))

// mfEntry is one decoded managedFields entry.
type mfEntry struct {
	manager, operation, apiVersion, subresource string
	time                                        string // canonical RFC3339 UTC, "" for none
	seconds                                     int64
	// fields is the entry's fieldsV1; set is it read as a field set (by
	// withSets), nil for an entry the walks built from fieldsV1 alone.
	set    *fieldpath.Set
	fields map[string]any
	// read is the set withSets read from fields when fields is exactly
	// what encoding that set gives (setToFields): while set is still read,
	// fields is its encoding, and encodeEntry keeps it.
	read *fieldpath.Set
}

func (e *mfEntry) sameManager(o *mfEntry) bool {
	// The library's manager identity: an Apply entry's ignores apiVersion.
	return e.manager == o.manager && e.operation == o.operation && e.subresource == o.subresource &&
		(e.operation == "Apply" || e.apiVersion == o.apiVersion)
}

func (m *Manager) now() time.Time {
	if m.clock != nil {
		return m.clock()
	}
	return time.Now()
}

// fastUpdate is Update's fast path; ok false means decline.
func (m *Manager) fastUpdate(live, updated map[string]any, manager string) (out map[string]any, ok bool) {
	// The library's identifier JSON would rewrite an invalid manager; a
	// create compared with a zero object other than {} is the library's.
	if !utf8.ValidString(manager) || live == nil && m.zero != nil || m.subresource != "" {
		return nil, false
	}
	// The common writes first, reading the objects as they come
	// (createfields.go): a create, and an update by the one writer owning
	// every field.
	if out, ok := m.createUpdate(live, updated, manager); ok {
		m.heard("create")
		return out, true
	}
	if out, ok := m.soleOwnerUpdate(live, updated, manager); ok {
		m.heard("sole owner")
		return out, true
	}
	// Both objects as the library reads them: integral numbers int64 (its
	// JSON copy), apiVersion and kind set. Objects already their own JSON
	// copy (jsonvalue.Stable) are read in place; only updated's top level
	// and metadata are copied, for the object written (withMetadataCopy).
	if updated, ok = m.normalise(updated); !ok {
		return nil, false
	}
	create := live == nil
	if create {
		live = map[string]any{}
	} else if live, ok = m.normalise(live); !ok {
		return nil, false
	}
	updMeta, ok := updated["metadata"].(map[string]any)
	if !ok || updMeta == nil || hasLastApplied(updMeta) {
		return nil, false
	}
	liveMeta, _ := live["metadata"].(map[string]any)
	if _, present := live["metadata"]; present && liveMeta == nil || hasLastApplied(liveMeta) {
		return nil, false
	}

	// The entries: updated's, or live's when updated has none (a reset,
	// an empty list, is left to the library).
	var (
		entries []mfEntry
		decoded []any // the list entries came from
	)
	if raw, present := updMeta["managedFields"]; present {
		list, ok := raw.([]any)
		if !ok || len(list) == 0 {
			return nil, false
		}
		if entries, ok = m.decodeEntries(list); !ok {
			return nil, false
		}
		decoded = list
	} else if raw, present := liveMeta["managedFields"]; present {
		list, ok := raw.([]any)
		if !ok {
			return nil, false
		}
		if entries, ok = m.decodeEntries(list); !ok {
			return nil, false
		}
		decoded = list
	}

	// The object written: updated without managedFields.
	out, outMeta := withMetadataCopy(updated, updMeta)

	// An existing object nobody tracks stays untracked.
	if len(entries) == 0 {
		if uid, _ := liveMeta["uid"].(string); uid != "" {
			return out, true
		}
	}

	if !withSets(entries) {
		return nil, false
	}

	// A create that brings no entries: the writer owns every field of the
	// object, which one walk of it against the schema names (createFields)
	// without building, comparing and converting field sets.
	if create && len(entries) == 0 {
		if fields, ok := m.createFields(out); ok {
			if len(fields) > 0 {
				self := m.updateEntry(manager, nil)
				outMeta["managedFields"] = []any{entryObject(&self, fields)}
			}
			m.heard("create")
			return out, true
		}
	}

	// live's managedFields only ever show in the comparison as removed, and
	// no set owns them: when they are a list the library would read (and
	// so the schema accepts), they are left out of the typed value.
	if raw, present := liveMeta["managedFields"]; present && !ownsManagedFields(entries) {
		if list, ok := raw.([]any); ok {
			if sameList(list, decoded) || decodes(m, list) {
				live, _ = withMetadataCopy(live, liveMeta)
			}
		}
	}

	liveTyped, err := m.typedLive(live, create)
	if err != nil {
		return nil, false
	}
	newTyped, err := m.tc.ObjectToTyped(&unstructured.Unstructured{Object: out}, typed.AllowDuplicates)
	if err != nil {
		return nil, false
	}

	// merge.Updater.Update: sets reconciled with the schema, then every
	// manager loses what changed and what was removed.
	for i := range entries {
		r, err := typed.ReconcileFieldSetWithSchema(entries[i].set, liveTyped)
		if err != nil {
			return nil, false
		}
		if r != nil {
			entries[i].set = r
		}
	}
	var compare *typed.Comparison
	if create {
		added, err := addedFromEmpty(newTyped)
		if err != nil {
			return nil, false
		}
		compare = &typed.Comparison{Added: added, Modified: fieldpath.NewSet(), Removed: fieldpath.NewSet()}
	} else if compare, err = liveTyped.Compare(newTyped); err != nil {
		return nil, false
	}
	changed := compare.Modified.Union(compare.Added)
	kept := entries[:0]
	for _, e := range entries {
		if conflict := e.set.Intersection(changed); !conflict.Empty() {
			e.set = e.set.Difference(conflict)
		}
		if !compare.Removed.Empty() {
			e.set = e.set.Difference(compare.Removed)
		}
		if !e.set.Empty() {
			kept = append(kept, e)
		}
	}
	entries = kept

	// The writer's own fields: what changed, less the server's metadata,
	// added to what it already owned and stamped with the time.
	cur := changed // what was removed already left every entry, the writer's too
	if !cur.Empty() {
		cur = cur.Difference(stripSet)
	}
	if !cur.Empty() {
		self := m.updateEntry(manager, cur)
		found := false
		for i := range entries {
			if entries[i].sameManager(&self) {
				self.set = cur.Union(entries[i].set)
				entries[i] = self
				found = true
				break
			}
		}
		if !found {
			entries = append(entries, self)
		}
	}

	updaters := 0
	for i := range entries {
		if entries[i].operation == "Update" {
			updaters++
		}
	}
	if updaters > maxUpdateManagers {
		return nil, false
	}
	if len(entries) == 0 {
		return out, true
	}
	list, ok := encodeEntries(entries)
	if !ok {
		return nil, false
	}
	outMeta["managedFields"] = list
	return out, true
}

func (m *Manager) heard(which string) {
	if m.walked != nil {
		m.walked(which)
	}
}

// updateEntry is manager's Update entry of set, stamped now.
func (m *Manager) updateEntry(manager string, set *fieldpath.Set) mfEntry {
	now := m.now().UTC()
	if manager == "" {
		manager = "unknown"
	}
	return mfEntry{manager: manager, operation: "Update", apiVersion: m.gv,
		time: now.Format(time.RFC3339), seconds: now.Unix(), set: set}
}

// encodeEntries is the managedFields list the library's encoding gives for
// entries: each entry encoded, in its order (operation, time in seconds,
// manager, apiVersion, subresource). It sorts entries in place.
func encodeEntries(entries []mfEntry) ([]any, bool) {
	sort.Slice(entries, func(i, j int) bool {
		p, q := &entries[i], &entries[j]
		if p.operation != q.operation {
			return p.operation < q.operation
		}
		if p.seconds != q.seconds {
			return p.seconds < q.seconds
		}
		if p.manager != q.manager {
			return p.manager < q.manager
		}
		if p.apiVersion != q.apiVersion {
			return p.apiVersion < q.apiVersion
		}
		return p.subresource < q.subresource
	})
	list := make([]any, len(entries))
	for i := range entries {
		e, ok := encodeEntry(&entries[i])
		if !ok {
			return nil, false
		}
		list[i] = e
	}
	return list, true
}

// addedFromEmpty is what comparing the empty object (emptyTyped) with tv
// finds added: everything but apiVersion and kind, that is tv's fields and
// the maps and lists holding them, without walking both objects.
func addedFromEmpty(tv *typed.TypedValue) (*fieldpath.Set, error) {
	leaves, err := tv.ToFieldSet()
	if err != nil {
		return nil, err
	}
	added := &fieldpath.Set{}
	addPrefixes(added, leaves)
	return added.Difference(typeMetaSet), nil
}

// addPrefixes adds to out every path of s and every prefix of one: the
// members of s, and each child that holds a path, as a member and with its
// own paths and prefixes below it. One walk of s's tree, where inserting
// each prefix of each path would descend from the root every time.
func addPrefixes(out, s *fieldpath.Set) {
	s.Members.Iterate(func(pe fieldpath.PathElement) { out.Members.Insert(pe) })
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		child, _ := s.Children.Get(pe)
		if child.Empty() {
			return // no path goes through it
		}
		out.Members.Insert(pe)
		addPrefixes(out.Children.Descend(pe), child)
	})
}

// typedLive is live as a typed value (duplicates allowed, as the library
// reads a stored object), or for a create the empty object's.
func (m *Manager) typedLive(live map[string]any, create bool) (*typed.TypedValue, error) {
	if create {
		return m.emptyTyped()
	}
	return m.tc.ObjectToTyped(&unstructured.Unstructured{Object: live}, typed.AllowDuplicates)
}

// emptyTyped is the typed value of the object a create compares against,
// only apiVersion and kind: built once, as comparing only reads it.
func (m *Manager) emptyTyped() (*typed.TypedValue, error) {
	m.empty.once.Do(func() {
		o := map[string]any{"apiVersion": m.gv, "kind": m.gvk.Kind}
		m.empty.value, m.empty.err = m.tc.ObjectToTyped(&unstructured.Unstructured{Object: o}, typed.AllowDuplicates)
	})
	return m.empty.value, m.empty.err
}

// withMetadataCopy is obj copied down to its metadata md, without
// managedFields: the object an Update writes, obj left as it was.
func withMetadataCopy(obj, md map[string]any) (out, outMeta map[string]any) {
	out = make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	outMeta = make(map[string]any, len(md))
	for k, v := range md {
		if k != "managedFields" {
			outMeta[k] = v
		}
	}
	out["metadata"] = outMeta
	return out, outMeta
}

// sameList reports whether a and b are one list (the registry hands
// updated live's managedFields).
func sameList(a, b []any) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

func decodes(m *Manager, list []any) bool {
	entries, ok := m.decodeEntries(list)
	return ok && withSets(entries)
}

var (
	peMetadata      = fieldpath.PathElement{FieldName: ptr("metadata")}
	peManagedFields = fieldpath.PathElement{FieldName: ptr("managedFields")}
)

func ptr(s string) *string { return &s }

// ownsManagedFields reports whether any entry's set has metadata.managedFields
// or anything under it.
func ownsManagedFields(entries []mfEntry) bool {
	for i := range entries {
		md, ok := entries[i].set.Children.Get(peMetadata)
		if !ok {
			continue
		}
		if _, ok := md.Children.Get(peManagedFields); ok || md.Members.Has(peManagedFields) {
			return true
		}
	}
	return false
}

// hasLastApplied reports kubectl's last-applied-configuration annotation,
// which the library's chain consults for kubectl: such objects are left to it.
func hasLastApplied(md map[string]any) bool {
	a, _ := md["annotations"].(map[string]any)
	_, ok := a["kubectl.kubernetes.io/last-applied-configuration"]
	return ok
}

// normalise is obj as the library's object makes it. An obj that is its
// own JSON copy (jsonvalue.Stable) is read in place: copied at the top level
// only when its kind is missing. ok false declines.
func (m *Manager) normalise(obj map[string]any) (map[string]any, bool) {
	if !jsonvalue.Stable(obj, jsonvalue.PreserveInts) {
		c, _ := jsonCopy(obj).(map[string]any)
		return c, c != nil && m.setKind(c)
	}
	av, _ := obj["apiVersion"].(string)
	k, _ := obj["kind"].(string)
	if av != "" && k != "" {
		return obj, av == m.gv && k == m.gvk.Kind
	}
	c := make(map[string]any, len(obj)+2)
	for k, v := range obj {
		c[k] = v
	}
	return c, m.setKind(c)
}

// setKind gives obj the Manager's apiVersion and kind when it lacks either,
// as the library's object does; other kinds are declined.
func (m *Manager) setKind(obj map[string]any) bool {
	av, _ := obj["apiVersion"].(string)
	k, _ := obj["kind"].(string)
	if av == "" || k == "" {
		obj["apiVersion"], obj["kind"] = m.gv, m.gvk.Kind
		return true
	}
	return av == m.gv && k == m.gvk.Kind
}

// decodeEntries decodes a managedFields list the library would decode
// without error into distinct managers at the Manager's version, with
// times that survive its round trip; anything else declines. Their
// fieldsV1 are read into sets only by withSets.
func (m *Manager) decodeEntries(list []any) ([]mfEntry, bool) {
	entries := make([]mfEntry, 0, len(list)+1)
	for _, item := range list {
		e, ok := m.decodeEntry(item)
		if !ok {
			return nil, false
		}
		for i := range entries {
			if entries[i].sameManager(&e) {
				return nil, false
			}
		}
		entries = append(entries, e)
	}
	return entries, true
}

// decodeEntry is one entry of decodeEntries' list.
func (m *Manager) decodeEntry(item any) (e mfEntry, ok bool) {
	raw, ok := item.(map[string]any)
	if !ok {
		return e, false
	}
	for k, v := range raw {
		switch k {
		case "manager", "operation", "apiVersion", "subresource", "fieldsType", "time":
			s, ok := v.(string)
			if !ok {
				return e, false
			}
			switch k {
			case "manager":
				e.manager = s
			case "operation":
				e.operation = s
			case "apiVersion":
				e.apiVersion = s
			case "subresource":
				e.subresource = s
			case "fieldsType":
				if s != "FieldsV1" {
					return e, false
				}
			case "time":
				seconds, ok := entryTime(s)
				if !ok {
					return e, false
				}
				e.time, e.seconds = s, seconds
			}
		case "fieldsV1":
			if e.fields, ok = v.(map[string]any); !ok || e.fields == nil {
				return e, false
			}
		default:
			return e, false
		}
	}
	if _, ok := raw["fieldsType"]; !ok {
		return e, false
	}
	return e, (e.operation == "Apply" || e.operation == "Update") && e.apiVersion == m.gv
}

// entryTime is the Unix time of an entry's time s, ok when the library
// reads s back as written: RFC3339 in UTC, whole seconds, not the zero time.
func entryTime(s string) (seconds int64, ok bool) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.IsZero() {
		return 0, false
	}
	var buf [64]byte
	if string(t.UTC().AppendFormat(buf[:0], time.RFC3339)) != s {
		return 0, false
	}
	return t.Unix(), true
}

// withSets reads each entry's fieldsV1 into its set, as fieldpath.Set's
// FromJSON would; false if one would not read. decodeEntries leaves that
// to the paths that use sets: the sole-owner walk reads the fieldsV1 alone.
func withSets(entries []mfEntry) bool {
	for i := range entries {
		e := &entries[i]
		set, canonical, ok := fieldsToSet(e.fields)
		if !ok {
			return false
		}
		e.set = set
		if canonical {
			e.read = set
		}
	}
	return true
}

// fieldsToSet reads a fieldsV1 map as fieldpath.Set's FromJSON reads its
// JSON, refusing what that would read loosely (unknown or repeated path
// elements, "." with content, non-object values). canonical: fields is
// what setToFields gives for the set, as far as one walk can tell (field
// names only, no "." at the top or alone in a map).
func fieldsToSet(fields map[string]any) (s *fieldpath.Set, canonical, ok bool) {
	_, dot := fields["."]
	canonical = !dot
	s, _, ok = readFields(fields, &canonical)
	if !ok {
		return nil, false, false
	}
	if s == nil {
		s = &fieldpath.Set{}
	}
	return s, canonical, true
}

func readFields(fields map[string]any, canonical *bool) (children *fieldpath.Set, isMember, ok bool) {
	for k, v := range fields {
		sub, ok := v.(map[string]any)
		if !ok || sub == nil {
			return nil, false, false
		}
		if k == "." {
			if len(sub) != 0 {
				return nil, false, false
			}
			isMember = true
			continue
		}
		pe, err := fieldpath.DeserializePathElement(k)
		if err != nil {
			return nil, false, false
		}
		// A key, value or index element may be written other than its
		// serialization; {".": {}} is encoded as {}.
		if pe.FieldName == nil || len(sub) == 1 && sub["."] != nil {
			*canonical = false
		}
		grand, childIsMember, ok := readFields(sub, canonical)
		if !ok {
			return nil, false, false
		}
		if children == nil {
			children = &fieldpath.Set{}
		} else if children.Members.Has(pe) {
			return nil, false, false
		} else if _, dup := children.Children.Get(pe); dup {
			return nil, false, false
		}
		if childIsMember {
			children.Members.Insert(pe)
		}
		if grand != nil {
			*children.Children.Descend(pe) = *grand
		}
	}
	if children == nil {
		isMember = true
	}
	return children, isMember, true
}

// encodeEntry is the entry as the library's encoding and SetManagedFields
// leave it in the object.
func encodeEntry(e *mfEntry) (map[string]any, bool) {
	if e.set == nil || e.set == e.read {
		return entryObject(e, e.fields), true
	}
	fields, ok := setToFields(e.set)
	if !ok {
		return nil, false
	}
	return entryObject(e, fields), true
}

// entryObject is e in the object with fields, its set's fieldsV1.
func entryObject(e *mfEntry, fields map[string]any) map[string]any {
	out := map[string]any{"operation": e.operation, "apiVersion": e.apiVersion, "fieldsType": "FieldsV1", "fieldsV1": fields}
	if e.manager != "" {
		out["manager"] = e.manager
	}
	if e.time != "" {
		out["time"] = e.time
	}
	if e.subresource != "" {
		out["subresource"] = e.subresource
	}
	return out
}

// setToFields is s's FieldsV1 JSON decoded into map[string]any: members as
// {}, children as their contents, "." marking a child that is also a member.
func setToFields(s *fieldpath.Set) (map[string]any, bool) {
	// A field name is written raw after "f:" (SerializePathElement's form).
	key := func(pe fieldpath.PathElement) (string, error) {
		if pe.FieldName != nil {
			return "f:" + *pe.FieldName, nil
		}
		return fieldpath.SerializePathElement(pe)
	}
	out := make(map[string]any, s.Members.Size()+s.Children.Size())
	ok := true
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		k, err := key(pe)
		if err != nil {
			ok = false
			return
		}
		out[k] = map[string]any{}
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		child, _ := s.Children.Get(pe)
		k, err := key(pe)
		if err != nil || !ok {
			ok = false
			return
		}
		c, cok := setToFields(child)
		if !cok {
			ok = false
			return
		}
		if _, member := out[k]; member && len(c) != 0 {
			c["."] = map[string]any{}
		}
		out[k] = c
	})
	return out, ok
}
