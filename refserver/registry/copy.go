package registry

import (
	"math"
	"unicode/utf8"
)

// copyJSON copies a JSON-shaped value exactly as a json.Marshal and
// json.Unmarshal round trip does (numbers become float64), without the
// encoding: deepCopy sat on every write. ok is false for anything the walk
// does not know to copy identically (other Go types, invalid UTF-8, NaN),
// and the caller takes the round trip.
func copyJSON(v any) (out any, ok bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string:
		return x, utf8.ValidString(x)
	case bool:
		return x, true
	case float64:
		return x, !math.IsNaN(x) && !math.IsInf(x, 0)
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case map[string]any:
		if x == nil {
			return nil, true
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			c, ok := copyJSON(e)
			if !ok || !utf8.ValidString(k) {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		if x == nil {
			return nil, true
		}
		s := make([]any, len(x))
		for i, e := range x {
			c, ok := copyJSON(e)
			if !ok {
				return nil, false
			}
			s[i] = c
		}
		return s, true
	}
	return nil, false
}
