package jsonvalue

import (
	"reflect"
	"testing"
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
	})
}
