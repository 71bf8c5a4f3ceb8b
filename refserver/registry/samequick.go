package registry

import (
	"math"
	"reflect"
	"unicode/utf8"
)

// sameQuick is sameJSON's first try, one walk of both values: a map or
// slice both hold (the same one: a merge patch's or an apply's object
// shares values with the current object) is equal without being read, and
// a difference between plain values (plainJSON's) is the answer as soon as
// it is found. sure is false when no such difference was found and a value
// that is not plain was met: only normalize decides those. A walk of every
// member that does not stop at such a value makes the answer independent of
// map order.
//
// It differs from normalized equality only where normalize fails: a value
// that does not encode (a NaN, a channel, a function anywhere in it)
// normalizes to null, equal to null and to any other such value, where
// sameQuick reports the plain difference it finds. Such a value could not
// be stored.
func sameQuick(a, b any) (same, sure bool) {
	an, bn := isNull(a), isNull(b)
	if an || bn {
		return an && bn, an && bn || plainKind(a) && plainKind(b)
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false, plainKind(b)
		}
		if reflect.ValueOf(x).UnsafePointer() == reflect.ValueOf(y).UnsafePointer() {
			return true, true
		}
		return sameMembers(x, y, "")
	case []any:
		y, ok := b.([]any)
		if !ok {
			return false, plainKind(b)
		}
		if len(x) != len(y) {
			return false, true
		}
		if len(x) > 0 && &x[0] == &y[0] {
			return true, true
		}
		sure = true
		for i := range x {
			s, su := sameQuick(x[i], y[i])
			if su && !s {
				return false, true
			}
			sure = sure && su
		}
		return sure, sure
	case string:
		y, ok := b.(string)
		switch {
		case !ok:
			return false, plainKind(b)
		case x == y:
			return true, true
		}
		// Strings that are not UTF-8 may encode alike.
		return false, utf8.ValidString(x) && utf8.ValidString(y)
	case bool:
		y, ok := b.(bool)
		if !ok {
			return false, plainKind(b)
		}
		return x == y, true
	}
	fa, aNum := number(a)
	if !aNum || math.IsNaN(fa) || math.IsInf(fa, 0) {
		return false, false
	}
	fb, bNum := number(b)
	if !bNum {
		return false, plainKind(b)
	}
	if math.IsNaN(fb) || math.IsInf(fb, 0) {
		return false, false
	}
	return fa == fb, true
}

// sameMembers is sameQuick of two maps without their member skip ("" skips
// nothing), a nil map reading as an empty one. A map with a key that is not
// UTF-8 is left to normalize, which may make two keys one.
func sameMembers(x, y map[string]any, skip string) (same, sure bool) {
	if !keysValid(x, skip) || !keysValid(y, skip) {
		return false, false
	}
	nx, ny := len(x), len(y)
	if _, ok := x[skip]; ok && skip != "" {
		nx--
	}
	if _, ok := y[skip]; ok && skip != "" {
		ny--
	}
	if nx != ny {
		return false, true
	}
	sure = true
	for k, e := range x {
		if skip != "" && k == skip {
			continue
		}
		f, ok := y[k]
		if !ok {
			return false, true
		}
		s, su := sameQuick(e, f)
		if su && !s {
			return false, true
		}
		sure = sure && su
	}
	return sure, sure
}

// sameQuickWithoutManagedFields is sameQuick of withoutManagedFields(a) and
// withoutManagedFields(b), without the copies.
func sameQuickWithoutManagedFields(a, b Object) (same, sure bool) {
	// The copies hold every member but metadata as it is, and metadata as
	// a map (empty when missing or not a map) without managedFields.
	am, _ := a["metadata"].(map[string]any)
	bm, _ := b["metadata"].(map[string]any)
	s1, su1 := sameMembers(a, b, "metadata")
	if su1 && !s1 {
		return false, true
	}
	s2, su2 := sameMembers(am, bm, "managedFields")
	if su2 && !s2 {
		return false, true
	}
	return su1 && su2, su1 && su2
}

// keysValid reports whether m's keys but skip are UTF-8.
func keysValid(m map[string]any, skip string) bool {
	for k := range m {
		if (skip == "" || k != skip) && !utf8.ValidString(k) {
			return false
		}
	}
	return true
}

// plainKind reports whether v is of a type plainJSON takes (its contents
// aside): what sameQuick may call different from a value of another type.
func plainKind(v any) bool {
	switch t := v.(type) {
	case nil, bool, string, int, int32, int64, map[string]any, []any:
		return true
	case float64:
		return !math.IsNaN(t) && !math.IsInf(t, 0)
	}
	return false
}
