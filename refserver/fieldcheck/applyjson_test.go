package fieldcheck

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeApplyJSON says which bodies take the JSON path and checks each
// against the YAML path: the ones taken give its object, the others are left
// to it.
func TestDecodeApplyJSON(t *testing.T) {
	for _, tc := range []struct {
		body  string
		taken bool
	}{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"a":"b"}}`, true},
		{"{\n  \"a\": [1, -2, true, false, null, {}, []],\n  \"b\" : {\"c\":\"d e:f #g\"}\n}\n", true},
		{` {"a":-0} `, true},
		{`{"a":123456789012345678}`, true},
		{`{}`, true},
		{`{"a":1.0}`, false},                 // YAML gives back the integer 1
		{`{"a":1e3}`, false},                 // YAML 1.1 reads 1e3 as a string
		{`{"a":1234567890123456789}`, false}, // 19 digits
		{"{\"a\"\n:1}", false},               // a key not on its colon's line
		{`{"` + strings.Repeat("k", 1100) + `":1}`, false},
		{"{\t\"a\":1}", false},
		{"{\"a\":1}\r\n", false},
		{`{"<<":{"a":1}}`, false},
		{`{"a":"\u00e9"}`, false},
		{`{"a":"é"}`, false},
		{`{"a":"x\ny"}`, false},
		{`{"a":{"b":1,"b":2}}`, false}, // a duplicate: YAML reports it
		{`{"a":1}{`, false},
		{`["a"]`, false},
		{"a: 1\n", false},
		{`{"a":tru}`, false},
		{`{"a":--1}`, false},
	} {
		_, taken := decodeApplyJSON([]byte(tc.body))
		if taken != tc.taken {
			t.Errorf("%q: taken %v, want %v", tc.body, taken, tc.taken)
		}
		sameAsYAML(t, []byte(tc.body))
	}
}

// TestDecodeApplyJSONGenerated holds the JSON path to the YAML path on
// generated JSON near the subset it takes: keys and strings with spaces,
// colons, '#', quotes' neighbours and now and then a byte it refuses,
// integers up to 20 digits, nesting, and spacing with newlines and tabs.
func TestDecodeApplyJSONGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 23))
	taken := 0
	const docs = 3000
	for range docs {
		var b strings.Builder
		genObject(rng, &b, 0)
		body := []byte(b.String())
		if _, ok := decodeApplyJSON(body); ok {
			taken++
		}
		sameAsYAML(t, body)
	}
	// The generator aims at the subset; the path must take much of it.
	if taken < docs/4 {
		t.Fatalf("the JSON path took %d of %d generated bodies", taken, docs)
	}
	t.Logf("the JSON path took %d of %d generated bodies", taken, docs)
}

func sameAsYAML(t *testing.T, body []byte) {
	t.Helper()
	for _, level := range []Level{Ignore, Warn, Strict} {
		obj, w, err := DecodeApply(body, level)
		wantObj, wantW, wantErr := decodeApplyYAML(body, level)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(w, wantW) || !reflect.DeepEqual(obj, wantObj) {
			t.Fatalf("%q at %v: %#v %q %v, the YAML path gives %#v %q %v", body, level, obj, w, err, wantObj, wantW, wantErr)
		}
	}
}

func genSpace(rng *rand.Rand, b *strings.Builder) {
	switch rng.IntN(12) {
	case 0:
		b.WriteString(" ")
	case 1:
		b.WriteString("\n  ")
	case 2:
		b.WriteString([]string{"\t", "\r\n", "\n"}[rng.IntN(3)])
	}
}

func genString(rng *rand.Rand, b *strings.Builder) {
	const plain = "abcXYZ09 :#-_./{}[],'!&*?|>%@`~"
	b.WriteByte('"')
	for range rng.IntN(8) {
		if rng.IntN(40) == 0 {
			b.WriteString([]string{`\n`, `\"`, `\u00e9`, "é", `\/`, "\u2028"}[rng.IntN(6)])
			continue
		}
		b.WriteByte(plain[rng.IntN(len(plain))])
	}
	b.WriteByte('"')
}

func genValue(rng *rand.Rand, b *strings.Builder, depth int) {
	switch n := rng.IntN(10); {
	case n < 2 && depth < 4:
		genObject(rng, b, depth+1)
	case n < 3 && depth < 4:
		b.WriteByte('[')
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			genSpace(rng, b)
			genValue(rng, b, depth+1)
		}
		b.WriteByte(']')
	case n < 6:
		genString(rng, b)
	case n < 8:
		if rng.IntN(2) == 0 {
			b.WriteByte('-')
		}
		digits := 1 + rng.IntN(20)
		b.WriteByte("123456789"[rng.IntN(9)])
		for range digits - 1 {
			b.WriteByte("0123456789"[rng.IntN(10)])
		}
		if rng.IntN(20) == 0 {
			b.WriteString([]string{".0", ".5", "e3", "E-1"}[rng.IntN(4)])
		}
	default:
		b.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
	}
}

func genObject(rng *rand.Rand, b *strings.Builder, depth int) {
	b.WriteByte('{')
	n := rng.IntN(5)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		genSpace(rng, b)
		if rng.IntN(30) == 0 {
			b.WriteString(`"<<"`)
		} else {
			genString(rng, b)
		}
		genSpace(rng, b)
		b.WriteByte(':')
		genSpace(rng, b)
		genValue(rng, b, depth)
	}
	genSpace(rng, b)
	b.WriteByte('}')
}
