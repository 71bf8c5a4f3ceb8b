package registry

import (
	"encoding/json"
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
)

func TestPruneAndDefaults(t *testing.T) {
	raw := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"spec": map[string]any{"type": "object", "properties": map[string]any{
				"size":   map[string]any{"type": "integer", "default": 3},
				"items":  map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "default": "x"}}}},
				"free":   map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true},
				"labels": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
			}},
		},
	}
	n := parseSchemaNode(raw)
	obj := Object{
		"apiVersion": "x/v1", "kind": "K", "metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"items": []any{map[string]any{"b": 1}}, "free": map[string]any{"z": 1}, "labels": map[string]any{"k": "v"}, "junk": true},
		"top":  1,
	}
	dropped := fieldcheck.Prune(obj, raw)
	n.applyDefaults(obj, true)
	want := []string{"spec.items[0].b", "spec.junk", "top"}
	if !sameSet(dropped, want) {
		t.Fatalf("dropped %v, want %v", dropped, want)
	}
	spec := obj["spec"].(map[string]any)
	if spec["size"] != float64(3) || spec["items"].([]any)[0].(map[string]any)["a"] != "x" || spec["free"].(map[string]any)["z"] != 1 {
		t.Fatalf("after prune+defaults: %v", obj)
	}
	if obj["metadata"].(map[string]any)["name"] != "a" {
		t.Fatal("metadata must survive pruning")
	}
}

func TestValidateAgainstSchema(t *testing.T) {
	raw := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "required": []any{"size"}, "properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 1}}},
	}}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		spec   any
		fields []string
	}{
		{map[string]any{"size": 2}, nil},
		{map[string]any{"size": "big"}, []string{"spec.size"}},
		{map[string]any{"size": 0}, []string{"spec.size"}},
		{"x", []string{"spec"}},
	}
	for _, c := range cases {
		errs := s.validate(Object{"spec": c.spec})
		var got []string
		for _, e := range errs {
			got = append(got, e.Field)
		}
		if !sameSet(got, c.fields) {
			t.Errorf("spec %v: fields %v, want %v (%v)", c.spec, got, c.fields, errs)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, x := range a {
		m[x]++
	}
	for _, x := range b {
		m[x]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return len(a) == len(b) || reflect.DeepEqual(a, b)
}

// Type errors carry the JSON type as their value, as kube-apiserver's do.
func TestValidateCustomTypeWording(t *testing.T) {
	raw := map[string]any{"type": "object", "properties": map[string]any{
		"spec": map[string]any{"type": "object", "properties": map[string]any{"size": map[string]any{"type": "integer", "minimum": 1}}},
	}}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	errs := s.validate(Object{"spec": map[string]any{"size": "big"}})
	const want = `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`
	if len(errs) != 1 || errs[0].Error() != want {
		t.Fatalf("errors %v, want [%s]", errs, want)
	}
}

// widgetSchema has a constraint of each kind a CRD schema may state.
const widgetSchema = `{"type":"object","properties":{"spec":{"type":"object","required":["size"],"maxProperties":6,"properties":{"size":{"type":"integer","minimum":1,"maximum":10,"multipleOf":1},"ratio":{"type":"number","exclusiveMinimum":true,"minimum":0},"mode":{"type":"string","enum":["auto","manual"]},"level":{"type":"integer","enum":[1,2]},"name":{"type":"string","minLength":2,"maxLength":5,"pattern":"^[a-z]+$"},"email":{"type":"string","format":"email"},"tags":{"type":"array","minItems":1,"maxItems":2,"uniqueItems":false,"items":{"type":"string","maxLength":3}},"labels":{"type":"object","minProperties":1,"additionalProperties":{"type":"string"}},"nested":{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},"choice":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"string"}},"oneOf":[{"required":["x"]},{"required":["y"]}]},"notx":{"type":"string","not":{"enum":["x"]}}}}}}`

// TestValidateCustomWording checks each constraint's error against what
// kube-apiserver v1.36.3 answered for the same CRD schema and object (the
// Status message after `Widget.cmp.example.com "wN" is invalid: `, and the
// causes' reasons), dry-run creates observed 2026-11-28.
func TestValidateCustomWording(t *testing.T) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(widgetSchema), &raw); err != nil {
		t.Fatal(err)
	}
	s, err := compileSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		spec    string
		message string
		reasons []string
	}{
		{`{"size":3,"mode":"auto","level":2,"email":"a@example.com","choice":{"y":"1"}}`, "", nil},
		{`{"size":0}`,
			`spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1`,
			[]string{"FieldValueInvalid"}},
		{`{"size":11}`,
			`spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"ratio":0}`,
			`spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"mode":"other"}`,
			`spec.mode: Unsupported value: "other": supported values: "auto", "manual"`,
			[]string{"FieldValueNotSupported"}},
		{`{"size":3,"level":3}`,
			`spec.level: Unsupported value: 3: supported values: "1", "2"`,
			[]string{"FieldValueNotSupported"}},
		{`{"size":3,"name":"a"}`,
			`spec.name: Invalid value: "a": spec.name in body should be at least 2 chars long`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"name":"abcdefg"}`,
			`spec.name: Too long: may not be more than 5 bytes`,
			[]string{"FieldValueTooLong"}},
		{`{"size":3,"name":"AB1"}`,
			`spec.name: Invalid value: "AB1": spec.name in body should match '^[a-z]+$'`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"email":"not-an-email"}`,
			`spec.email: Invalid value: "not-an-email": spec.email in body must be of type email: "not-an-email"`,
			[]string{"FieldValueTypeInvalid"}},
		{`{"size":3,"tags":[]}`,
			`spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"tags":["a","b","c"]}`,
			`spec.tags: Too many: 3: must have at most 2 items`,
			[]string{"FieldValueTooMany"}},
		{`{"size":3,"tags":["abcd"]}`,
			`spec.tags[0]: Too long: may not be more than 3 bytes`,
			[]string{"FieldValueTooLong"}},
		{`{"size":3,"labels":{}}`,
			`spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"nested":{}}`,
			`spec.nested.a: Required value`,
			[]string{"FieldValueRequired"}},
		{`{"size":3,"choice":{"x":"1","y":"2"}}`,
			`<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found 2 valid alternatives`,
			[]string{"FieldValueInvalid"}},
		{`{"size":3,"choice":{}}`,
			`[<nil>: Invalid value: "": "spec.choice" must validate one and only one schema (oneOf). Found none valid, spec.choice.x: Required value]`,
			[]string{"FieldValueInvalid", "FieldValueRequired"}},
		{`{"size":3,"notx":"x"}`,
			`<nil>: Invalid value: "": "spec.notx" must not validate the schema (not)`,
			[]string{"FieldValueInvalid"}},
		{`{"mode":"auto"}`,
			`spec.size: Required value`,
			[]string{"FieldValueRequired"}},
		{`{"size":3,"ratio":1,"mode":"auto","level":1,"name":"ab","tags":["a"],"labels":{"a":"b"}}`,
			`spec: Too many: 7: must have at most 6 items`,
			[]string{"FieldValueTooMany"}},
	} {
		var spec any
		if err := json.Unmarshal([]byte(tc.spec), &spec); err != nil {
			t.Fatal(err)
		}
		errs := s.validate(Object{"apiVersion": "cmp.example.com/v1", "kind": "Widget", "spec": spec})
		var message string
		var reasons []string
		if agg := errs.ToAggregate(); agg != nil {
			message = agg.Error()
		}
		for _, e := range errs {
			reasons = append(reasons, string(e.Type))
		}
		if message != tc.message || !reflect.DeepEqual(reasons, tc.reasons) {
			t.Errorf("spec %s:\n got %s %v\nwant %s %v", tc.spec, message, reasons, tc.message, tc.reasons)
		}
	}
}

// typesSchema states types alone, nested every way a schema nests.
const typesSchema = `{"type":"object","description":"d","properties":{"spec":{"type":"object","properties":{
 "size":{"type":"integer","default":1},"ratio":{"type":"number"},"on":{"type":"boolean"},"note":{"type":"string","nullable":true},
 "port":{"x-kubernetes-int-or-string":true},"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true},
 "tags":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
 "rows":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"}}}},
 "labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`

// TestTypesSchemaWording checks a schema of types alone against what
// kube-apiserver v1.36.3 answered (dry-run creates, 2026-11-28): the
// Status message after `Typed.cmp.example.com "wN" is invalid: `, or
// nothing for an object it accepted, and then the spec it answered with. Each object goes through what a
// create does before validation (nulls dropped, defaults applied), decoded
// as the server decodes it. It checks the validator's skip too: forced to
// run, the validator gives the same answers.
func TestTypesSchemaWording(t *testing.T) {
	var raw map[string]any
	if err := json.Unmarshal([]byte(typesSchema), &raw); err != nil {
		t.Fatal(err)
	}
	cs, err := compileSchema(raw)
	if err != nil || !cs.typesOnly {
		t.Fatalf("compileSchema(types only) = %+v, %v; want a schema of types alone", cs, err)
	}
	always := *cs
	always.typesOnly = false
	for _, tc := range []struct{ spec, message, stored string }{
		{`{"size":1,"ratio":0.5,"on":true,"note":null,"port":"http","free":{"x":[1]},"tags":["a"],"rows":[{"n":1}],"labels":{"a":"b"}}`, ``, `{"free":{"x":[1]},"labels":{"a":"b"},"note":null,"on":true,"port":"http","ratio":0.5,"rows":[{"n":1}],"size":1,"tags":["a"]}`},
		{`{"size":"1"}`, `spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"`, ``},
		{`{"size":1.5}`, `[spec.size: Invalid value: "number": spec.size in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size]`, ``},
		{`{"ratio":"x"}`, `spec.ratio: Invalid value: "string": spec.ratio in body must be of type number: "string"`, ``},
		{`{"on":"true"}`, `spec.on: Invalid value: "string": spec.on in body must be of type boolean: "string"`, ``},
		{`{"note":5}`, `spec.note: Invalid value: "integer": spec.note in body must be of type string: "integer"`, ``},
		{`{"port":true}`, `spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"`, ``},
		{`{"port":1.5}`, `spec.port: Invalid value: "number": spec.port in body must be of type integer,string: "number"`, ``},
		{`{"free":[]}`, `spec.free: Invalid value: "array": spec.free in body must be of type object: "array"`, ``},
		{`{"tags":"a"}`, `spec.tags: Invalid value: "string": spec.tags in body must be of type array: "string"`, ``},
		{`{"tags":[1]}`, `spec.tags[0]: Invalid value: "integer": spec.tags[0] in body must be of type string: "integer"`, ``},
		{`{"rows":[{"n":"x"}]}`, `spec.rows[0].n: Invalid value: "string": spec.rows[0].n in body must be of type integer: "string"`, ``},
		{`{"rows":[5]}`, `spec.rows[0]: Invalid value: "integer": spec.rows[0] in body must be of type object: "integer"`, ``},
		{`{"labels":{"a":1}}`, `spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"`, ``},
		{`{"labels":[]}`, `spec.labels: Invalid value: "array": spec.labels in body must be of type object: "array"`, ``},
		{`{"size":null}`, ``, `{"size":1}`},
		{`[]`, `spec: Invalid value: "array": spec in body must be of type object: "array"`, ``},
		{`"spec"`, `spec: Invalid value: "string": spec in body must be of type object: "string"`, ``},
		{`null`, ``, `null`},
		{`{"ratio":null,"on":null}`, ``, `{"size":1}`},
		{`{"tags":[null]}`, `spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null"`, ``},
		{`{"labels":{"a":null}}`, ``, `{"labels":{},"size":1}`},
		{`{"rows":[null]}`, `spec.rows[0]: Invalid value: "null": spec.rows[0] in body must be of type object: "null"`, ``},
		{`{"size":1e20}`, `[spec.size: Invalid value: "number": spec.size in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size]`, ``},
		{`{"size":9223372036854775807}`, ``, ``},
		{`{"size":9223372036854775808}`, `[spec.size: Invalid value: "number": spec.size in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size]`, ``},
		{`{"size":-1e300}`, `[spec.size: Invalid value: "number": spec.size in body must be of type integer: "number", <nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.size]`, ``},
		{`{"size":2.0}`, ``, `{"size":2}`},
	} {
		for _, c := range []*customSchema{cs, &always} {
			var o Object
			if err := sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(`{"apiVersion":"cmp.example.com/v1","kind":"Typed","spec":`+tc.spec+`}`), &o); err != nil {
				t.Fatal(err)
			}
			fieldcheck.DropNulls(o, raw)
			parseSchemaNode(raw).applyDefaults(o, true)
			var message string
			if agg := c.validate(o).ToAggregate(); agg != nil {
				message = agg.Error()
			}
			if message != tc.message {
				t.Errorf("spec %s (validator skipped for types: %v):\n got %s\nwant %s", tc.spec, c.typesOnly, message, tc.message)
			}
			if tc.stored != "" {
				var want any
				if err := json.Unmarshal([]byte(tc.stored), &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(normalize(o["spec"]), want) { // as JSON: kube-apiserver's 2 may be our 2.0
					t.Errorf("spec %s: after nulls and defaults %v, want %s", tc.spec, o["spec"], tc.stored)
				}
			}
		}
	}
	// Any member but those of types, anywhere, keeps the validator.
	for _, constrained := range []string{
		`{"type":"object","properties":{"spec":{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","maxLength":3}}}}}}`,
		`{"type":"object","properties":{"spec":{"type":"object","additionalProperties":{"type":"string","enum":["a"]}}}}`,
		`{"type":"object","required":["spec"],"properties":{"spec":{"type":"object"}}}`,
		`{"type":"object","properties":{"spec":{"type":"string","format":"email"}}}`,
		`{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-validations":[{"rule":"true"}]}}}`,
		`{"type":"object","properties":{"spec":{"type":"object","additionalProperties":false}}}`,
		widgetSchema,
	} {
		var raw map[string]any
		if err := json.Unmarshal([]byte(constrained), &raw); err != nil {
			t.Fatal(err)
		}
		if cs, err := compileSchema(raw); err != nil || cs.typesOnly {
			t.Errorf("compileSchema(%s) = %+v, %v; want the validator kept", constrained, cs, err)
		}
	}
}
