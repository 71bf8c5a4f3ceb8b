package fieldcheck

import (
	"encoding/json"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The expected warnings and messages below were observed on kube-apiserver
// v1.36.3 with the same bodies (POST ...?dryRun=All&fieldValidation=<level>).

var (
	configMapGVK = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	widgetGVK    = schema.GroupVersionKind{Group: "fc.example.com", Version: "v1", Kind: "Widget"}
)

func configMaps(t testing.TB) Decoder {
	s, ok := Builtin("ConfigMap")
	if !ok {
		t.Fatal("no ConfigMap schema")
	}
	return Decoder{GVK: configMapGVK, Schema: s}
}

func widgets(t testing.TB) Decoder {
	b, err := os.ReadFile("testdata/widget-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return Decoder{GVK: widgetGVK, Schema: Structural(s)}
}

type outcome struct {
	warnings []string // under Warn
	code     int      // under Strict (0: accepted at every level)
	message  string   // under Strict
	obj      string   // the decoded object under Ignore and Warn (JSON), when checked
}

func TestDecodeLevels(t *testing.T) {
	cm, wd := configMaps(t), widgets(t)
	const cmStrict = `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: `
	const wdStrict = `Widget in version "v1" cannot be handled as a Widget: strict decoding error: `
	cases := []struct {
		name   string
		d      Decoder
		format Format
		body   string
		want   outcome
	}{
		{"built-in clean", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"b"}}`,
			outcome{obj: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"b"}}`}},
		{"built-in unknown top-level", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"spec":{"x":1}}`,
			outcome{warnings: []string{`unknown field "spec"`}, code: 400, message: cmStrict + `unknown field "spec"`,
				obj: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"}}`}},
		{"built-in unknown, duplicate, nested, in document order", cm, JSON,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","foo":1},"data":{"a":"b"},"data":{"c":"d"},"spec":{"x":1},"bogus":true}`,
			outcome{warnings: []string{`unknown field "metadata.foo"`, `duplicate field "data"`, `unknown field "spec"`, `unknown field "bogus"`},
				code: 400, message: cmStrict + `unknown field "metadata.foo", duplicate field "data", unknown field "spec", unknown field "bogus"`,
				obj: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":"b","c":"d"}}`}},
		{"built-in nested unknown in list elements, duplicate map key", cm, JSON,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u","zz":1},{"apiVersion":"v1","kind":"X","name":"y","uid":"u2","yy":{"a":1}}],"labels":{"a":"b","a":"c"}},"data":{"a":"b"}}`,
			outcome{warnings: []string{`unknown field "metadata.ownerReferences[0].zz"`, `unknown field "metadata.ownerReferences[1].yy"`, `duplicate field "metadata.labels.a"`},
				code: 400, message: cmStrict + `unknown field "metadata.ownerReferences[0].zz", unknown field "metadata.ownerReferences[1].yy", duplicate field "metadata.labels.a"`}},
		{"built-in duplicates nested and top-level", cm, JSON,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d","name":"e","labels":{"x":"1"}},"data":{"a":"b","a":"c"},"data":{"z":"1"}}`,
			outcome{warnings: []string{`duplicate field "metadata.name"`, `duplicate field "data.a"`, `duplicate field "data"`},
				code: 400, message: cmStrict + `duplicate field "metadata.name", duplicate field "data.a", duplicate field "data"`,
				obj: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"e","labels":{"x":"1"}},"data":{"a":"c","z":"1"}}`}},
		{"built-in missing apiVersion and kind come from the endpoint", cm, JSON, `{"metadata":{"name":"nk"},"data":{"a":"b"},"x":1}`,
			outcome{warnings: []string{`unknown field "x"`}, code: 400, message: cmStrict + `unknown field "x"`,
				obj: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"nk"},"data":{"a":"b"}}`}},
		{"JSON null is an empty object (kube-apiserver then asks for a name)", cm, JSON, `null`,
			outcome{obj: `{"apiVersion":"v1","kind":"ConfigMap"}`}},
		{"built-in YAML duplicate key and unknown fields", cm, YAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\n  foo: 1\ndata:\n  a: b\ndata:\n  c: d\nbogus: 1\n",
			outcome{warnings: []string{`line 9: key "data" already set in map`, `unknown field "bogus"`, `unknown field "metadata.foo"`},
				code: 400, message: cmStrict + "yaml: unmarshal errors:\n  line 9: key \"data\" already set in map, unknown field \"bogus\", unknown field \"metadata.foo\""}},
		{"built-in YAML two duplicate keys", cm, YAML,
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y2\n  name: y3\ndata:\n  a: b\n  a: c\n",
			outcome{warnings: []string{`line 5: key "name" already set in map`, `line 8: key "a" already set in map`},
				code: 400, message: cmStrict + "yaml: unmarshal errors:\n  line 5: key \"name\" already set in map\n  line 8: key \"a\" already set in map"}},
		{"schema clean", wd, JSON, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"free":{"any":{"thing":1}}}}`,
			outcome{obj: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":1,"free":{"any":{"thing":1}}}}`}},
		{"schema unknown top-level", wd, JSON, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"top":1}`,
			outcome{warnings: []string{`unknown field "top"`}, code: 400, message: wdStrict + `unknown field "top"`,
				obj: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"}}`}},
		{"schema nested unknown everywhere, preserve-unknown-fields kept", wd, JSON,
			`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1","foo":1,"ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u","zz":1}]},"zeta":1,"spec":{"zed":1,"size":1,"bar":1,"items":[{"a":"x","b":1},{"c":{"d":1}}],"nested":{"inner":{"x":"1","y":"2"},"z":1},"free":{"anything":{"goes":1}},"keyed":[{"name":"k","q":1}],"alpha":1},"top":1,"status":{"ready":true,"bad":1}}`,
			outcome{warnings: []string{`unknown field "metadata.foo"`, `unknown field "metadata.ownerReferences[0].zz"`, `unknown field "spec.alpha"`, `unknown field "spec.bar"`,
				`unknown field "spec.items[0].b"`, `unknown field "spec.items[1].c"`, `unknown field "spec.keyed[0].q"`, `unknown field "spec.nested.inner.y"`,
				`unknown field "spec.nested.z"`, `unknown field "spec.zed"`, `unknown field "status.bad"`, `unknown field "top"`, `unknown field "zeta"`},
				code: 400, message: wdStrict + `unknown field "metadata.foo", unknown field "metadata.ownerReferences[0].zz", unknown field "spec.alpha", unknown field "spec.bar", unknown field "spec.items[0].b", unknown field "spec.items[1].c", unknown field "spec.keyed[0].q", unknown field "spec.nested.inner.y", unknown field "spec.nested.z", unknown field "spec.zed", unknown field "status.bad", unknown field "top", unknown field "zeta"`,
				obj: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1","ownerReferences":[{"apiVersion":"v1","kind":"X","name":"x","uid":"u"}]},"spec":{"free":{"anything":{"goes":1}},"items":[{"a":"x"},{}],"keyed":[{"name":"k"}],"nested":{"inner":{"x":"1"}},"size":1},"status":{"ready":true}}`}},
		{"schema duplicates first, last value wins", wd, JSON,
			`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1","foo":1},"spec":{"size":1,"size":2,"bar":1,"labels":{"a":"1","a":"2"}},"top":1,"spec":{"size":3}}`,
			outcome{warnings: []string{`duplicate field "spec.size"`, `duplicate field "spec.labels.a"`, `duplicate field "spec"`, `unknown field "metadata.foo"`, `unknown field "top"`},
				code: 400, message: wdStrict + `duplicate field "spec.size", duplicate field "spec.labels.a", duplicate field "spec", unknown field "metadata.foo", unknown field "top"`,
				obj: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3}}`}},
		{"schema: a missing apiVersion is not filled (the caller's version check reports it)", wd, JSON, `{"kind":"Widget","metadata":{"name":"w1"}}`,
			outcome{obj: `{"kind":"Widget","metadata":{"name":"w1"}}`}},
		{"schema: another kind is neither pruned nor reported (validation refuses the kind)", wd, JSON, `{"apiVersion":"fc.example.com/v1","kind":"Other","metadata":{"name":"a"},"bogus":1}`,
			outcome{obj: `{"apiVersion":"fc.example.com/v1","kind":"Other","metadata":{"name":"a"},"bogus":1}`}},
		{"schema: a null property is unset (also under additionalProperties), a null list item and preserved nulls stay", wd, JSON,
			`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":null,"tags":[null],"free":{"x":null},"labels":{"a":null}}}`,
			outcome{obj: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"tags":[null],"free":{"x":null},"labels":{}}}`}},
		{"schema YAML duplicate key and unknown field", wd, YAML,
			"apiVersion: fc.example.com/v1\nkind: Widget\nmetadata:\n  name: y1\nspec:\n  size: 1\n  size: 2\n  bar: 1\n",
			outcome{warnings: []string{`line 7: key "size" already set in map`, `unknown field "spec.bar"`},
				code: 400, message: wdStrict + "yaml: unmarshal errors:\n  line 7: key \"size\" already set in map, unknown field \"spec.bar\""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objI, wI, err := tc.d.Decode([]byte(tc.body), tc.format, Ignore)
			if err != nil || len(wI) != 0 {
				t.Fatalf("Ignore: warnings %q, error %v", wI, err)
			}
			objW, wW, err := tc.d.Decode([]byte(tc.body), tc.format, Warn)
			if err != nil {
				t.Fatalf("Warn: %v", err)
			}
			if !reflect.DeepEqual(wW, tc.want.warnings) {
				t.Errorf("Warn warnings\n got %q\nwant %q", wW, tc.want.warnings)
			}
			if !reflect.DeepEqual(objI, objW) {
				t.Errorf("Ignore and Warn decode differently: %v vs %v", objI, objW)
			}
			if tc.want.obj != "" {
				var want map[string]any
				if err := json.Unmarshal([]byte(tc.want.obj), &want); err != nil {
					t.Fatal(err)
				}
				if !jsonEqual(objW, want) {
					got, _ := json.Marshal(objW)
					t.Errorf("object\n got %s\nwant %s", got, tc.want.obj)
				}
			}
			objS, wS, err := tc.d.Decode([]byte(tc.body), tc.format, Strict)
			if tc.want.code == 0 {
				if err != nil || len(wS) != 0 || !reflect.DeepEqual(objS, objW) {
					t.Fatalf("Strict: warnings %q, error %v", wS, err)
				}
				return
			}
			expectStatus(t, err, tc.want.code, "BadRequest", tc.want.message)
		})
	}
}

func jsonEqual(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	var x, y any
	_ = json.Unmarshal(ja, &x)
	_ = json.Unmarshal(jb, &y)
	return reflect.DeepEqual(x, y)
}

func expectStatus(t *testing.T, err error, code int, reason, message string) {
	t.Helper()
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("error %T %v, want a StatusError", err, err)
	}
	st := se.Status()
	if int(st.Code) != code || string(st.Reason) != reason || st.Message != message {
		t.Fatalf("status %d %s %q\nwant   %d %s %q", st.Code, st.Reason, st.Message, code, reason, message)
	}
}

// Type errors and unreadable bodies fail at every level.
func TestDecodeFailsAtEveryLevel(t *testing.T) {
	cm, wd := configMaps(t), widgets(t)
	sec, _ := Builtin("Secret")
	ns, _ := Builtin("Namespace")
	secrets := Decoder{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, Schema: sec}
	namespaces := Decoder{GVK: schema.GroupVersionKind{Version: "v1", Kind: "Namespace"}, Schema: ns}
	cases := []struct {
		name    string
		d       Decoder
		format  Format
		body    string
		message string
	}{
		{"string in a map of strings", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":{"a":1},"bogus":1}`,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"string for a bool", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"immutable":"yes"}`,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool`},
		{"string for an int64 in metadata", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1", "generation":"x"}}`,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64`},
		{"array for a map", cm, JSON, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1"},"data":[1]}`,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string`},
		{"YAML type error", cm, YAML, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  a: 1\n",
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"string for a list", namespaces, JSON, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c1"},"spec":{"finalizers":"x"}}`,
			`Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal string into Go struct field NamespaceSpec.spec.finalizers of type []v1.FinalizerName`},
		{"number in a list of strings", namespaces, JSON, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c1"},"spec":{"finalizers":[1]}}`,
			`Namespace in version "v1" cannot be handled as a Namespace: json: cannot unmarshal number into Go struct field NamespaceSpec.spec.finalizers of type v1.FinalizerName`},
		{"another kind at this endpoint names both", cm, JSON, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c1"},"spec":{"finalizers":"x"},"data":[1]}`,
			`Namespace in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string`},
		{"bad base64 in a Secret", secrets, JSON, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{"a":"!!"}}`,
			`Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0`},
		{"schema metadata type error", wd, JSON, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1","generation":"x"},"spec":{"bar":1}}`,
			`Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64`},
		{"schema: a number beyond float64", wd, JSON, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"bar":1e400}}`,
			`Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number 1e400 into Go value of type float64`},
		{"schema: no kind", wd, JSON, `{"apiVersion":"fc.example.com/v1","metadata":{"name":"a"}}`,
			`the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '{"apiVersion":"fc.example.com/v1","metadata":{"name":"a"}}' ({"apiVersion":"fc.example.com/ ...)`},
		{"schema: JSON null", wd, JSON, `null`,
			`the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in 'null' (6e756c6c)`},
		{"a built-in kind in another version", cm, JSON, `{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":1}}`,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111"`},
		{"another built-in kind: the conversion fails before strict decoding", cm, JSON, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"},"bogus":1}`,
			`Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"truncated JSON", namespaces, JSON, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"c1"},`,
			`the object provided is unrecognized (must be of type Namespace): couldn't get version/kind; json parse error: unexpected end of JSON input ({"apiVersion":"v1","kind":"Nam ...)`},
		{"a JSON array", cm, JSON, `[]`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b5d)`},
		{"an empty body", cm, JSON, ``,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`},
		{"a number for apiVersion", cm, JSON, `{"apiVersion":5,"kind":"ConfigMap"}`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"apiVersion":5,"kind":"Config ...)`},
		{"a number for an earlier copy of kind", cm, JSON, `{"apiVersion":"v1","kind":5,"kind":"ConfigMap"}`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({"apiVersion":"v1","kind":5,"k ...)`},
		{"a number for an escaped copy of apiVersion", cm, JSON, `{"\u0061piVersion":5,"apiVersion":"v1","kind":"ConfigMap"}`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string ({"\u0061piVersion":5,"apiVersi ...)`},
		{"not JSON", cm, JSON, `not json`,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'o' in literal null (expecting 'u') (6e6f74206a736f6e)`},
		{"bad YAML", cm, YAML, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y1\ndata:\n  a: [1\n",
			`the object provided is unrecognized (must be of type ConfigMap): yaml: line 6: did not find expected ',' or ']' (61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)`},
	}
	for _, tc := range cases {
		for _, level := range []Level{Ignore, Warn, Strict} {
			t.Run(tc.name+"/"+string(level), func(t *testing.T) {
				_, _, err := tc.d.Decode([]byte(tc.body), tc.format, level)
				expectStatus(t, err, http.StatusBadRequest, "BadRequest", tc.message)
			})
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, tc := range []struct {
		value, options string
		want           Level
		message        string
	}{
		{"", "CreateOptions", Warn, ""},
		{"Warn", "CreateOptions", Warn, ""},
		{"Ignore", "UpdateOptions", Ignore, ""},
		{"Strict", "PatchOptions", Strict, ""},
		{"Foo", "CreateOptions", "", `CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Foo": supported values: "", "Ignore", "Strict", "Warn"`},
		{"Nope", "UpdateOptions", "", `UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Nope": supported values: "", "Ignore", "Strict", "Warn"`},
		{"strict", "PatchOptions", "", `PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"`},
	} {
		got, err := ParseLevel(tc.value, tc.options)
		if tc.message == "" {
			if err != nil || got != tc.want {
				t.Errorf("ParseLevel(%q) = %q, %v", tc.value, got, err)
			}
			continue
		}
		expectStatus(t, err, 422, "Invalid", tc.message)
		st := err.(*apierrors.StatusError).Status()
		if st.Details == nil || st.Details.Group != "meta.k8s.io" || st.Details.Kind != tc.options || len(st.Details.Causes) != 1 ||
			st.Details.Causes[0].Field != "fieldValidation" || string(st.Details.Causes[0].Type) != "FieldValueNotSupported" ||
			st.Details.Causes[0].Message != strings.TrimPrefix(tc.message, tc.options+`.meta.k8s.io "" is invalid: fieldValidation: `) {
			t.Errorf("details %+v", st.Details)
		}
	}
}

// The patched objects below are shortened forms of the ones kube-apiserver
// built; the messages quote whatever patched object the caller passes.
func TestDecodePatched(t *testing.T) {
	cm, wd := configMaps(t), widgets(t)
	livePatched := `{"apiVersion":"v1","bogus":1,"data":{"a":"b","z":"w"},"kind":"ConfigMap","metadata":{"foo":2,"name":"p1","namespace":"fcobs"}}`
	cases := []struct {
		name     string
		d        Decoder
		pt       PatchType
		patch    string
		patched  string
		warnings []string
		strict   string // 422 message under Strict ("" when accepted)
		everyErr string // 422 message at every level
	}{
		{"merge: duplicate in the patch, unknown in the result", cm, MergePatch,
			`{"data":{"x":"y"},"bogus":1,"metadata":{"foo":2},"data":{"z":"w"}}`, livePatched,
			[]string{`duplicate field "data"`, `unknown field "bogus"`, `unknown field "metadata.foo"`},
			` "" is invalid: patch: Invalid value: "` + jsonQuoteInner(livePatched) + `": strict decoding error: duplicate field "data", unknown field "bogus", unknown field "metadata.foo"`, ""},
		{"strategic: the value is the patch map", cm, StrategicMergePatch,
			`{"data":{"x":"y"},"bogus":1,"metadata":{"foo":2},"data":{"z":"w"}}`, livePatched,
			[]string{`duplicate field "data"`, `unknown field "bogus"`, `unknown field "metadata.foo"`},
			` "" is invalid: patch: Invalid value: "map[bogus:1 data:map[z:w] metadata:map[foo:2]]": strict decoding error: duplicate field "data", unknown field "bogus", unknown field "metadata.foo"`, ""},
		{"json patch: no duplicates", cm, JSONPatch,
			`[{"op":"add","path":"/bogus","value":1},{"op":"add","path":"/metadata/foo","value":1}]`,
			`{"apiVersion":"v1","bogus":1,"data":{"a":"b"},"kind":"ConfigMap","metadata":{"foo":1,"name":"p1"}}`,
			[]string{`unknown field "bogus"`, `unknown field "metadata.foo"`},
			` "" is invalid: patch: Invalid value: "` + jsonQuoteInner(`{"apiVersion":"v1","bogus":1,"data":{"a":"b"},"kind":"ConfigMap","metadata":{"foo":1,"name":"p1"}}`) + `": strict decoding error: unknown field "bogus", unknown field "metadata.foo"`, ""},
		{"merge: a type error is a 422 at every level", cm, MergePatch,
			`{"data":{"a":1},"bogus":2}`, `{"apiVersion":"v1","bogus":2,"data":{"a":1},"kind":"ConfigMap","metadata":{"name":"p1"}}`,
			nil, "", ` "" is invalid: patch: Invalid value: "` + jsonQuoteInner(`{"apiVersion":"v1","bogus":2,"data":{"a":1},"kind":"ConfigMap","metadata":{"name":"p1"}}`) + `": json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"merge on a custom resource", wd, MergePatch,
			`{"spec":{"bar":1,"size":2,"size":3}}`, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w9"},"spec":{"bar":1,"size":3}}`,
			[]string{`duplicate field "spec.size"`, `unknown field "spec.bar"`},
			` "" is invalid: patch: Invalid value: "` + jsonQuoteInner(`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w9"},"spec":{"bar":1,"size":3}}`) + `": strict decoding error: duplicate field "spec.size", unknown field "spec.bar"`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, level := range []Level{Ignore, Warn, Strict} {
				obj, w, err := tc.d.DecodePatched(tc.pt, []byte(tc.patch), []byte(tc.patched), level)
				switch {
				case tc.everyErr != "":
					expectStatus(t, err, 422, "Invalid", tc.everyErr)
				case level == Strict:
					expectStatus(t, err, 422, "Invalid", tc.strict)
					if c := err.(*apierrors.StatusError).Status().Details.Causes; len(c) != 1 || c[0].Field != "patch" || string(c[0].Type) != "FieldValueInvalid" {
						t.Errorf("causes %+v", c)
					}
				case err != nil:
					t.Fatalf("%s: %v", level, err)
				case level == Warn && !reflect.DeepEqual(w, tc.warnings):
					t.Errorf("warnings %q, want %q", w, tc.warnings)
				case level == Ignore && len(w) != 0:
					t.Errorf("Ignore warned %q", w)
				case obj["bogus"] != nil || obj["spec"] != nil && obj["spec"].(map[string]any)["bar"] != nil:
					t.Errorf("unknown fields kept: %v", obj)
				}
			}
		})
	}
}

// jsonQuoteInner is s as %q shows it inside a message, without the quotes.
func jsonQuoteInner(s string) string {
	b, _ := json.Marshal(s)
	q := string(b[1 : len(b)-1])
	return q
}

func TestDecodeApply(t *testing.T) {
	dup := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ap2\ndata:\n  a: b\ndata:\n  c: d\n"
	obj, w, err := DecodeApply([]byte(dup), Warn)
	if err != nil || !reflect.DeepEqual(w, []string{`line 8: key "data" already set in map`}) {
		t.Fatalf("Warn: %q %v", w, err)
	}
	if !jsonEqual(obj["data"], map[string]any{"c": "d"}) {
		t.Errorf("data %v", obj["data"])
	}
	if _, w, err := DecodeApply([]byte(dup), Ignore); err != nil || len(w) != 0 {
		t.Fatalf("Ignore: %q %v", w, err)
	}
	_, _, err = DecodeApply([]byte(dup), Strict)
	expectStatus(t, err, 400, "BadRequest", "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  line 8: key \"data\" already set in map")
	_, _, err = DecodeApply([]byte("data: [1"), Warn)
	expectStatus(t, err, 400, "BadRequest", "error decoding YAML: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'")
}

func TestPruneKeepsEmbeddedAndAdditional(t *testing.T) {
	s := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{
			"template": map[string]any{"type": "object", "x-kubernetes-embedded-resource": true, "properties": map[string]any{"spec": map[string]any{"type": "object"}}},
			"any":      map[string]any{"type": "object", "additionalProperties": true},
			"port":     map[string]any{"x-kubernetes-int-or-string": true},
			"count":    map[string]any{"type": "integer"},
		}},
	}}
	obj := map[string]any{"apiVersion": "x/v1", "kind": "K", "spec": map[string]any{
		"template": map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"}, "spec": map[string]any{"gone": 1}, "extra": 1},
		"any":      map[string]any{"k": map[string]any{"deep": 1}},
		"port":     "http",
		"count":    map[string]any{"not": "an integer"},
	}}
	got := Prune(obj, s)
	want := []string{"spec.template.extra", "spec.template.spec.gone"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pruned %q, want %q", got, want)
	}
	tpl := obj["spec"].(map[string]any)["template"].(map[string]any)
	if tpl["metadata"] == nil || tpl["kind"] != "Pod" || obj["spec"].(map[string]any)["any"].(map[string]any)["k"] == nil {
		t.Errorf("kept fields lost: %v", obj)
	}
}

// TestEmptyManagedFields: an empty metadata.managedFields list is a reset
// for a built-in kind, whose Go type keeps it as an empty slice, so the
// decoded object keeps it (as a body and as a patch's result); a custom
// resource's metadata drops it, as kube-apiserver's does (v1.36.3: an
// empty list on a configmap clears the entries, on a custom resource it
// leaves them). A list with entries is kept either way.
func TestEmptyManagedFields(t *testing.T) {
	cm, wd := configMaps(t), widgets(t)
	entry := `{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{}}}`
	for _, tc := range []struct {
		name string
		d    Decoder
		body string
		want any // metadata.managedFields decoded; nil: absent
	}{
		{"configmap, empty", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[]}}`, []any{}},
		{"configmap, one empty entry", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[{}]}}`, []any{map[string]any{}}},
		{"configmap, an entry", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":[` + entry + `]}}`, "entry"},
		{"configmap, null", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","managedFields":null}}`, nil},
		{"custom resource, empty", wd, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"a","managedFields":[]}}`, nil},
		{"custom resource, an entry", wd, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"a","managedFields":[` + entry + `]}}`, "entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, obj map[string]any, err error) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				got, present := obj["metadata"].(map[string]any)["managedFields"]
				switch {
				case tc.want == nil:
					if present {
						t.Errorf("%s: managedFields %#v, want none", how, got)
					}
				case tc.want == "entry":
					if l, ok := got.([]any); !ok || len(l) != 1 || l[0].(map[string]any)["manager"] != "m" {
						t.Errorf("%s: managedFields %#v, want the entry", how, got)
					}
				case !reflect.DeepEqual(got, tc.want):
					t.Errorf("%s: managedFields %#v, want %#v", how, got, tc.want)
				}
			}
			obj, _, err := tc.d.Decode([]byte(tc.body), JSON, Warn)
			check("body", obj, err)
			obj, _, err = tc.d.DecodePatched(MergePatch, []byte(`{"metadata":{"managedFields":[]}}`), []byte(tc.body), Warn)
			check("patched", obj, err)
		})
	}
}
