package fieldcheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// FuzzDecode checks, for any body, that the levels agree with each other and
// that a decoded object is clean: decoding it again finds nothing.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","foo":1},"data":{"a":"b"},"data":{"c":"d"},"spec":{"x":1},"bogus":true}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u","zz":1}],"labels":{"a":"b","a":"c"}}}`,
		`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"size":2,"items":[{"a":"x","b":1}],"free":{"x":{"y":1}}},"top":1}`,
		`{"metadata":{"name":"nk"},"data":{"a":1}}`,
		`{"kind":"Widget","spec":{"nested":{"inner":{"x":"1","y":"2"},"z":1},"keyed":[{"name":"k","q":1}]},"status":{"bad":1}}`,
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b\ndata:\n  c: d\n",
		`[]`, `null`, `{`, `"x"`, `{"metadata":"x"}`, `{"spec":[1,2]}`,
	} {
		f.Add([]byte(seed))
	}
	decoders := []Decoder{configMaps(f), widgets(f), {GVK: configMapGVK}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, d := range decoders {
			_, _, _ = d.Decode(body, YAML, Warn) // must not panic
			objI, wI, errI := d.Decode(body, JSON, Ignore)
			objW, wW, errW := d.Decode(body, JSON, Warn)
			_, _, errS := d.Decode(body, JSON, Strict)
			if (errI == nil) != (errW == nil) || len(wI) != 0 {
				t.Fatalf("Ignore %v %q vs Warn %v", errI, wI, errW)
			}
			if errW != nil {
				if errS == nil || errS.Error() != errW.Error() {
					t.Fatalf("Warn failed with %v but Strict with %v", errW, errS)
				}
				continue
			}
			if (errS != nil) != (len(wW) > 0) {
				t.Fatalf("Strict error %v but Warn warnings %q", errS, wW)
			}
			if !reflect.DeepEqual(objI, objW) {
				t.Fatalf("Ignore and Warn objects differ")
			}
			if _, ok := objW["kind"].(string); !ok {
				t.Fatalf("no kind in %v", objW)
			}
			clean, err := json.Marshal(objW)
			if err != nil {
				t.Fatalf("decoded object does not marshal: %v", err)
			}
			if _, w, err := d.Decode(clean, JSON, Strict); err != nil {
				t.Fatalf("decoded object %s fails again: %v (%q)", clean, err, w)
			}
		}
	})
}

// FuzzTypeMeta checks that the apiVersion and kind parse takes from the
// decoded body are what kube-apiserver's typed first read gives, whenever it
// takes them.
func FuzzTypeMeta(f *testing.F) {
	for _, seed := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"managedFields":[{"apiVersion":"v1"}]}}`,
		`{"kind":5,"kind":"ConfigMap"}`, `{"\u006bind":5,"kind":"X"}`, `{"a":"kind","kind":null}`,
		`{"a":["kind",{"kind":1}],"apiVersion":"v1","b":"\"kind\""}`, `[{"kind":1},"kind"]`, `null`, `{"kind":{}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj map[string]any
		if sigsjson.UnmarshalCaseSensitivePreserveInts(data, &obj) != nil {
			return
		}
		got, ok := typeMeta(data, obj)
		if !ok {
			return
		}
		var want typeMetaJSON
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &want); err != nil || got != want {
			t.Fatalf("%s: took %+v, the typed read gives %+v (%v)", data, got, want, err)
		}
	})
}

// FuzzDecodeApplyOnePass checks DecodeApply's shortcuts (the JSON path, one
// strict pass) against the passes they save (decodeApplyYAML: lenient
// probe, conversion, strict check): same object, warnings and error at
// every level.
func FuzzDecodeApplyOnePass(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a: b\n",
		"data:\n  a: b\ndata:\n  c: d\n", "data: [1", "- 1\n- 2\n", "x: 1.0\ny: yes\nz: 0x10\n", `{"a":1,"a":2}`, `null`, ``, `"s"`,
		// JSON, as kubectl sends it: the bodies decodeApplyJSON takes, and
		// the ones next to them it must leave to YAML.
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"a":"b"}}`,
		"{\n  \"a\": [1, -2, true, false, null, {}, []],\n  \"b\" : {\"c\":\"d e:f #g\"}\n}\n",
		`{"a":1.0}`, `{"a":1e3}`, `{"a":-0}`, `{"a":123456789012345678}`, `{"a":1234567890123456789}`,
		"{\"a\"\n:1}", "{\t\"a\":1}", "{\"a\":1}\r\n", `{"<<":{"a":1}}`, `{"a":"\u00e9"}`, `{"a":"\n"}`,
		// Two keys that are one JSON key: the library keeps either.
		"{\n  0b0: [2, -2, true, 17CX ,{}, []],\n  \"0\"#2170010001120B107\n}", "{0b0: 1, \"0\": 2}",
		`{"a":"é"}`, "{\"a\":\"\u2028\"}", `{"a":{"b":1,"b":2}}`, `{"a":1}{`, ` {"a":1} `, `{"` + strings.Repeat("k", 1100) + `":1}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, level := range []Level{Ignore, Warn, Strict} {
			obj, w, err := DecodeApply(body, level)
			got := decoded{obj, w, fmt.Sprint(err)}
			want := decodeApplyYAMLAnswering(body, level, got)
			if !got.equal(want) {
				t.Fatalf("%q at %v: %v %q %v, the YAML passes give %v %q %v", body, level, obj, w, err, want.obj, want.warnings, want.err)
			}
		}
	})
}

// decodeApplyYAMLAnswering is decodeApplyYAML's answer, or, when it differs
// from got, got if another of up to 64 more runs gives it. The library's YAML
// to JSON conversion is not deterministic where two keys of one mapping
// become the same JSON key (0b0 and "0" are both "0"): it keeps whichever its
// map iteration meets last, in kube-apiserver too. Such a body may answer
// either way; no other mismatch survives the reruns.
func decodeApplyYAMLAnswering(body []byte, level Level, got decoded) decoded {
	obj, w, err := decodeApplyYAML(body, level)
	first := decoded{obj, w, fmt.Sprint(err)}
	for i := 0; i < 64 && !got.equal(first); i++ {
		if obj, w, err := decodeApplyYAML(body, level); got.equal(decoded{obj, w, fmt.Sprint(err)}) {
			return got
		}
	}
	return first
}
