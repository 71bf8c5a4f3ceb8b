package registry

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// sameJSON must agree with comparing normalized values, its definition.
func TestSameJSONIsNormalizedEquality(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b any
	}{
		{"number types", map[string]any{"n": int64(1)}, map[string]any{"n": 1.0}},
		{"int and int32", []any{1, int32(2)}, []any{int64(1), 2.0}},
		{"different numbers", map[string]any{"n": int64(1)}, map[string]any{"n": 1.5}},
		{"big ints that round alike", int64(1<<60 + 1), int64(1 << 60)},
		{"negative zero", -0.0, 0.0},
		{"nil map is null", map[string]any{"m": map[string]any(nil)}, map[string]any{"m": nil}},
		{"empty map is not null", map[string]any{"m": map[string]any{}}, map[string]any{"m": nil}},
		{"nil slice is null", []any(nil), nil},
		{"empty slice", []any{}, []any{}},
		{"missing key", map[string]any{"a": 1}, map[string]any{"a": 1, "b": nil}},
		{"strings", "x", "y"},
		{"bool and string", true, "true"},
		{"nested", map[string]any{"a": []any{map[string]any{"b": "c"}}}, map[string]any{"a": []any{map[string]any{"b": "c"}}}},
		{"invalid UTF-8 alike once replaced", "a\xffb", "a\xfeb"},
		{"NaN does not encode", math.NaN(), 1.0},
		{"unencodable both sides", map[string]any{"c": make(chan int)}, map[string]any{"c": func() {}}},
		{"other types", map[string]any{"t": struct{ A int }{1}}, map[string]any{"t": map[string]any{"A": 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := reflect.DeepEqual(normalize(tt.a), normalize(tt.b))
			if got := sameJSON(tt.a, tt.b); got != want {
				t.Errorf("sameJSON %v, normalized equality %v", got, want)
			}
		})
	}
}

// FuzzSameJSON: two JSON documents, each decoded both ways (float64 and
// int64 numbers), compare by sameJSON as their normalized forms do.
func FuzzSameJSON(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1.5,"x",null]}`), []byte(`{"b":[1.5,"x",null],"a":1.0}`))
	f.Add([]byte(`[9007199254740993]`), []byte(`[9007199254740992]`))
	f.Add([]byte(`{"m":{}}`), []byte(`{"m":null}`))
	f.Fuzz(func(t *testing.T, x, y []byte) {
		var vals []any
		for _, data := range [][]byte{x, y} {
			var plain, ints any
			if json.Unmarshal(data, &plain) != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(data, &ints) != nil {
				return
			}
			vals = append(vals, plain, ints)
		}
		for _, a := range vals {
			for _, b := range vals {
				want := reflect.DeepEqual(normalize(a), normalize(b))
				if got := sameJSON(a, b); got != want {
					t.Fatalf("%s vs %s: sameJSON %v, normalized equality %v", x, y, got, want)
				}
			}
		}
	})
}
