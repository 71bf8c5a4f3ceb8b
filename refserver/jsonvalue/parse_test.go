package jsonvalue

import (
	"reflect"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// library decodes data as the library of the number rule does: what Parse
// must give whenever it answers.
func library(data []byte, numbers Numbers) (map[string]any, error) {
	var m map[string]any
	err := decodeByRule(data, numbers, &m)
	return m, err
}

const servedObject = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001","namespace":"ac-load-0","uid":"0f3c8c1e","creationTimestamp":"2026-11-23T15:00:00Z","labels":{"load":"apiconform"},"managedFields":[{"manager":"m","operation":"Update","apiVersion":"v1","time":"2026-11-23T15:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:index":{}}}}]},"data":{"index":"1"},"spec":{"n":3,"f":1.5,"big":9007199254740993}}`

const numbersObject = ` {"a" : [ 1 , -0, 1.5, 1e2, -9223372036854775808, 9223372036854775808, true, false, null, [], {}, "é"] } `

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{servedObject, true},
		{`{}`, true},
		{numbersObject, true},
		{`{"a":1,"a":{"b":2}}`, true},
		{`{"a":"\"b"}`, false},      // escapes: the library
		{"{\"a\":\"\xff\"}", false}, // not UTF-8: the library
		{`{"a":1e400}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":-}`, false},
		{`{"a":tru}`, false},
		{`{"a":1,}`, false},
		{`{"a":1} x`, false},
		{`[]`, false},
		{`null`, false},
		{``, false},
		{"{\"a\":\"\t\"}", false},
	} {
		for _, numbers := range []Numbers{Float64, PreserveInts, AsWritten} {
			got, ok := Parse([]byte(tc.in), numbers)
			if ok != tc.ok {
				t.Errorf("%s (numbers %d): ok %v, want %v", tc.in, numbers, ok, tc.ok)
				continue
			}
			if !ok {
				continue
			}
			if want, err := library([]byte(tc.in), numbers); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("%s (numbers %d): %#v, the library gives %#v (%v)", tc.in, numbers, got, want, err)
			}
		}
	}
}

// FuzzParse: whenever Parse answers, the library of its number rule
// decodes the input without error to the same map.
func FuzzParse(f *testing.F) {
	for _, s := range []string{servedObject, numbersObject, `{}`, `{"a":1,"a":{"b":2}}`, `{"a":"\"b"}`} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, rule uint8) {
		numbers := []Numbers{Float64, PreserveInts, AsWritten}[rule%3]
		got, ok := Parse(data, numbers)
		if !ok {
			return
		}
		if want, err := library(data, numbers); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q (numbers %d): parsed %#v, the library gives %#v (%v)", data, numbers, got, want, err)
		}
		obj, distinct, ok := ParseDistinct(data, numbers)
		if !ok || !reflect.DeepEqual(obj, got) {
			t.Fatalf("%q: ParseDistinct gives %#v (%v), Parse %#v", data, obj, ok, got)
		}
		var strict map[string]any
		issues, err := sigsjson.UnmarshalStrict(data, &strict, sigsjson.DisallowDuplicateFields)
		if err != nil || distinct != (len(issues) == 0) {
			t.Fatalf("%q: distinct %v, the strict library reports %v (%v)", data, distinct, issues, err)
		}
	})
}

func TestParseDistinct(t *testing.T) {
	for data, want := range map[string]bool{
		servedObject:                    true,
		numbersObject:                   true,
		`{}`:                            true,
		`{"a":1,"a":{"b":2}}`:           false,
		`{"a":{"b":1,"b":1}}`:           false,
		`{"a":[{"b":1},{"b":1,"b":2}]}`: false,
		`{"a":[{"b":1},{"b":1}]}`:       true,
		`{"a":{"b":1},"b":{"a":1}}`:     true,
	} {
		_, distinct, ok := ParseDistinct([]byte(data), PreserveInts)
		if !ok || distinct != want {
			t.Errorf("ParseDistinct(%s): distinct %v (ok %v), want %v", data, distinct, ok, want)
		}
	}
}

// keptAgain is what ParseKeeping must give for data: Parse's object
// without metadata.managedFields, and that value read by ParseValue from
// the kept bytes (nil when the member is not there).
func keptAgain(t *testing.T, data []byte, numbers Numbers, obj map[string]any, kept []byte) {
	t.Helper()
	want, ok := Parse(data, numbers)
	if !ok {
		t.Fatalf("%s: ParseKeeping answered where Parse declines", data)
	}
	md, _ := want["metadata"].(map[string]any)
	wantKept, there := md["managedFields"]
	delete(md, "managedFields")
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("%s: object %#v, want %#v", data, obj, want)
	}
	if kept == nil {
		if there {
			t.Fatalf("%s: nothing kept, want %#v", data, wantKept)
		}
		return
	}
	got, ok := ParseValue(kept, numbers)
	if !ok || !reflect.DeepEqual(got, wantKept) {
		t.Fatalf("%s: kept %s reads %#v (%v), want %#v", data, kept, got, ok, wantKept)
	}
}

func TestParseKeeping(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		kept string // "" for none
	}{
		{servedObject, true, `[{"manager":"m","operation":"Update","apiVersion":"v1","time":"2026-11-23T15:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:index":{}}}}]`},
		{`{"metadata":{"name":"a"}}`, true, ""},
		{`{"metadata":{"managedFields":null}}`, true, `null`},
		{` {"metadata" : { "managedFields" : [ {"a" : [1, -2.5e3, true, false, null, "é"]} ] , "name":"x"} } `, true, `[ {"a" : [1, -2.5e3, true, false, null, "é"]} ]`},
		// Only metadata's member of the top-level object is kept.
		{`{"managedFields":[1],"spec":{"managedFields":[2],"metadata":{"managedFields":[3]}},"metadata":{"labels":{"managedFields":"4"}}}`, true, ""},
		{`{"metadata":"managedFields"}`, true, ""},
		// What Parse declines, the kept bytes may not hold either.
		{`{"metadata":{"managedFields":[{"a":"\"b"}]}}`, false, ""},
		{"{\"metadata\":{\"managedFields\":[\"\xff\"]}}", false, ""},
		{`{"metadata":{"managedFields":[1e400]}}`, false, ""},
		{`{"metadata":{"managedFields":[01]}}`, false, ""},
		{`{"metadata":{"managedFields":[1,]}}`, false, ""},
		{`{"metadata":{"managedFields":{"a"}}}`, false, ""},
		{`{"metadata":{"managedFields":[tru]}}`, false, ""},
		{`{"metadata":{"managedFields":[}}`, false, ""},
		// Twice: the last would win.
		{`{"metadata":{"managedFields":[1],"managedFields":[2]}}`, false, ""},
		{`{"metadata":{"managedFields":[1]},"metadata":{"name":"a"}}`, false, ""},
	} {
		for _, numbers := range []Numbers{Float64, PreserveInts, AsWritten} {
			obj, kept, ok := ParseKeeping([]byte(tc.in), numbers, "metadata", "managedFields")
			if ok != tc.ok {
				t.Errorf("%s (numbers %d): ok %v, want %v", tc.in, numbers, ok, tc.ok)
				continue
			}
			if !ok {
				continue
			}
			if string(kept) != tc.kept {
				t.Errorf("%s: kept %q, want %q", tc.in, kept, tc.kept)
			}
			keptAgain(t, []byte(tc.in), numbers, obj, kept)
		}
	}
	for _, tc := range []struct {
		in string
		ok bool
	}{{`[1,{"a":null}]`, true}, {` "x" `, true}, {`1 2`, false}, {`[`, false}, {`"\n"`, false}} {
		if _, ok := ParseValue([]byte(tc.in), PreserveInts); ok != tc.ok {
			t.Errorf("ParseValue(%s): ok %v, want %v", tc.in, ok, tc.ok)
		}
	}
}

// FuzzParseKeeping: whenever ParseKeeping answers, Parse does, and the two
// agree on everything but the kept member, which ParseValue reads back.
func FuzzParseKeeping(f *testing.F) {
	for _, s := range []string{servedObject, `{"metadata":{"managedFields":[1],"managedFields":[2]}}`, `{"metadata":{"managedFields":null}}`} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, rule uint8) {
		numbers := []Numbers{Float64, PreserveInts, AsWritten}[rule%3]
		obj, kept, ok := ParseKeeping(data, numbers, "metadata", "managedFields")
		if ok {
			keptAgain(t, data, numbers, obj, kept)
		}
	})
}
