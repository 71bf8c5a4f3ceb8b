package apply

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// roundTrip is what jsonCopy stands for.
func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = sigsjson.UnmarshalCaseSensitivePreserveInts(b, &out)
	return out, err
}

func TestJSONCopyIsTheRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		ok   bool // jsonCopy takes it
	}{
		{"scalars", map[string]any{"s": "x", "b": true, "n": nil, "f": 1.5, "i": int64(7), "int": 3, "i32": int32(-4)}, true},
		{"integral floats", map[string]any{"a": 1.0, "b": -0.0, "c": 9007199254740991.0, "d": -1e15}, true},
		{"small and large non-integral", []any{1e-7, 123.456, -2.5e-300}, true},
		{"nested", map[string]any{"m": map[string]any{"l": []any{map[string]any{"x": 1.0}, "y"}}}, true},
		{"typed nils", map[string]any{"m": map[string]any(nil), "l": []any(nil)}, true},
		{"empty", map[string]any{"m": map[string]any{}, "l": []any{}}, true},
		{"integral float from 2^53", map[string]any{"f": 1152921504606846976.0}, false},
		{"huge float", map[string]any{"f": 1e300}, false},
		{"invalid UTF-8 value", map[string]any{"s": "a\xffb"}, false},
		{"invalid UTF-8 key", map[string]any{"\xff": "x"}, false},
		{"other type", map[string]any{"t": struct{ A int }{1}}, false},
		{"uint64", map[string]any{"u": uint64(1)}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := jsonCopyValue(tt.v)
			if ok != tt.ok {
				t.Fatalf("jsonCopy took it: %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			want, err := roundTrip(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("jsonCopy %#v, round trip %#v", got, want)
			}
		})
	}
	if _, ok := jsonCopyValue(math.NaN()); ok {
		t.Error("NaN does not encode; jsonCopy must leave it to the round trip")
	}
}

// The copy must not share maps or slices with its source.
func TestJSONCopyIsDeep(t *testing.T) {
	src := map[string]any{"m": map[string]any{"k": "v"}, "l": []any{"a"}}
	c := jsonCopy(src).(map[string]any)
	c["m"].(map[string]any)["k"] = "changed"
	c["l"].([]any)[0] = "changed"
	if src["m"].(map[string]any)["k"] != "v" || src["l"].([]any)[0] != "a" {
		t.Fatalf("source changed: %v", src)
	}
}

// FuzzJSONCopy: for any JSON document, decoded either way, jsonCopy gives
// the round trip or declines.
func FuzzJSONCopy(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":1.5,"c":[1,2.0,"x",null,true],"d":{"e":1e3}}`, `[1e21, 9007199254740993, -0.0]`, `"\ud800"`, `{"\u00ff":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var plain, ints any
		if json.Unmarshal(data, &plain) != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(data, &ints) != nil {
			return
		}
		for _, v := range []any{plain, ints} {
			got, ok := jsonCopyValue(v)
			if !ok {
				continue
			}
			want, err := roundTrip(v)
			if err != nil {
				t.Fatalf("%s: jsonCopy took a value that does not encode", data)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: jsonCopy %#v, round trip %#v", data, got, want)
			}
		}
	})
}
