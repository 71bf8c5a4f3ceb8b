package fieldcheck

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"

	v6 "github.com/apiconform/apiconform/refserver/frobber/v6"
)

func builtinDecoder(t testing.TB, kind string) Decoder {
	s, ok := Builtin(kind)
	if !ok {
		t.Fatalf("no %s schema", kind)
	}
	return Decoder{GVK: schema.GroupVersionKind{Version: "v1", Kind: kind}, Schema: s}
}

func frobbers() Decoder {
	return Decoder{GVK: schema.GroupVersionKind{Group: "compat.apiconform.io", Version: "v6", Kind: "Frobber"},
		Schema: Typed(func() any { return &v6.Frobber{} })}
}

// A ConfigMap as the server answers it, the body of a read-modify-write.
const served = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001","namespace":"ac-load-0","uid":"0f3c8c1e-8a47-4b8e-9a55-2a8e3c1f4d6b","resourceVersion":"1234","creationTimestamp":"2026-11-23T15:00:00Z","labels":{"load":"apiconform","shard":"1"},"managedFields":[{"manager":"apiconform-load","operation":"Update","apiVersion":"v1","time":"2026-11-23T15:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:index":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:load":{},"f:shard":{}}}}}]},"data":{"index":"1","payload":"pppp"}}`

// fastCases: bodies the fast check must answer (fast) or leave to
// checkTyped, one per reason it declines.
var fastCases = []struct {
	name, kind string // kind: the endpoint's (Frobber: v6)
	body       string
	fast       bool
}{
	{"configmap: labels, annotations, data", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","namespace":"ns","labels":{"a":"b"},"annotations":{"x.io/y":"z: \"q\""}},"data":{"a":"b","c":""}}`, true},
	{"configmap: owner references, finalizers, immutable, binaryData", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c2","generateName":"c-","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u1","controller":true,"blockOwnerDeletion":false}],"finalizers":["a.io/b"],"generation":3,"deletionGracePeriodSeconds":0},"immutable":false,"binaryData":{"k":"aGVsbG8=","e":""}}`, true},
	{"configmap: as served (managedFields, times)", "ConfigMap", served, true},
	{"configmap: deletionTimestamp, negative int64", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","deletionTimestamp":"2026-01-02T03:04:05Z","deletionGracePeriodSeconds":-1,"generation":9223372036854775807}}`, true},
	{"configmap: escaped keys and colons in strings", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a\"b:":"c:d","\u00e9":"x"}},"data":{"k:{\"x\":1}":"{\"a\":\"b\\\\\"}"}}`, true},
	{"configmap: bytes that are not UTF-8 (the library parses)", "ConfigMap", "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"\xff\"}}", true},
	{"configmap: no apiVersion and kind (the endpoint's)", "ConfigMap", `{"metadata":{"name":"nk"},"data":{"a":"b"}}`, true},
	{"configmap: empty apiVersion and null kind", "ConfigMap", `{"apiVersion":"","kind":null,"metadata":{"name":"nk"}}`, true},
	{"configmap: no metadata", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"b"}}`, true},
	{"configmap: empty object", "ConfigMap", `{}`, true},
	{"configmap: JSON null", "ConfigMap", `null`, true},
	{"configmap: whitespace", "ConfigMap", " {\n \"kind\" : \"ConfigMap\" ,\"metadata\":{ \"name\" :\"w\"}}\n", true},
	{"secret: data, stringData, type, immutable", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"YQ==","b":"YWI=","c":"YWJj"},"stringData":{"d":"x"},"type":"Opaque","immutable":true}`, true},
	{"namespace: spec and status", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active","conditions":[{"type":"T","status":"True","lastTransitionTime":"2026-11-23T15:00:00Z","reason":"R"}]}}`, true},
	{"namespace: empty spec and status", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{},"status":{}}`, true},
	{"frobber: int32 at the limits", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":-2147483648,"width":2147483647,"params":["a"]}`, true},
	{"frobber: height 0 (not omitempty)", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":0}`, true},

	{"unknown field", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}`, false},
	{"unknown field in metadata", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","foo":"x"}}`, false},
	{"unknown field in an owner reference", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u","zz":1}]}}`, false},
	{"field names are case-sensitive", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"Name":"c"},"Data":{"a":"b"}}`, false},
	{"duplicate top-level key", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"},"data":{"c":"d"}}`, false},
	{"duplicate metadata key", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","name":"d"}}`, false},
	{"duplicate label", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"1","a":"1"}}}`, false},
	{"duplicate key in an owner reference", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"u","uid":"u"}]}}`, false},
	{"duplicate key in fieldsV1", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"m","fieldsType":"FieldsV1","fieldsV1":{"f:data":{},"f:data":{"x":{}}}}]}}`, false},
	{"duplicate key, once escaped", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"},"d\u0061ta":{"c":"d"}}`, false},
	{"duplicate kind", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","kind":"ConfigMap","metadata":{"name":"c"}}`, false},
	{"null data", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":null}`, false},
	{"null metadata", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":null}`, false},
	{"null immutable", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"immutable":null}`, false},
	{"null label value", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":null}}}`, false},
	{"null creationTimestamp", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":null}}`, false},
	{"null finalizer", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","finalizers":[null]}}`, false},
	{"null fieldsV1", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"m","fieldsV1":null}]}}`, false},
	{"empty data (omitempty)", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{}}`, false},
	{"empty labels", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{}}}`, false},
	{"empty name", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":""}}`, false},
	{"empty finalizers", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","finalizers":[]}}`, false},
	{"zero generation", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":0}}`, false},
	{"minus zero generation", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":-0}}`, false},
	{"empty secret type", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":""}`, false},
	{"empty namespace finalizers", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{"finalizers":[]}}`, false},
	{"wrong type: array for a map", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":[1]}`, false},
	{"wrong type: number for a string", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":1}}`, false},
	{"wrong type: string for an int64", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":"1"}}`, false},
	{"wrong type: string for a bool", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"immutable":"true"}`, false},
	{"wrong type: string for metadata", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":"x"}`, false},
	{"wrong type: object for a list", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":{}}}`, false},
	{"wrong type: string for fieldsV1", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","managedFields":[{"manager":"m","fieldsV1":"x"}]}}`, false},
	{"int32 overflow", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":2147483648}`, false},
	{"int32 underflow", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":-2147483649}`, false},
	{"integer written 1.0", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":1.0}`, false},
	{"integer written 1e2", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":1e2}}`, false},
	{"int64 overflow", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generation":9223372036854775808}}`, false},
	{"a missing field the round trip adds (height)", "Frobber", `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"}}`, false},
	{"a missing field the round trip adds (uid)", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p"}]}}`, false},
	{"a missing field the round trip adds (lastTransitionTime)", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"status":{"conditions":[{"type":"T","status":"True"}]}}`, false},
	{"time with an offset", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"2026-11-23T16:00:00+01:00"}}`, false},
	{"time with fractions", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"2026-11-23T15:00:00.5Z"}}`, false},
	{"zero time", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"0001-01-01T00:00:00Z"}}`, false},
	{"zero time, pointer", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","deletionTimestamp":"0001-01-01T00:00:00Z"}}`, false},
	{"not a time", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":"2026-13-23T15:00:00Z"}}`, false},
	{"number for a time", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","creationTimestamp":5}}`, false},
	{"base64 without padding", "ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"binaryData":{"k":"aGVsbG8"}}`, false},
	{"base64 with padding bits", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"YR=="}}`, false},
	{"base64 with a newline", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"YW\nJj"}}`, false},
	{"bad base64", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":"!!"}}`, false},
	{"bytes as an array", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"k":[97]}}`, false},
	{"odd kind: none of its odd fields", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"}}`, true},
	{"quantity", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"quantity":"1000m"}`, false},
	{"int or string", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"intOrString":"8080"}`, false},
	{"micro time", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"microTime":"2026-11-23T15:00:00.000000Z"}`, false},
	{"raw extension", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"raw":{"a":1,"a":2}}`, false},
	{"float", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"float":1.0}`, false},
	{"uint", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"uint":-0}`, false},
	{"interface", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"any":{"x":1.0}}`, false},
	{"array", "OddKind", `{"apiVersion":"odd.example.com/v1","kind":"OddKind","metadata":{"name":"o"},"array":["a"]}`, false},
	{"another kind at this endpoint", "ConfigMap", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, true},
}

// oddKind has the field types the fast check declines (as pointers, so
// that an object without them is answered).
type oddKind struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Quantity          *resource.Quantity    `json:"quantity,omitempty"`
	IntOrString       *intstr.IntOrString   `json:"intOrString,omitempty"`
	MicroTime         *metav1.MicroTime     `json:"microTime,omitempty"`
	Raw               *runtime.RawExtension `json:"raw,omitempty"`
	Float             float64               `json:"float,omitempty"`
	Uint              uint32                `json:"uint,omitempty"`
	Any               any                   `json:"any,omitempty"`
	Array             *[2]string            `json:"array,omitempty"`
}

func decoderFor(t testing.TB, kind string) Decoder {
	switch kind {
	case "Frobber":
		return frobbers()
	case "OddKind":
		return Decoder{GVK: schema.GroupVersionKind{Group: "odd.example.com", Version: "v1", Kind: "OddKind"},
			Schema: Typed(func() any { return &oddKind{} })}
	}
	return builtinDecoder(t, kind)
}

// fastAnswers says whether the fast check answers body at d.
func fastAnswers(t testing.TB, d Decoder, body []byte) bool {
	obj, h, err := d.parse(body, body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return typedFast(body, obj, h, d.Schema.goType)
}

// withoutFast runs f with the fast checks off.
func withoutFast(f func()) {
	fastChecks = false
	defer func() { fastChecks = true }()
	f()
}

type decoded struct {
	obj      map[string]any
	warnings []string
	err      string
}

func (a decoded) equal(b decoded) bool {
	return reflect.DeepEqual(a.obj, b.obj) && reflect.DeepEqual(a.warnings, b.warnings) && a.err == b.err
}

func decodeBoth(d Decoder, decode func(Decoder) (map[string]any, []string, error)) (fast, slow decoded) {
	run := func() decoded {
		obj, w, err := decode(d)
		return decoded{obj, w, fmt.Sprint(err)}
	}
	fast = run()
	withoutFast(func() { slow = run() })
	return fast, slow
}

// TestTypedFastCheckDifferential: with and without the fast check, every
// body decodes to the same object, warnings and error, at every level, as a
// POST/PUT body (JSON and, for the valid ones, YAML) and as a patched object.
func TestTypedFastCheckDifferential(t *testing.T) {
	for _, tc := range fastCases {
		d := decoderFor(t, tc.kind)
		body := []byte(tc.body)
		t.Run(tc.name, func(t *testing.T) {
			if got := fastAnswers(t, d, body); got != tc.fast {
				t.Errorf("fast check answered %v, want %v", got, tc.fast)
			}
			for _, level := range []Level{Ignore, Warn, Strict} {
				formats := []Format{JSON}
				if tc.fast {
					formats = append(formats, YAML) // JSON is YAML; YAML reports duplicates its own way
				}
				for _, f := range formats {
					fast, slow := decodeBoth(d, func(d Decoder) (map[string]any, []string, error) { return d.Decode(body, f, level) })
					if !fast.equal(slow) {
						t.Errorf("Decode %v/%v:\nfast %v %q %s\nslow %v %q %s", f, level, fast.obj, fast.warnings, fast.err, slow.obj, slow.warnings, slow.err)
					}
				}
				for _, pt := range []PatchType{MergePatch, StrategicMergePatch} {
					for _, patch := range []string{`{"data":{"x":"1"}}`, `{"data":{"x":"1"},"data":{"y":"2"}}`} {
						fast, slow := decodeBoth(d, func(d Decoder) (map[string]any, []string, error) {
							return d.DecodePatched(pt, []byte(patch), body, level)
						})
						if !fast.equal(slow) {
							t.Errorf("DecodePatched %s %s %v:\nfast %v %q %s\nslow %v %q %s", pt, patch, level, fast.obj, fast.warnings, fast.err, slow.obj, slow.warnings, slow.err)
						}
					}
				}
			}
		})
	}
}

func TestNoDuplicateKeys(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}`, true},
		{`{"data":{"patched":"1"}}`, true},
		{`{"a":"\"a\":","b":"x"}`, true},
		{`{"a":{},"b":[],"c":{"d":[{"e":{}}]},"d":"}"}`, true},
		{`[{"a":1},{"a":1}]`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":{"b":1,"b":2}}`, false},
		{`{"a":[{"b":1,"c":{"d":1,"d":1}}]}`, false},
		{`{"a":{"x":1},"b":2,"a":3}`, false},
		{`{"\u0061":1,"a":2}`, false}, // escaped: not told
		{`{"é":1}`, false},            // non-ASCII: not told
	} {
		if got := noDuplicateKeys([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestKeyCount(t *testing.T) {
	for in, want := range map[string]int{
		`{}`: 0, `null`: 0, `{"a":1}`: 1, `{"a:b":"c:d"}`: 1, `{"a\"":"\\","b":{"c":[{"d":1}]}}`: 4,
		` { "a" : [ ":" , { "b" : "\\\"" } ] } `: 2,
	} {
		if got := keyCount([]byte(in)); got != want {
			t.Errorf("%s: %d, want %d", in, got, want)
		}
	}
}

// FuzzTypedFastCheck checks the two shortcuts against the library:
// whenever the fast check answers a body, checkTyped answers the same object
// and no issues; whenever the key scan finds no duplicate, the strict decode
// of a patch reports none. (jsonvalue's FuzzParse checks the one-pass parse.)
func FuzzTypedFastCheck(f *testing.F) {
	for _, tc := range fastCases {
		f.Add([]byte(tc.body))
	}
	f.Add([]byte(` {"a" : [ 1 , -0, 1.5, 1e2, -9223372036854775808, 9223372036854775808, true, false, null, [], {}, "é"] } `))
	decoders := []Decoder{builtinDecoder(f, "ConfigMap"), builtinDecoder(f, "Secret"), builtinDecoder(f, "Namespace"), frobbers(), decoderFor(f, "OddKind")}
	f.Fuzz(func(t *testing.T, body []byte) {
		if noDuplicateKeys(body) {
			var p map[string]any
			if strict, err := sigsjson.UnmarshalStrict(body, &p, sigsjson.DisallowDuplicateFields); err == nil && len(strict) > 0 {
				t.Fatalf("%s: no duplicates found, strict decoding reports %v", body, strict)
			}
		}
		for _, d := range decoders {
			obj, h, err := d.parse(body, body)
			if err != nil || !typedFast(body, obj, h, d.Schema.goType) {
				continue
			}
			out, issues, err := checkTyped(body, obj, d.Schema.typed())
			if err != nil || len(issues) > 0 {
				t.Fatalf("%s at %s: fast check answered, checkTyped gives %v %v", body, d.GVK.Kind, issues, err)
			}
			for _, k := range []string{"apiVersion", "kind"} { // as Decode puts them back
				if v, ok := obj[k]; ok {
					out[k] = v
				}
			}
			if !reflect.DeepEqual(out, obj) {
				t.Fatalf("%s at %s: fast check answered %v, checkTyped %v", body, d.GVK.Kind, obj, out)
			}
		}
	})
}

// TestObjectPaths: the decoder's object paths against the bytes paths they
// stand for. Whenever an object path answers, the bytes path given the
// object's JSON gives that object and no warnings at every level; it
// answers every body the fast check answers that is a complete object (of
// the endpoint's version, with a kind, and for DecodeObject the endpoint's
// kind; a body's duplicate keys are gone from its map, so it may answer
// those too).
func TestObjectPaths(t *testing.T) {
	const patch = `{"data":{"x":"1"}}`
	for _, path := range []struct {
		name     string
		complete func(d Decoder, obj map[string]any) bool
		object   func(d Decoder, obj map[string]any) (map[string]any, bool)
		bytes    func(d Decoder, data []byte, level Level) (map[string]any, []string, error)
	}{
		{"DecodePatchedObject",
			func(d Decoder, obj map[string]any) bool { return obj["kind"] != nil },
			func(d Decoder, obj map[string]any) (map[string]any, bool) {
				return d.DecodePatchedObject(MergePatch, []byte(patch), obj)
			},
			func(d Decoder, data []byte, level Level) (map[string]any, []string, error) {
				return d.DecodePatched(MergePatch, []byte(patch), data, level)
			}},
		{"DecodeObject",
			func(d Decoder, obj map[string]any) bool { return obj["kind"] == d.GVK.Kind },
			Decoder.DecodeObject,
			func(d Decoder, data []byte, level Level) (map[string]any, []string, error) {
				return d.Decode(data, JSON, level)
			}},
	} {
		t.Run(path.name, func(t *testing.T) {
			answered := 0
			for _, tc := range fastCases {
				d := decoderFor(t, tc.kind)
				t.Run(tc.name, func(t *testing.T) {
					obj, isObject := caseObject(tc.body)
					if !isObject {
						return // the bytes path's business
					}
					complete := path.complete(d, obj) && obj["apiVersion"] == d.GVK.GroupVersion().String()
					got, ok := path.object(d, obj)
					if tc.fast && complete && !ok {
						t.Fatal("declined an object the fast check answers")
					}
					if !ok {
						return
					}
					if !complete {
						t.Fatalf("answered for an incomplete object: %v", obj)
					}
					answered++
					data, err := json.Marshal(obj)
					if err != nil {
						t.Fatal(err)
					}
					for _, level := range []Level{Ignore, Warn, Strict} {
						want, w, err := path.bytes(d, data, level)
						if err != nil || len(w) > 0 || !reflect.DeepEqual(got, want) {
							t.Fatalf("%v: object path %v; bytes path %v %q %v", level, got, want, w, err)
						}
					}
				})
			}
			if answered == 0 {
				t.Fatal("the object path answered none of the cases")
			}
		})
	}
	d := decoderFor(t, "ConfigMap")
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}
	if _, ok := d.DecodePatchedObject(MergePatch, []byte(patch), cm); !ok {
		t.Error("DecodePatchedObject declined a plain ConfigMap")
	}
	if _, ok := d.DecodePatchedObject(MergePatch, []byte(`{"data":{"x":"1"},"data":{}}`), cm); ok {
		t.Error("DecodePatchedObject answered for a patch with a duplicate key")
	}
	// Another kind at the endpoint's version: Decode refuses it, so must this.
	if _, ok := d.DecodeObject(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "a"}}); ok {
		t.Error("DecodeObject answered for a Secret at the ConfigMap endpoint")
	}
}

// caseObject is a case's body as a decoded object, integers kept; false
// when it is not one.
func caseObject(body string) (map[string]any, bool) {
	var obj map[string]any
	err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(body), &obj)
	return obj, err == nil && obj != nil
}
