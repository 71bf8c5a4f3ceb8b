package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"sort"
	"strings"
	"testing"

	sigsjson "sigs.k8s.io/json"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
	"github.com/apiconform/apiconform/refserver/storage"
)

// spliceBoth checks the splice against decode + MarshalJSON (list items)
// and decode + MarshalObject (a single object) in every form for a stored
// value of k that the splice must accept.
func spliceBoth(t *testing.T, r *Registry, k *Kind, kv storage.KeyValue) {
	t.Helper()
	for _, bare := range []bool{false, true} {
		want, err := r.decodeItem(k, k.StorageVersion(), kv, bare)
		if err != nil {
			t.Fatalf("decode %s: %v", kv.Value, err)
		}
		got, ok := spliceStored(kv.Value, kv.ModRevision, k.APIVersion(k.StorageVersion()), k.Kind, itemForm(bare))
		if !ok {
			t.Fatalf("bare=%v: splice refused %s", bare, kv.Value)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("bare=%v:\nsplice %s\ndecode %s", bare, got, want)
		}
		if enc, err := r.encodeItem(k, k.StorageVersion(), kv, bare); err != nil || !bytes.Equal(enc, want) {
			t.Fatalf("bare=%v: encodeItem %s, %v; want %s", bare, enc, err, want)
		}
	}
	obj, err := r.decode(k, k.StorageVersion(), kv, 0)
	if err != nil {
		t.Fatalf("decode %s: %v", kv.Value, err)
	}
	want, err := MarshalObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := spliceStored(kv.Value, kv.ModRevision, k.APIVersion(k.StorageVersion()), k.Kind, formObject)
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("object form: splice %s, %v\ndecode %s", got, ok, want)
	}
}

// The splice gives decode + MarshalJSON's bytes for objects written through
// the registry: configmaps with escapes, unicode and every metadata field a
// write sets, custom resources with nested arrays and objects.
func TestSpliceStoredObjects(t *testing.T) {
	ctx := context.Background()
	r, _ := crdFixture(t, storage.NewMemory(storage.Options{}), nil)
	wk := r.Lookup("example.com", "widgets")
	cmK := r.Lookup("", "configmaps")
	for _, tt := range []struct {
		name string
		k    *Kind
		obj  Object
		opts WriteOptions
	}{
		{"configmap", cmK, Object{"metadata": map[string]any{"name": "plain"}, "data": map[string]any{"a": "b"}}, WriteOptions{}},
		{"escapes and unicode", cmK, Object{"metadata": map[string]any{"name": "esc",
			"annotations": map[string]any{"example.com/html": `<a href="x">&amp;</a>`, "example.com/ctl": "tab\tnl\ncr\rbs\bff\f\x00\x1f\x7f\\"}},
			"data": map[string]any{"uni": "é中文😀\u2028\u2029\ufffd", "quote": `"`, "slash": "/a/b"}}, WriteOptions{}},
		{"labels, finalizers, managedFields", cmK, Object{"metadata": map[string]any{"name": "full", "labels": map[string]any{"a": "b"},
			"finalizers": []any{"example.com/f"}, "generateName": "gen-"},
			"binaryData": map[string]any{"bin": "AAEC"}, "immutable": false}, WriteOptions{FieldManager: "test"}},
		{"generateName only", cmK, Object{"metadata": map[string]any{"generateName": "gen-"}}, WriteOptions{}},
		{"custom resource", wk, Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w1"},
			"spec": map[string]any{
				"list":   []any{1.0, 2.5, -3e-7, 1e21, true, nil, "x", []any{}, map[string]any{}, []any{map[string]any{"z": 1.0, "a": []any{"<>"}}}},
				"nested": map[string]any{"b": map[string]any{"c": map[string]any{"d": []any{[]any{[]any{"deep"}}}}}, "A": 0.0, "_": -1.0},
				"big":    123456789012345.0,
				"keys":   map[string]any{"a<b": 1.0, "a=": 2.0, "a": 3.0, "é": 4.0, "Z": 5.0},
			},
			"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}, WriteOptions{FieldManager: "test"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := r.Create(ctx, tt.k, tt.k.StorageVersion(), "default", tt.obj, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			kv, err := r.store.Get(ctx, keyOf(tt.k, "default", str(meta(out)["name"])), 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("stored %s", kv.Value)
			spliceBoth(t, r, tt.k, kv)
			checkLaidOut(t, r, tt.k, out, nil)
		})
	}
}

// Metadata of every shape: empty, and keys sorting before and after
// resourceVersion, including escaped keys whose written bytes sort otherwise.
func TestSpliceMetadataShapes(t *testing.T) {
	r, k := newTestRegistry(t)
	for _, tt := range []struct {
		name string
		md   map[string]any
	}{
		{"empty", map[string]any{}},
		{"only before", map[string]any{"name": "a", "namespace": "default", "creationTimestamp": "2026-01-01T00:00:00Z", "managedFields": []any{map[string]any{"manager": "m"}}}},
		{"only after", map[string]any{"uid": "u-1", "selfLink": "/x"}},
		{"before and after", map[string]any{"name": "a", "namespace": "default", "uid": "u-1", "annotations": map[string]any{"k": "v"}, "generation": 3.0}},
		{"just after resourceVersion", map[string]any{"resourceVersion<": "x", "resourceVersionA": "y", "resourceVersio": "z"}},
		{"escaped keys", map[string]any{"a<b": 1.0, "a=": 2.0, "resourceVersion\u2028": "p", "\x01": "q"}},
		{"nulls", map[string]any{"labels": nil, "name": nil, "uid": nil}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v, err := encode(nil, k, Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": tt.md, "data": map[string]any{"k": "v"}}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			spliceBoth(t, r, k, storage.KeyValue{Key: "/configmaps/default/" + tt.name, Value: v, ModRevision: 1234567})
			obj := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": tt.md, "data": map[string]any{"k": "v"}}
			checkLaidOut(t, r, k, obj, nil)
			checkLaidOut(t, r, k, obj, []byte(`[{"manager":"m","operation":"Update"}]`))
		})
	}
}

// Anything but the canonical shape is refused, and encodeItem then decodes;
// the canonical shape near each odd one is accepted.
func TestSpliceRefusesOddInput(t *testing.T) {
	r, k := newTestRegistry(t)
	const head = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}`
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for i, tt := range []struct {
		name, stored string
		ok           bool // the splice accepts it
		decodes      bool // decode reads it
	}{
		{"control: canonical", head + `,"spec":{"a":"\u003c\u2028é","b":[1,-2.5,1e-7,1e+21,true,false,null,{},[]],"c":{"a\u003cb":1,"a=":2}}}`, true, true},
		{"control: deepest followed", head + `,"spec":` + nest(maxSpliceDepth) + `}`, true, true},
		{"control: 18 digits", head + `,"spec":{"n":-100000000000000000}}`, true, true},
		{"control: twenty more members", head + `,"z00":0,"z01":1,"z02":2,"z03":3,"z04":4,"z05":5,"z06":6,"z07":7,"z08":8,"z09":9,"z10":10,"z11":11,"z12":12,"z13":13,"z14":14,"z15":15,"z16":16,"z17":17,"z18":18,"z19":19}`, true, true},
		{"empty", ``, false, false},
		{"array", `[]`, false, false},
		{"string", `"x"`, false, false},
		{"null", `null`, false, false},
		{"empty object", `{}`, false, true},
		{"no metadata", `{"apiVersion":"v1","kind":"ConfigMap"}`, false, true},
		{"metadata null", `{"apiVersion":"v1","kind":"ConfigMap","metadata":null}`, false, true},
		{"metadata a string", `{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}`, false, true},
		{"resourceVersion stored", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}`, false, true},
		{"no apiVersion", `{"kind":"ConfigMap","metadata":{"name":"a"}}`, false, true},
		{"no kind", `{"apiVersion":"v1","metadata":{"name":"a"}}`, false, true},
		{"other apiVersion", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"a"}}`, false, true},
		{"other kind", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}`, false, true},
		{"escaped kind", `{"apiVersion":"v1","kind":"Config\u003cMap","metadata":{"name":"a"}}`, false, true},
		{"kind not a string", `{"apiVersion":"v1","kind":1,"metadata":{"name":"a"}}`, false, true},
		{"unsorted top level", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`, false, true},
		{"unsorted top level after metadata", head + `,"data":{}}`, false, true},
		{"unsorted metadata", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"uid":"u","name":"a"}}`, false, true},
		{"unsorted nested", head + `,"spec":{"b":"1","a":"2"}}`, false, true},
		{"escaped keys in written order", head + `,"spec":{"a=":"1","a\u003cb":"2"}}`, false, true},
		{"duplicate key", head + `,"spec":{"a":"1","a":"2"}}`, false, true},
		{"duplicate top-level key", head + `,"spec":{},"spec":{}}`, false, true},
		{"whitespace", `{"apiVersion": "v1","kind":"ConfigMap","metadata":{"name":"a"}}`, false, true},
		{"trailing newline", head + "}\n", false, true},
		{"trailing garbage", head + `}x`, false, false},
		{"two objects", head + `}{}`, false, false},
		{"truncated", head, false, false},
		{"truncated string", head + `,"spec":{"a":"b`, false, false},
		{"truncated escape", head + `,"spec":{"a":"\u00`, false, false},
		{"missing colon", head + `,"spec"{}}`, false, false},
		{"missing comma", head + `"spec":{}}`, false, false},
		{"trailing comma", head + `,"spec":{"a":"b",}}`, false, false},
		{"array trailing comma", head + `,"spec":[1,]}`, false, false},
		{"bad literal", head + `,"spec":tru}`, false, false},
		{"escaped slash", head + `,"spec":{"a":"\/"}}`, false, true},
		{"needless \\u", head + `,"spec":{"a":"\u0041"}}`, false, true},
		{"upper-case hex", head + `,"spec":{"a":"\u003C"}}`, false, true},
		{"\\u for \\n", head + `,"spec":{"a":"\u000a"}}`, false, true},
		{"escaped U+FFFD", head + `,"spec":{"a":"\ufffd"}}`, false, true},
		{"surrogate pair", head + `,"spec":{"a":"\ud83d\ude00"}}`, false, true},
		{"bad escape", head + `,"spec":{"a":"\x"}}`, false, false},
		{"raw <", head + `,"spec":{"a":"<"}}`, false, true},
		// After runs longer than a word, which the scan passes a word at a time.
		{"control: long runs around escapes", head + `,"spec":{"a":"` + strings.Repeat("plain-ru", 3) + `\n` + strings.Repeat("plain-ru", 3) + `\u003c` + strings.Repeat("x", 9) + `"}}`, true, true},
		{"raw < inside a long run", head + `,"spec":{"a":"` + strings.Repeat("plain-ru", 3) + `ab<cdefghijklmno"}}`, false, true},
		{"raw & inside a long run after an escape", head + `,"spec":{"a":"\n` + strings.Repeat("plain-ru", 3) + `ab&cdefghijklmno"}}`, false, true},
		{"raw control inside a long run", head + ",\"spec\":{\"a\":\"" + strings.Repeat("plain-ru", 3) + "ab\x01cdefghijklmno\"}}", false, false},
		{"raw &", head + `,"spec":{"a":"&"}}`, false, true},
		{"raw U+2028", head + ",\"spec\":{\"a\":\"\u2028\"}}", false, true},
		{"raw control", head + ",\"spec\":{\"a\":\"\x01\"}}", false, false},
		{"invalid UTF-8", head + ",\"spec\":{\"a\":\"\xff\"}}", false, true},
		{"raw surrogate", head + ",\"spec\":{\"a\":\"\xed\xa0\x80\"}}", false, true},
		{"1.0", head + `,"spec":{"n":1.0}}`, false, true},
		{"1e2", head + `,"spec":{"n":1e2}}`, false, true},
		{"1E+21", head + `,"spec":{"n":1E+21}}`, false, true},
		{"0.10", head + `,"spec":{"n":0.10}}`, false, true},
		{"-0", head + `,"spec":{"n":-0}}`, false, true},
		{"leading zero", head + `,"spec":{"n":01}}`, false, false},
		{"19 digits", head + `,"spec":{"n":1234567890123456789}}`, false, true},
		{"lone minus", head + `,"spec":{"n":-}}`, false, false},
		{"bare fraction", head + `,"spec":{"n":1.}}`, false, false},
		{"bare exponent", head + `,"spec":{"n":1e}}`, false, false},
		{"too deep", head + `,"spec":` + nest(maxSpliceDepth+1) + `}`, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kv := storage.KeyValue{Key: "/configmaps/default/a", Value: []byte(tt.stored), ModRevision: int64(1000 + i)}
			if tt.ok {
				spliceBoth(t, r, k, kv)
				return
			}
			if b, ok := spliceStored(kv.Value, kv.ModRevision, "v1", "ConfigMap", formObject); ok {
				t.Fatalf("object form: splice accepted %q: %s", tt.stored, b)
			}
			for _, bare := range []bool{false, true} {
				if b, ok := spliceStored(kv.Value, kv.ModRevision, "v1", "ConfigMap", itemForm(bare)); ok {
					t.Fatalf("bare=%v: splice accepted %q: %s", bare, tt.stored, b)
				}
				want, wantErr := r.decodeItem(k, "v1", kv, bare)
				if tt.decodes != (wantErr == nil) {
					t.Fatalf("decode: %v, want it to succeed: %v", wantErr, tt.decodes)
				}
				got, err := r.encodeItem(k, "v1", kv, bare)
				if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
					t.Fatalf("bare=%v: encodeItem %s, %v; decode %s, %v", bare, got, err, want, wantErr)
				}
			}
		})
	}
}

// Integers beyond 2^53: decode's float64 rounds them, the splice keeps the
// stored digits, as kube-apiserver (which decodes integers as int64) does.
func TestSpliceKeepsLargeIntegers(t *testing.T) {
	r, k := newTestRegistry(t)
	stored := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"spec":{"m":-123456789012345678,"n":9007199254740993}}`)
	kv := storage.KeyValue{Key: "/configmaps/default/a", Value: stored, ModRevision: 9}
	got, ok := spliceStored(stored, 9, "v1", "ConfigMap", formItem)
	const want = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"9"},"spec":{"m":-123456789012345678,"n":9007199254740993}}`
	if !ok || string(got) != want {
		t.Fatalf("splice %s, %v; want %s", got, ok, want)
	}
	// kube-apiserver's reading: integers as int64.
	var kube map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(got, &kube); err != nil {
		t.Fatal(err)
	}
	if n := mapOf(kube["spec"])["n"]; n != int64(9007199254740993) {
		t.Fatalf("spec.n reads as %v (%T), want 9007199254740993", n, n)
	}
	slow, err := r.decodeItem(k, "v1", kv, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(slow), `"n":9007199254740992`) {
		t.Fatalf("decode no longer rounds (%s): the splice's caveat is stale", slow)
	}
}

// FuzzSpliceItem: for a value MarshalJSON re-encodes to itself, the splice
// gives decode + MarshalJSON's bytes whenever it accepts, and accepts the
// canonical shape; for any bytes it gives valid JSON that kube-apiserver's
// decoding (integers as int64) reads as the value with resourceVersion.
func FuzzSpliceItem(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","uid":"u"},"data":{"a\u003cb":"\u0026","x":[1,-2.5,1e-7,true,null,{}]}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"annotations":{"k":"é\u2028"},"selfLink":"s"},"spec":{"n":9007199254740993}}`,
		`{"apiVersion":"v1","binaryData":{},"data":{"k":"\\\"\n"},"immutable":true,"kind":"ConfigMap","metadata":{"creationTimestamp":null,"name":"n","namespace":"ns"}}`,
		`{"a":1}`, `[]`, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"1"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"f":"line one of a file\nline two of it, \u003c\u0026\u003e and more\n"}}`,
	} {
		f.Add([]byte(s), false)
	}
	r := &Registry{}
	f.Fuzz(func(t *testing.T, data []byte, bare bool) {
		var top map[string]any
		_ = json.Unmarshal(data, &top)
		apiVersion, kind := "v1", "ConfigMap"
		if av, ok := top["apiVersion"].(string); ok {
			apiVersion = av
		}
		if kd, ok := top["kind"].(string); ok {
			kind = kd
		}
		if obj, ok := spliceStored(data, 42, apiVersion, kind, formObject); ok {
			checkObjectForm(t, data, obj)
		} else if _, itemOK := spliceStored(data, 42, apiVersion, kind, formItem); itemOK {
			t.Fatalf("the object form refused %q, which the item form takes", data)
		}
		got, ok := spliceStored(data, 42, apiVersion, kind, itemForm(bare))
		if !ok {
			if top != nil && canonical(data) && spliceable(top, apiVersion, kind) {
				t.Fatalf("splice refused canonical %s", data)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("splice of %q gave invalid JSON %q", data, got)
		}
		// kube-apiserver's reading of the stored value, with resourceVersion.
		var kube map[string]any
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &kube); err != nil {
			t.Fatalf("accepted %q, which does not decode: %v", data, err)
		}
		meta(kube)["resourceVersion"] = "42"
		if bare {
			delete(kube, "apiVersion")
			delete(kube, "kind")
		}
		if want, err := json.Marshal(kube); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q:\nsplice %s\nkube   %s", data, got, want)
		}
		if canonical(data) {
			k := &Kind{Versions: []string{apiVersion}, Kind: kind}
			want, err := r.decodeItem(k, apiVersion, storage.KeyValue{Value: data, ModRevision: 42}, bare)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%q:\nsplice %s\ndecode %s, %v", data, got, want, err)
			}
		}
	})
}

// checkObjectForm: the object form of a splice is kube-apiserver's
// encoding of the stored value read with integers as int64 (json.Marshal of
// each member, kind, apiVersion and metadata first, a trailing newline).
func checkObjectForm(t *testing.T, data, got []byte) {
	t.Helper()
	var kube map[string]any
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &kube); err != nil {
		t.Fatalf("accepted %q, which does not decode: %v", data, err)
	}
	meta(kube)["resourceVersion"] = "42"
	var want bytes.Buffer
	want.WriteByte('{')
	for i, k := range []string{"kind", "apiVersion", "metadata"} {
		if i > 0 {
			want.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(kube[k])
		want.Write(kb)
		want.WriteByte(':')
		want.Write(vb)
		delete(kube, k)
	}
	rest := make([]string, 0, len(kube))
	for k := range kube {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(kube[k])
		want.WriteByte(',')
		want.Write(kb)
		want.WriteByte(':')
		want.Write(vb)
	}
	want.WriteString("}\n")
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("%q:\nobject form %s\nkube        %s", data, got, want.Bytes())
	}
}

// canonical: decoding b and encoding it again gives b.
func canonical(b []byte) bool {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	again, err := MarshalJSON(v)
	return err == nil && bytes.Equal(again, b)
}

// spliceable: the shape the splice expects of a canonical value, nested
// no deeper than it follows.
func spliceable(top map[string]any, apiVersion, kind string) bool {
	md, ok := top["metadata"].(map[string]any)
	if !ok || top["apiVersion"] != apiVersion || top["kind"] != kind || depthOf(top) > maxSpliceDepth+1 {
		return false
	}
	if bytes.IndexByte(jsonvalue.AppendString(nil, apiVersion), '\\') >= 0 || bytes.IndexByte(jsonvalue.AppendString(nil, kind), '\\') >= 0 {
		return false
	}
	_, hasRV := md["resourceVersion"]
	return !hasRV && !hasUnkeptNumber(top)
}

// depthOf is how deeply v's containers nest (a scalar is 0).
func depthOf(v any) int {
	d := 0
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			d = max(d, depthOf(e))
		}
		return d + 1
	case []any:
		for _, e := range t {
			d = max(d, depthOf(e))
		}
		return d + 1
	}
	return 0
}

// hasUnkeptNumber: MarshalJSON writes -0 and integers of 19 to 21 digits,
// which int64 cannot hold, so the splice leaves them to decode.
func hasUnkeptNumber(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if hasUnkeptNumber(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hasUnkeptNumber(e) {
				return true
			}
		}
	case float64:
		return (t == 0 && math.Signbit(t)) || (math.Abs(t) >= 1e18 && math.Abs(t) < 1e21)
	}
	return false
}

// checkLaidOut: the layout appendStored notes as it writes obj cuts the
// bytes where spliceStored's scan of them does, in every form; and where the
// scan declines (numbers it leaves to decode), the object form is what the
// write answers then, MarshalObject's of the object read back.
func checkLaidOut(t *testing.T, r *Registry, k *Kind, obj Object, mf []byte) {
	t.Helper()
	var lay spliceLayout
	v, err := encode(nil, k, obj, mf, &lay)
	if err != nil {
		t.Fatal(err)
	}
	if lay.mode == 0 {
		t.Fatalf("no layout noted for %s", v)
	}
	const rev = 77
	av := k.APIVersion(k.StorageVersion())
	for _, form := range []spliceForm{formItem, formBare, formObject} {
		got := lay.splice(v, rev, form)
		want, ok := spliceStored(v, rev, av, k.Kind, form)
		if !ok {
			if form != formObject {
				continue
			}
			dec, err := r.decode(k, k.StorageVersion(), storage.KeyValue{Value: v, ModRevision: rev}, 0)
			if err != nil {
				t.Fatalf("decode %s: %v", v, err)
			}
			if want, err = MarshalObject(dec); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("form %d of %s:\nlaid out %s\nwant     %s", form, v, got, want)
		}
	}
}

// FuzzSpliceLaidOut: checkLaidOut for any object JSON decodes to, with and
// without managedFields kept as bytes.
func FuzzSpliceLaidOut(f *testing.F) {
	for _, s := range []string{
		`{"metadata":{"name":"a","uid":"u"},"data":{"a\u003cb":"\u0026","x":[1,-2.5,1e-7,true,null,{}]}}`,
		`{"metadata":{}}`, `{}`, `{"metadata":[]}`,
		`{"metadata":{"annotations":{"k":"é\u2028"},"selfLink":"s","zz":1},"spec":{"n":-0,"m":12345678901234567890}}`,
		`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"l":11,"m":12,"n":13,"o":14}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	r, k := newTestRegistry(f)
	f.Fuzz(func(t *testing.T, data []byte, withMF bool) {
		var obj Object
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return
		}
		obj["apiVersion"], obj["kind"] = "v1", "ConfigMap"
		var mf []byte
		if withMF {
			mf = []byte(`[{"apiVersion":"v1","fieldsType":"FieldsV1","manager":"m","operation":"Update"}]`)
		}
		checkLaidOut(t, r, k, obj, mf)
	})
}
