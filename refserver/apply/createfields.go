package apply

import (
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/schema"
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

// createFields is the fieldsV1 of the entry a create of obj (normalised, of
// the Manager's kind) gives its writer; ok false declines.
func (m *Manager) createFields(obj map[string]any) (map[string]any, bool) {
	empty, err := m.emptyTyped()
	if err != nil {
		return nil, false
	}
	return mapFields(empty.Schema(), empty.TypeRef(), obj, stripSet)
}

// mapFields is the fieldsV1 of the map obj of type tr: each key a member
// ({}), a map's with its own fields below and "." for being a member too,
// except members of strip (the paths below obj that no entry records).
func mapFields(s *schema.Schema, tr schema.TypeRef, obj map[string]any, strip *fieldpath.Set) (map[string]any, bool) {
	a, ok := s.Resolve(tr)
	if !ok || a.Map == nil || a.Map.ElementRelationship == schema.Atomic {
		return nil, false
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		vt := a.Map.ElementType
		if f, declared := a.Map.FindField(k); declared {
			vt = f.Type
		} else if vt == (schema.TypeRef{}) {
			return nil, false // a field the schema does not declare
		}
		member, below := true, (*fieldpath.Set)(nil)
		if strip != nil {
			name := k // only these lookups take the key's address
			pe := fieldpath.PathElement{FieldName: &name}
			member = !strip.Members.Has(pe)
			below, _ = strip.Children.Get(pe)
		}
		switch v := v.(type) {
		case map[string]any:
			c, ok := mapFields(s, vt, v, below)
			if !ok {
				return nil, false
			}
			if member && len(c) > 0 {
				c["."] = map[string]any{}
			}
			if member || len(c) > 0 {
				out["f:"+k] = c
			}
		case string, bool, int64, float64:
			if !scalarFits(s, vt, v) {
				return nil, false
			}
			if member {
				out["f:"+k] = map[string]any{}
			}
		default: // a list, a null, or not a JSON value
			return nil, false
		}
	}
	return out, true
}

// scalarFits reports whether the typed conversion accepts the scalar v for
// type tr (structured-merge-diff's scalar validation).
func scalarFits(s *schema.Schema, tr schema.TypeRef, v any) bool {
	a, ok := s.Resolve(tr)
	if !ok || a.Scalar == nil {
		return false
	}
	switch *a.Scalar {
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
