package apply

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
)

// The walks of createfields.go ask the schema, for every key of an object,
// what type the key has and whether a scalar fits it, and ask the strip set
// whether the key is recorded. Answered from structured-merge-diff's types
// that is a Resolve, a FindField and two binary searches over path elements
// per key, half of a sole-owner update's walks. A walkType answers the same
// questions from Go maps, compiled once per Manager from the same schema.

// walkType is one schema type as the walks read it.
type walkType struct {
	// scalar is the type's scalar kind; nil when it is not a scalar (or
	// does not resolve), where a scalar value does not fit.
	scalar *schema.Scalar
	// mapOK: a map the walks descend into (resolved, a map, not atomic);
	// anything else declines a map value.
	mapOK bool
	// fields are the declared fields, as the map's FindField answers.
	fields map[string]*walkType
	// elem is the type of a key the map does not declare; nil when it has
	// none, where such a key declines.
	elem *walkType
}

// field is the type of the key k of a map of type t: ok false for a key
// the schema does not declare and the map has no element type for.
func (t *walkType) field(k string) (ft *walkType, declared, ok bool) {
	if ft, declared = t.fields[k]; declared {
		return ft, true, true
	}
	return t.elem, false, t.elem != nil
}

// compileWalkType resolves tr and every type reachable from it. Named
// types are compiled once each, which also ends the recursion of schemas
// that refer back to themselves.
func compileWalkType(s *schema.Schema, tr schema.TypeRef) *walkType {
	c := walkCompiler{s: s, seen: map[walkKey]*walkType{}}
	return c.compile(tr)
}

type walkCompiler struct {
	s    *schema.Schema
	seen map[walkKey]*walkType
}

// walkKey is a named type by its name when the reference is just the name;
// any other reference (inlined, or overriding the element relationship)
// resolves to a type of its own and is known by the reference itself.
type walkKey struct {
	name string
	ref  schema.TypeRef
}

func (c *walkCompiler) compile(tr schema.TypeRef) *walkType {
	key := walkKey{ref: tr}
	if tr.NamedType != nil && tr.ElementRelationship == nil && tr.Inlined == (schema.Atom{}) {
		key = walkKey{name: *tr.NamedType}
	}
	if t, ok := c.seen[key]; ok {
		return t
	}
	t := &walkType{}
	c.seen[key] = t // before the fields: a type that refers to itself finds itself
	a, ok := c.s.Resolve(tr)
	if !ok {
		return t
	}
	t.scalar = a.Scalar
	if a.Map == nil || a.Map.ElementRelationship == schema.Atomic {
		return t
	}
	t.mapOK = true
	t.fields = make(map[string]*walkType, len(a.Map.Fields))
	for _, f := range a.Map.Fields {
		if _, done := t.fields[f.Name]; done {
			continue
		}
		sf, _ := a.Map.FindField(f.Name) // which of duplicate names the library takes
		t.fields[f.Name] = c.compile(sf.Type)
	}
	if a.Map.ElementType != (schema.TypeRef{}) {
		t.elem = c.compile(a.Map.ElementType)
	}
	return t
}

// stripNode is a strip set (the fields below an object that no entry
// records) as the walks ask it, by field name.
type stripNode struct {
	members  map[string]bool
	children map[string]*stripNode
	// ignore is a key matchesFields passes over without reading it: live's
	// managedFields, the entry it matches ("" for none).
	ignore string
}

// compileStrip is s by field name: the walks only look field names up, so
// other path elements, which no field name equals, are left out.
func compileStrip(s *fieldpath.Set) *stripNode {
	n := &stripNode{members: map[string]bool{}, children: map[string]*stripNode{}}
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		if pe.FieldName != nil {
			n.members[*pe.FieldName] = true
		}
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if pe.FieldName != nil {
			child, _ := s.Children.Get(pe)
			n.children[*pe.FieldName] = compileStrip(child)
		}
	})
	return n
}

// stripped is whether the field k stays a member once s is taken away, and
// s's set below k (nil for none). A nil s strips nothing.
func (s *stripNode) stripped(k string) (member bool, below *stripNode) {
	if s == nil {
		return true, nil
	}
	return !s.members[k], s.children[k]
}

// updateStrip is stripSet compiled.
var updateStrip = compileStrip(stripSet)

// liveStrip is updateStrip for live, whose managedFields are not walked.
var liveStrip = func() *stripNode {
	s := compileStrip(stripSet)
	s.children["metadata"].ignore = "managedFields"
	return s
}()

// walkRoot is the compiled type of the Manager's kind; ok false when its
// schema does not give one (the walks then decline).
func (m *Manager) walkRoot() (*walkType, bool) {
	m.walk.once.Do(func() {
		empty, err := m.emptyTyped()
		if err != nil {
			return
		}
		m.walk.root = compileWalkType(empty.Schema(), empty.TypeRef())
	})
	return m.walk.root, m.walk.root != nil
}
