package registry

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// roundTrip is what deepCopy did before copyJSON: the JSON round trip.
func roundTrip(obj Object) Object {
	b, _ := json.Marshal(obj)
	var out Object
	_ = json.Unmarshal(b, &out)
	return out
}

func TestCopyJSONMatchesRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  Object
		fast bool // copyJSON copies it (else deepCopy falls back)
	}{
		{"empty", Object{}, true},
		{"scalars", Object{"s": "<a&b>\u2028", "b": true, "n": nil, "f": 1.5, "neg0": math.Copysign(0, -1)}, true},
		{"ints", Object{"i64": int64(9007199254740993), "i": 7, "i32": int32(-3), "big": float64(1e21)}, true},
		{"nested", Object{"metadata": map[string]any{"name": "x", "labels": map[string]any{"a": "b"}}, "items": []any{map[string]any{"x": int64(1)}, []any{}, nil}}, true},
		{"nil containers", Object{"m": map[string]any(nil), "s": []any(nil)}, true},
		{"typed slice", Object{"s": []string{"a"}}, false},
		{"typed map", Object{"m": map[string]string{"a": "b"}}, false},
		{"invalid utf8", Object{"s": "a\xffb"}, false},
		{"invalid utf8 key", Object{"a\xff": "b"}, false},
		{"json number", Object{"n": json.Number("12")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fast := copyJSON(map[string]any(tc.obj))
			if fast != tc.fast {
				t.Fatalf("copyJSON ok = %v, want %v", fast, tc.fast)
			}
			got, want := deepCopy(tc.obj), roundTrip(tc.obj)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("deepCopy = %#v, round trip = %#v", got, want)
			}
			gb, _ := json.Marshal(got)
			wb, _ := json.Marshal(want)
			if string(gb) != string(wb) {
				t.Fatalf("encodings differ: %s vs %s", gb, wb)
			}
		})
	}
	// The copy shares nothing with the original.
	orig := Object{"metadata": map[string]any{"name": "x"}, "l": []any{"a"}}
	c := deepCopy(orig)
	meta(c)["name"] = "y"
	c["l"].([]any)[0] = "b"
	if meta(orig)["name"] != "x" || orig["l"].([]any)[0] != "a" {
		t.Fatalf("copy aliases the original: %v", orig)
	}
}

func BenchmarkDeepCopy(b *testing.B) {
	obj := Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c", "namespace": "n", "uid": "0b3c", "resourceVersion": "12", "labels": map[string]any{"a": "b"},
			"managedFields": []any{map[string]any{"manager": "m", "operation": "Update", "fieldsV1": map[string]any{"f:data": map[string]any{"f:k": map[string]any{}}}}}},
		"data": map[string]any{"k": "v", "n": "1"}}
	for _, bc := range []struct {
		name string
		copy func(Object) Object
	}{{"walk", deepCopy}, {"roundtrip", roundTrip}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = bc.copy(obj)
			}
		})
	}
}

// TestWriteCopy: WriteCopy gives what jsonvalue.Copy gives (integers
// int64), with a new object and metadata every time; below them it shares
// only a kind's values that are their own round trip, and only for a kind
// whose update changes nothing in place (no Prepare) at its storage version.
func TestWriteCopy(t *testing.T) {
	obj := func() Object {
		return Object{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1"}, "generation": float64(2),
				"managedFields": []any{map[string]any{"manager": "m", "fieldsV1": map[string]any{"f:data": map[string]any{}}}}},
			"data": map[string]any{"k": "v"},
			"spec": map[string]any{"n": float64(3), "f": 1.5},
		}
	}
	prepared := configMapKind()
	prepared.Prepare = func(obj, old Object) {}
	for _, c := range []struct {
		name    string
		kind    *Kind
		version string
		shares  bool
	}{
		{"a kind without Prepare, storage version", configMapKind(), "v1", true},
		{"a kind with Prepare", prepared, "v1", false},
		{"a version other than the storage version", configMapKind(), "v2", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := obj()
			got, ok := WriteCopy(c.kind, c.version, in)
			if !ok {
				t.Fatal("WriteCopy declined")
			}
			want, _ := jsonvalue.Copy(obj(), jsonvalue.PreserveInts)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("WriteCopy = %#v, want %#v", got, want)
			}
			// What a write sets, the object's and metadata's members, never
			// reaches in.
			got["data"], meta(got)["name"] = "x", "y"
			delete(meta(got), "labels")
			if !reflect.DeepEqual(in, obj()) {
				t.Fatalf("writing the copy's object or metadata changed the original: %#v", in)
			}
			// Integers were copied as int64 either way; other values are
			// shared only when the kind allows it.
			if _, isInt := got["spec"].(map[string]any)["n"].(int64); !isInt {
				t.Fatalf("spec.n is %T, want int64", got["spec"].(map[string]any)["n"])
			}
			same := func(a, b any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
			again, _ := WriteCopy(c.kind, c.version, in)
			for _, v := range []struct {
				name     string
				from, to any
			}{
				{"data", in["data"], again["data"]},
				{"labels", meta(in)["labels"], meta(again)["labels"]},
				{"managedFields", meta(in)["managedFields"], meta(again)["managedFields"]},
			} {
				if same(v.from, v.to) != c.shares {
					t.Errorf("%s shared = %v, want %v", v.name, !c.shares, c.shares)
				}
			}
			if same(in["spec"], again["spec"]) {
				t.Error("spec, which holds an integral float64, was shared")
			}
		})
	}
	if _, ok := WriteCopy(configMapKind(), "v1", Object{"s": "a\xffb"}); ok {
		t.Error("WriteCopy took a string that is not UTF-8")
	}
}
