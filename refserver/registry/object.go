package registry

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// Helpers for JSON-shaped objects: a missing or mistyped field reads as its
// zero value.

func meta(obj Object) map[string]any {
	m, ok := obj["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		obj["metadata"] = m
	}
	return m
}

// Meta returns obj's metadata map (created when missing).
func Meta(obj Object) map[string]any { return meta(obj) }

func str(v any) string {
	s, _ := v.(string)
	return s
}

func sliceOf(v any) []any {
	s, _ := v.([]any)
	return s
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func boolOf(v any) bool {
	b, _ := v.(bool)
	return b
}

func toInt(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case json.Number:
		i, _ := n.Int64()
		return i
	}
	return 0
}

// specOf is everything but metadata and status: what bumps generation.
func specOf(obj Object) any {
	out := Object{}
	for k, v := range obj {
		if k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" {
			out[k] = v
		}
	}
	return out
}

// withoutManagedFields is obj apart from field ownership (a shallow copy:
// read it, do not change it).
func withoutManagedFields(obj Object) any {
	c := make(Object, len(obj))
	for k, v := range obj {
		c[k] = v
	}
	m, _ := obj["metadata"].(map[string]any)
	cm := make(map[string]any, len(m)) // a missing metadata reads as empty, as meta gives it
	for k, v := range m {
		if k != "managedFields" {
			cm[k] = v
		}
	}
	c["metadata"] = cm
	return c
}

// sameWithoutManagedFields is sameJSON(withoutManagedFields(a),
// withoutManagedFields(b)) without the copies: every write compares the
// object it is about to store with the stored one.
func sameWithoutManagedFields(a, b Object) bool {
	if same, sure := sameQuickWithoutManagedFields(a, b); sure {
		return same
	}
	return sameJSON(withoutManagedFields(a), withoutManagedFields(b))
}

// normalize round-trips through JSON so number types compare equal.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// convertJSON decodes a JSON-shaped value into a Go value of a typed field
// (a label selector, a role reference) through its JSON.
func convertJSON(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// sameJSON reports whether a and b are equal once normalized (the same JSON
// document, whatever Go types hold the numbers): in place when sameQuick is
// sure (plain JSON-shaped values), through normalize otherwise.
func sameJSON(a, b any) bool {
	if same, sure := sameQuick(a, b); sure {
		return same
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// plainJSON: v encodes to JSON and decodes back to itself up to number
// types (maps, slices, UTF-8 strings, bools, nil, finite numbers).
func plainJSON(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if !utf8.ValidString(k) || !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range t {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return jsonvalue.RoundTrips(v, jsonvalue.Float64) // a scalar: every number reads back as a float64
}

func isNull(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return t == nil
	case []any:
		return t == nil
	}
	return false
}

// number is the float64 a number decodes to after encoding.
func number(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case int32:
		return float64(t), true
	}
	return 0, false
}

func equalJSON(a, b any) bool {
	return fmt.Sprint(normalize(a)) == fmt.Sprint(normalize(b))
}

// deepCopy copies through JSON (numbers come back as float64).
func deepCopy(obj Object) Object {
	if obj == nil {
		return nil
	}
	if c, ok := copyJSON(obj); ok {
		return c.(map[string]any)
	}
	b, _ := json.Marshal(obj)
	var out Object
	_ = json.Unmarshal(b, &out)
	return out
}

// DeepCopy copies a JSON-shaped map.
func DeepCopy(obj Object) Object { return deepCopy(obj) }

// newUID makes a random (version 4) UUID.
func newUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return formatUID(b)
}

// formatUID writes b as 8-4-4-4-12 lower-case hex digits (one allocation,
// where fmt took six).
func formatUID(b [16]byte) string {
	var out [36]byte
	at := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[at] = '-'
			at++
		}
		out[at], out[at+1] = jsonvalue.Hex[c>>4], jsonvalue.Hex[c&0xf]
		at += 2
	}
	return string(out[:])
}
