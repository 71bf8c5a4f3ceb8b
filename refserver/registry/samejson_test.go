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
		{"a shared map", map[string]any{"s": shared, "n": int64(1)}, map[string]any{"s": shared, "n": 1.0}},
		{"a shared map, other members differ", map[string]any{"s": shared, "n": int64(1)}, map[string]any{"s": shared, "n": 2.0}},
		{"a shared slice", []any{sharedList, "x"}, []any{sharedList, "x"}},
		{"a shared map that does not encode", map[string]any{"s": unencodable}, map[string]any{"s": unencodable}},
		{"null and a typed nil", map[string]any{"l": nil}, map[string]any{"l": []string(nil)}},
		{"invalid UTF-8 keys that encode alike", map[string]any{"\xff": "1", "a": "2"}, map[string]any{"\xfe": "1", "a": "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := reflect.DeepEqual(normalize(tt.a), normalize(tt.b))
			if got := sameJSON(tt.a, tt.b); got != want {
				t.Errorf("sameJSON %v, normalized equality %v", got, want)
			}
		})
	}
}

var (
	shared      = map[string]any{"k": "v", "m": map[string]any{"n": int64(3)}}
	sharedList  = []any{"a", map[string]any{"b": 1.5}}
	unencodable = map[string]any{"nan": math.NaN()}
)

// TestSameJSONUnencodableDifference: where sameJSON is not normalized
// equality, and that it does not depend on map order. A value that fails to
// encode normalizes to null, like null and like any other such value;
// sameJSON reports the plain difference it finds.
func TestSameJSONUnencodableDifference(t *testing.T) {
	a := map[string]any{"c": make(chan int), "n": 1, "x": "1", "y": "2", "z": "3"}
	for _, b := range []any{
		map[string]any{"c": func() {}, "n": 2, "x": "1", "y": "2", "z": "3"},
		nil,
	} {
		if !reflect.DeepEqual(normalize(a), normalize(b)) {
			t.Fatalf("normalize no longer makes %v and %v both null", a, b)
		}
		for range 100 {
			if sameJSON(a, b) || sameJSON(b, a) {
				t.Fatalf("sameJSON called %v and %v equal", a, b)
			}
		}
	}
}

// FuzzSameJSON: two JSON documents, each decoded both ways (float64 and
// int64 numbers), compare by sameJSON as their normalized forms do; so do
// a document and a copy of it that shares its members, one of them
// replaced by another document.
func FuzzSameJSON(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[1.5,"x",null]}`), []byte(`{"b":[1.5,"x",null],"a":1.0}`))
	f.Add([]byte(`[9007199254740993]`), []byte(`[9007199254740992]`))
	f.Add([]byte(`{"m":{}}`), []byte(`{"m":null}`))
	f.Add([]byte(`{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}`), []byte(`{"metadata":{"name":"a"}}`))
	f.Add([]byte(`{"metadata":null,"a":1}`), []byte(`{"a":1.0}`))
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
				if ao, ok := a.(map[string]any); ok {
					if bo, ok := b.(map[string]any); ok {
						want := sameJSON(withoutManagedFields(ao), withoutManagedFields(bo))
						if got := sameWithoutManagedFields(ao, bo); got != want {
							t.Fatalf("%s vs %s: sameWithoutManagedFields %v, sameJSON of the copies %v", x, y, got, want)
						}
					}
					// A copy sharing a's members, then with each member in
					// turn replaced by b.
					c := make(map[string]any, len(ao))
					for k, v := range ao {
						c[k] = v
					}
					for k := range ao {
						for _, v := range []any{ao[k], b} {
							c[k] = v
							want := reflect.DeepEqual(normalize(a), normalize(c))
							if got := sameJSON(a, c); got != want {
								t.Fatalf("%s vs its copy with %q: %v: sameJSON %v, normalized equality %v", x, k, v, got, want)
							}
							want = sameJSON(withoutManagedFields(ao), withoutManagedFields(c))
							if got := sameWithoutManagedFields(ao, c); got != want {
								t.Fatalf("%s vs its copy with %q: %v: sameWithoutManagedFields %v, sameJSON of the copies %v", x, k, v, got, want)
							}
						}
						c[k] = ao[k]
					}
				}
			}
		}
	})
}

// sameWithoutManagedFields must agree with sameJSON of the copies
// withoutManagedFields makes, its definition.
func TestSameWithoutManagedFields(t *testing.T) {
	mf := []any{map[string]any{"manager": "a"}}
	for _, tt := range []struct {
		name string
		a, b Object
	}{
		{"equal", Object{"metadata": map[string]any{"name": "x"}, "data": map[string]any{"k": "v"}}, Object{"data": map[string]any{"k": "v"}, "metadata": map[string]any{"name": "x"}}},
		{"managedFields differ", Object{"metadata": map[string]any{"name": "x", "managedFields": mf}}, Object{"metadata": map[string]any{"name": "x"}}},
		{"managedFields only", Object{"metadata": map[string]any{"managedFields": mf}}, Object{}},
		{"metadata differs", Object{"metadata": map[string]any{"name": "x"}}, Object{"metadata": map[string]any{"name": "y"}}},
		{"metadata missing and empty", Object{}, Object{"metadata": map[string]any{}}},
		{"metadata nil and empty", Object{"metadata": nil}, Object{"metadata": map[string]any{}}},
		{"metadata not a map", Object{"metadata": "x"}, Object{"metadata": map[string]any{}}},
		{"metadata nil map", Object{"metadata": map[string]any(nil)}, Object{}},
		{"extra member", Object{"metadata": map[string]any{}, "a": 1}, Object{"metadata": map[string]any{}}},
		{"extra null member", Object{"a": nil}, Object{}},
		{"numbers", Object{"spec": map[string]any{"n": int64(2)}}, Object{"spec": map[string]any{"n": 2.0}}},
		{"other value in metadata", Object{"metadata": map[string]any{"t": struct{}{}}}, Object{"metadata": map[string]any{"t": map[string]any{}}}},
		{"other value in managedFields", Object{"metadata": map[string]any{"managedFields": make(chan int)}}, Object{}},
		{"invalid UTF-8 in managedFields", Object{"metadata": map[string]any{"name": "x", "managedFields": []any{"\xff"}}}, Object{"metadata": map[string]any{"name": "x"}}},
		{"invalid UTF-8 elsewhere, equal as JSON", Object{"data": map[string]any{"k": "\xff"}}, Object{"data": map[string]any{"k": "\xfe"}}},
		{"invalid UTF-8 in a metadata key", Object{"metadata": map[string]any{"\xff": "1"}}, Object{"metadata": map[string]any{"\xfe": "1"}}},
		{"nil objects", nil, Object{}},
		{"same key count, other keys", Object{"metadata": map[string]any{"managedFields": mf, "a": "1"}}, Object{"metadata": map[string]any{"b": "1", "a": "1"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := sameJSON(withoutManagedFields(tt.a), withoutManagedFields(tt.b))
			if got := sameWithoutManagedFields(tt.a, tt.b); got != want {
				t.Errorf("a~b: %v, want %v", got, want)
			}
			if got := sameWithoutManagedFields(tt.b, tt.a); got != want {
				t.Errorf("b~a: %v, want %v", got, want)
			}
		})
	}
}
