package registry

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
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
	return normalize(out)
}

// withoutManagedFields compares objects apart from field ownership.
func withoutManagedFields(obj Object) any {
	c := deepCopy(obj)
	delete(meta(c), "managedFields")
	return normalize(c)
}

// normalize round-trips through JSON so number types compare equal.
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
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
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
