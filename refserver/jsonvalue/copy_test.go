package jsonvalue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// roundTrip is what Copy stands for under each number rule.
func roundTrip(v any, numbers Numbers) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = decodeByRule(b, numbers, &out)
	return out, err
}

// decodeByRule decodes data into out with the library of the number rule.
func decodeByRule(data []byte, numbers Numbers, out any) error {
	switch numbers {
	case PreserveInts:
		return sigsjson.UnmarshalCaseSensitivePreserveInts(data, out)
	case AsWritten:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			return err
		}
		if _, err := dec.Token(); err != io.EOF {
			return fmt.Errorf("more after the value (%v)", err)
		}
		return nil
	}
	return json.Unmarshal(data, out)
}

var rules = []struct {
	name    string
	numbers Numbers
}{{"float64", Float64}, {"preserve-ints", PreserveInts}}

func TestCopyIsTheRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name           string
		v              any
		okFloat, okInt bool // Copy takes it under Float64, under PreserveInts
	}{
		{"scalars", map[string]any{"s": "x", "b": true, "n": nil, "f": 1.5, "i": int64(7), "int": 3, "i32": int32(-4)}, true, true},
		{"integral floats", map[string]any{"a": 1.0, "b": -0.0, "c": 9007199254740991.0, "d": -1e15}, true, true},
		{"small and large non-integral", []any{1e-7, 123.456, -2.5e-300}, true, true},
		{"nested", map[string]any{"m": map[string]any{"l": []any{map[string]any{"x": 1.0}, "y"}}}, true, true},
		{"typed nils", map[string]any{"m": map[string]any(nil), "l": []any(nil)}, true, true},
		{"empty", map[string]any{"m": map[string]any{}, "l": []any{}}, true, true},
		{"integral float from 2^53", map[string]any{"f": 1152921504606846976.0}, true, false},
		{"huge float", map[string]any{"f": 1e300}, true, false},
		{"int64 beyond 2^53", map[string]any{"i": int64(9007199254740993)}, true, true},
		{"invalid UTF-8 value", map[string]any{"s": "a\xffb"}, false, false},
		{"invalid UTF-8 key", map[string]any{"\xff": "x"}, false, false},
		{"other type", map[string]any{"t": struct{ A int }{1}}, false, false},
		{"uint64", map[string]any{"u": uint64(1)}, false, false},
		{"NaN", math.NaN(), false, false},
	} {
		for _, rule := range rules {
			t.Run(tt.name+"/"+rule.name, func(t *testing.T) {
				want := tt.okFloat
				if rule.numbers == PreserveInts {
					want = tt.okInt
				}
				got, ok := Copy(tt.v, rule.numbers)
				if ok != want {
					t.Fatalf("Copy took it: %v, want %v", ok, want)
				}
				if Stable(tt.v, rule.numbers) && (!ok || !reflect.DeepEqual(got, tt.v)) {
					t.Fatalf("Stable says %#v needs no copy; Copy gives %#v, %v", tt.v, got, ok)
				}
				if !ok {
					return
				}
				trip, err := roundTrip(tt.v, rule.numbers)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, trip) {
					t.Errorf("Copy %#v, round trip %#v", got, trip)
				}
			})
		}
	}
}

// The copy must not share maps or slices with its source.
func TestCopyIsDeep(t *testing.T) {
	src := map[string]any{"m": map[string]any{"k": "v"}, "l": []any{"a"}}
	for _, rule := range rules {
		c, _ := Copy(src, rule.numbers)
		c.(map[string]any)["m"].(map[string]any)["k"] = "changed"
		c.(map[string]any)["l"].([]any)[0] = "changed"
		if src["m"].(map[string]any)["k"] != "v" || src["l"].([]any)[0] != "a" {
			t.Fatalf("%s: source changed: %v", rule.name, src)
		}
	}
}

// FuzzJSONCopy: for any JSON document, decoded either way, Copy gives the
// round trip of its number rule or declines; a value Stable under a rule is
// its own copy, and what encoding/json decodes is Stable under Float64.
func FuzzJSONCopy(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":1.5,"c":[1,2.0,"x",null,true],"d":{"e":1e3}}`, `[1e21, 9007199254740993, -0.0]`, `"\ud800"`, `{"\u00ff":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var plain, ints any
		if json.Unmarshal(data, &plain) != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(data, &ints) != nil {
			return
		}
		if !Stable(plain, Float64) {
			t.Fatalf("%s: encoding/json's value is not Stable under Float64", data)
		}
		for _, v := range []any{plain, ints} {
			for _, rule := range rules {
				got, ok := Copy(v, rule.numbers)
				if Stable(v, rule.numbers) && (!ok || !reflect.DeepEqual(got, v)) {
					t.Fatalf("%s, %s: Stable, but Copy gives %#v, %v", data, rule.name, got, ok)
				}
				if !ok {
					continue
				}
				want, err := roundTrip(v, rule.numbers)
				if err != nil {
					t.Fatalf("%s: Copy took a value that does not encode", data)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s, %s: Copy %#v, round trip %#v", data, rule.name, got, want)
				}
			}
		}
	})
}

func TestStable(t *testing.T) {
	for _, tt := range []struct {
		name              string
		v                 any
		float64, preserve bool // Stable under Float64, under PreserveInts
	}{
		{"decoded with integers kept", map[string]any{"s": "x", "i": int64(3), "f": 1.5, "l": []any{true, nil}}, false, true},
		{"decoded as float64", map[string]any{"s": "x", "i": 3.0, "f": 1.5, "m": map[string]any{}}, true, false},
		{"int", map[string]any{"i": 3}, false, false},
		{"typed nil map", map[string]any{"m": map[string]any(nil)}, false, false},
		{"invalid UTF-8", "a\xffb", false, false},
		{"NaN", math.NaN(), false, false},
	} {
		if got := Stable(tt.v, Float64); got != tt.float64 {
			t.Errorf("%s: Stable under Float64 %v, want %v", tt.name, got, tt.float64)
		}
		if got := Stable(tt.v, PreserveInts); got != tt.preserve {
			t.Errorf("%s: Stable under PreserveInts %v, want %v", tt.name, got, tt.preserve)
		}
	}
}

// TestRoundTrips: RoundTrips of a scalar is whether Copy takes it, under
// every number rule.
func TestRoundTrips(t *testing.T) {
	for _, v := range []any{nil, true, "x", "a\xffb", int64(-3), 7, int32(4), 1.5, 3.0, -0.0, 9007199254740991.0,
		9007199254740992.0, -1e300, 1e-300, math.NaN(), math.Inf(1), uint(3), []any{}} {
		for _, numbers := range []Numbers{Float64, PreserveInts, AsWritten} {
			_, want := Copy(v, numbers)
			if _, isList := v.([]any); isList {
				want = false // not a scalar
			}
			if got := RoundTrips(v, numbers); got != want {
				t.Errorf("RoundTrips(%#v, %d) = %v, Copy took it: %v", v, numbers, got, want)
			}
		}
	}
}
