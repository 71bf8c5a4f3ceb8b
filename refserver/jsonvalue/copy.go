// Package jsonvalue copies JSON-shaped Go values (maps with string keys,
// slices, strings, bools, nil and numbers) as a JSON round trip would,
// without encoding them: a deep copy through the bytes sat on every write.
package jsonvalue

import (
	"math"
	"unicode/utf8"
)

// Numbers says what a number becomes after the round trip.
type Numbers int

const (
	// Float64: every number is a float64, as encoding/json decodes into any.
	Float64 Numbers = iota
	// PreserveInts: integral numbers are int64 and others float64, as
	// sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts decodes.
	PreserveInts
	// AsWritten: every number is a json.Number holding its text, as
	// encoding/json's Decoder with UseNumber decodes (Parse only: Copy and
	// Stable decline it).
	AsWritten
)

// maxExactFloat is 2^53: below it an integral float64 prints as its exact integer.
const maxExactFloat = 1 << 53

// Copy deep-copies v as encoding it to JSON and decoding that with the
// given number rule would; nil maps and slices stay nil. ok is false for a
// value whose round trip it cannot vouch for (other Go types, strings that
// are not UTF-8, NaN and infinities, and under PreserveInts integral floats
// from 2^53 on, whose shortest decimal form may not be their exact value):
// the caller takes the round trip then.
func Copy(v any, numbers Numbers) (any, bool) {
	if numbers == AsWritten {
		return nil, false
	}
	switch t := v.(type) {
	case nil, bool:
		return t, true
	case string:
		return t, utf8.ValidString(t)
	case map[string]any:
		if t == nil {
			return nil, true
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			c, ok := Copy(e, numbers)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			out[k] = c
		}
		return out, true
	case []any:
		if t == nil {
			return nil, true
		}
		out := make([]any, len(t))
		for i, e := range t {
			c, ok := Copy(e, numbers)
			if !ok {
				return nil, false
			}
			out[i] = c
		}
		return out, true
	case int64:
		return number(float64(t), t, numbers), true
	case int:
		return number(float64(t), int64(t), numbers), true
	case int32:
		return number(float64(t), int64(t), numbers), true
	case float64:
		if !RoundTrips(t, numbers) {
			return nil, false
		}
		if numbers == PreserveInts && t == math.Trunc(t) {
			return int64(t), true
		}
		return t, true
	}
	return nil, false
}

// RoundTrips reports whether Copy(v, numbers) succeeds for a scalar v
// (nil, a bool, a string, an int64, int, int32 or float64), without making
// the copy: a reader that only compares v's value with others may read it
// in place where Stable is false (an integral float64 under PreserveInts).
func RoundTrips(v any, numbers Numbers) bool {
	if numbers == AsWritten {
		return false
	}
	switch t := v.(type) {
	case nil, bool, int64, int, int32:
		return true
	case string:
		return utf8.ValidString(t)
	case float64:
		switch {
		case math.IsNaN(t) || math.IsInf(t, 0):
			return false // the round trip reports the error
		case numbers == PreserveInts && t == math.Trunc(t):
			return math.Abs(t) < maxExactFloat
		}
		return true
	}
	return false
}

func number(f float64, i int64, numbers Numbers) any {
	if numbers == PreserveInts {
		return i
	}
	return f
}

// Stable reports whether v is already its own round trip under the number
// rule, that is what Copy(v, numbers) returns (an equal value, not a shared
// one): a caller may then read v in place instead of copying it. Nil maps
// and slices are not (the round trip gives null, not a typed nil), nor,
// under PreserveInts, integral float64s (they come back as int64).
func Stable(v any, numbers Numbers) bool {
	if numbers == AsWritten {
		return false
	}
	switch t := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(t)
	case int64:
		return numbers == PreserveInts
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return false
		}
		return numbers == Float64 || t != math.Trunc(t)
	case map[string]any:
		if t == nil {
			return false
		}
		for k, e := range t {
			if !utf8.ValidString(k) || !Stable(e, numbers) {
				return false
			}
		}
		return true
	case []any:
		if t == nil {
			return false
		}
		for _, e := range t {
			if !Stable(e, numbers) {
				return false
			}
		}
		return true
	}
	return false
}
