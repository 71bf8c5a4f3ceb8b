package registry

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// MarshalJSON must give json.Marshal's bytes and errors.
func TestMarshalJSONIsJSONMarshal(t *testing.T) {
	deep := any("x")
	for range maxJSONDepth + 10 {
		deep = []any{map[string]any{"d": deep}}
	}
	cycle := map[string]any{}
	cycle["self"] = cycle
	for _, tt := range []struct {
		name string
		v    any
	}{
		{"object", map[string]any{"b": 1.5, "a": []any{int64(1), 2, int32(3), nil, true, false}, "c": map[string]any{}}},
		{"escapes", []any{"<a href=\"x\">&amp;</a>", "tab\tnew\nline\rcr\bbs\fff\x00\x1f\x7f", "\\", "\u2028\u2029", "é中文😀"}},
		{"invalid UTF-8", []any{"a\xffb", "\xc3", "\xed\xa0\x80", map[string]any{"k\xff": 1}}},
		{"floats", []any{0.0, -0.0, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, -1e-300, 5e-324, math.MaxFloat64, 1e-9}},
		{"integers", []any{int64(math.MinInt64), int64(math.MaxInt64), -1, 0}},
		{"typed nils", map[string]any{"m": map[string]any(nil), "l": []any(nil)}},
		{"other types", map[string]any{"bytes": []byte("hi"), "strs": []string{"a"}, "num": json.Number("12"), "u": uint64(7), "f32": float32(0.1), "s": struct{ A int }{1}}},
		{"deep", deep},
		{"NaN", map[string]any{"x": math.NaN()}},
		{"Inf", []any{math.Inf(-1)}},
		{"cycle", cycle},
		{"unsupported", map[string]any{"c": make(chan int)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := json.Marshal(tt.v)
			got, err := MarshalJSON(tt.v)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Errorf("MarshalJSON %s, %v\njson.Marshal %s, %v", got, err, want, wantErr)
			}
		})
	}
}

// FuzzMarshalJSON: any JSON document, decoded with float64 or int64
// numbers, encodes as json.Marshal encodes it.
func FuzzMarshalJSON(f *testing.F) {
	for _, s := range []string{`{"a":1,"b":[1.5,"x<>&",null,true],"c":{"\u2028":"\ud800"}}`, `{"metadata":{"name":"a","resourceVersion":"1"},"kind":"X","spec":{}}`, `[1e21,1e-7,-0,123456789012345678901234]`, `"\u0000\u001f\"\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var plain, ints any
		if json.Unmarshal(data, &plain) != nil || sigsjson.UnmarshalCaseSensitivePreserveInts(data, &ints) != nil {
			return
		}
		for _, v := range []any{plain, ints, map[string]any{string(data): string(data)}} {
			want, wantErr := json.Marshal(v)
			got, err := MarshalJSON(v)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
				t.Fatalf("%q: MarshalJSON %s, %v; json.Marshal %s, %v", data, got, err, want, wantErr)
			}
			if obj, ok := v.(map[string]any); ok && obj != nil {
				want, wantErr := storedByCopy(obj, "g/v1", "K")
				got, err := appendStored(nil, obj, "g/v1", "K", nil, nil)
				if (err != nil) != (wantErr != nil) || (err == nil && !bytes.Equal(got, want)) {
					t.Fatalf("%q: appendStored %s, %v; by copy %s, %v", data, got, err, want, wantErr)
				}
			}
		}
	})
}

// storedByCopy is what appendStored writes, by its definition: a copy of
// obj with apiVersion, kind and metadata set, encoded by json.Marshal.
func storedByCopy(obj map[string]any, apiVersion, kind string) ([]byte, error) {
	c := make(map[string]any, len(obj)+3)
	for f, v := range obj {
		c[f] = v
	}
	md, _ := obj["metadata"].(map[string]any)
	cm := make(map[string]any, len(md))
	for f, v := range md {
		if f != "resourceVersion" {
			cm[f] = v
		}
	}
	c["metadata"], c["apiVersion"], c["kind"] = cm, apiVersion, kind
	return json.Marshal(c)
}

// appendStored must give the bytes and errors of encoding the copy.
func TestAppendStored(t *testing.T) {
	deep := any("x")
	for range maxJSONDepth + 10 {
		deep = []any{map[string]any{"d": deep}}
	}
	for _, tt := range []struct {
		name string
		obj  map[string]any
	}{
		{"configmap", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "resourceVersion": "7", "labels": map[string]any{"x": "y"}}, "data": map[string]any{"k": "v"}}},
		{"no type meta", map[string]any{"metadata": map[string]any{"name": "a"}, "spec": []any{1.5, nil}}},
		{"other type meta", map[string]any{"apiVersion": "x/v9", "kind": "Other", "metadata": map[string]any{}}},
		{"no metadata", map[string]any{"data": map[string]any{}}},
		{"nil metadata", map[string]any{"metadata": map[string]any(nil)}},
		{"metadata not a map", map[string]any{"metadata": "x"}},
		{"empty", map[string]any{}},
		{"keys around the set ones", map[string]any{"a": 1, "kinda": 2, "metadatb": 3, "apiVersiom": 4, "z": "<&>"}},
		{"deep value", map[string]any{"spec": deep}},
		{"deep metadata value", map[string]any{"metadata": map[string]any{"annotations": deep}}},
		{"unsupported value", map[string]any{"spec": make(chan int)}},
		{"unsupported metadata value", map[string]any{"metadata": map[string]any{"x": func() {}}}},
		{"NaN", map[string]any{"spec": math.NaN()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, wantErr := storedByCopy(tt.obj, "v1", "ConfigMap")
			got, err := appendStored(nil, tt.obj, "v1", "ConfigMap", nil, nil)
			if (err != nil) != (wantErr != nil) || (err == nil && !bytes.Equal(got, want)) {
				t.Errorf("appendStored %s, %v\nby copy %s, %v", got, err, want, wantErr)
			}
		})
	}
}

// BenchmarkEncodeStored: the bytes a write stores for a configmap with
// labels and one managedFields entry, as the bench load's objects are.
func BenchmarkEncodeStored(b *testing.B) {
	obj, err := parseStored([]byte(`{"apiVersion":"v1","kind":"ConfigMap","data":{"index":"7","payload":"0123456789abcdef0123456789abcdef"},` +
		`"metadata":{"creationTimestamp":"2026-11-28T10:00:00Z","labels":{"load":"apiconform","shard":"7"},"managedFields":[{"apiVersion":"v1",` +
		`"fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:index":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:load":{},"f:shard":{}}}},` +
		`"manager":"apiconform","operation":"Update","time":"2026-11-28T10:00:00Z"}],"name":"cm-00007","namespace":"bench","resourceVersion":"12",` +
		`"uid":"3f1c2a8e-4b7d-4e0a-9c1b-2d5e6f7a8b9c"}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	buf := make([]byte, 0, 1024)
	for b.Loop() {
		if buf, err = appendStored(buf[:0], obj, "v1", "ConfigMap", nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}
