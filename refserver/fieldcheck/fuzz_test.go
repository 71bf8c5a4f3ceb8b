package fieldcheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	yamlv2 "go.yaml.in/yaml/v2"
	sigsjson "sigs.k8s.io/json"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
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
		var want typeMetaJSON
		werr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &want)
		if got, ok := typeMeta(data, obj, false); ok && (werr != nil || got != want) {
			t.Fatalf("%s: took %+v, the typed read gives %+v (%v)", data, got, want, werr)
		}
		// As parse calls it when jsonvalue read the body and saw no key twice.
		if fastObj, distinct, fast := jsonvalue.ParseDistinct(data, jsonvalue.PreserveInts); fast && distinct {
			if got, ok := typeMeta(data, fastObj, true); ok && (werr != nil || got != want) {
				t.Fatalf("%s: took %+v from distinct keys, the typed read gives %+v (%v)", data, got, want, werr)
			}
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
		if orderDependent(body) {
			return
		}
		for _, level := range []Level{Ignore, Warn, Strict} {
			obj, w, err := DecodeApply(body, level)
			wantObj, wantW, wantErr := decodeApplyYAML(body, level)
			if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(w, wantW) || !reflect.DeepEqual(obj, wantObj) {
				t.Fatalf("%q at %v: %v %q %v, the YAML passes give %v %q %v", body, level, obj, w, err, wantObj, wantW, wantErr)
			}
		}
	})
}

// orderDependent reports whether the library's YAML to JSON conversion of
// body depends on Go's random map order, so that two decodes of it, by one
// path or two, may differ (in kube-apiserver too): two keys of one mapping
// become one JSON key (0b0 and "0", 1.0 and 1), and the conversion keeps
// whichever it meets last; or two keys have a type it refuses, and its error
// names whichever it meets first.
func orderDependent(body []byte) bool {
	var v any
	if yamlv2.Unmarshal(body, &v) != nil {
		return false
	}
	refused := 0
	var walk func(v any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case map[any]any:
			keys := map[string]bool{}
			for k, e := range t {
				s, ok := jsonKey(k)
				if !ok {
					refused++
				} else if keys[s] {
					return true
				}
				keys[s] = true
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v) || refused > 1
}

// jsonKey is the JSON key the library's conversion makes of a YAML key; ok
// is false for the types it refuses.
func jsonKey(k any) (string, bool) {
	switch k := k.(type) {
	case string:
		return k, true
	case int:
		return strconv.Itoa(k), true
	case int64:
		return strconv.FormatInt(k, 10), true
	case float64:
		s := strconv.FormatFloat(k, 'g', -1, 32)
		switch s {
		case "+Inf":
			s = ".inf"
		case "-Inf":
			s = "-.inf"
		case "NaN":
			s = ".nan"
		}
		return s, true
	case bool:
		return strconv.FormatBool(k), true
	}
	return "", false
}

func TestOrderDependent(t *testing.T) {
	for body, want := range map[string]bool{
		`{"a":1,"b":2}`:                   false,
		"a: 1\na: 2\n":                    false, // one key twice: the last, whatever the order
		"0: a\n1: b\n":                    false,
		"{0b0: 1, \"0\": 2}":              true,
		"0: a\n\"0\": b\n":                true,
		"1.0: a\n1: b\n":                  true,
		"true: a\n\"true\": b\n":          true,
		".nan: a\n.nan: b\n":              true, // NaN is no key's equal
		"x:\n  - {0: a, \"0\": b}\n":      true,
		"~: a\n18446744073709551615: b\n": true, // two refused keys: the error names either
		"~: a\nb: c\n":                    false,
		"a: {~: x}\nb: {~: y}\n":          true,
		"not yaml: [":                     false,
	} {
		if got := orderDependent([]byte(body)); got != want {
			t.Errorf("orderDependent(%q) = %v, want %v", body, got, want)
		}
	}
}
