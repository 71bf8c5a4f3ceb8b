package jsonvalue

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Parse decodes a JSON object into a map[string]any as the library of the
// number rule does (Float64: encoding/json's Unmarshal into any; PreserveInts:
// sigs.k8s.io/json's UnmarshalCaseSensitivePreserveInts, integral numbers
// without a '.' or exponent as int64 when they fit; AsWritten: encoding/json's
// Decoder with UseNumber, every number its text) — the last of duplicate
// keys wins, empty arrays are empty slices — in one pass and without
// reflection. ok is false for anything else: input that is not a JSON
// object, strings with escapes or bytes that are not UTF-8, numbers beyond
// float64, very deep nesting. The caller decodes those with the library, for
// its exact result and error.
func Parse(data []byte, numbers Numbers) (map[string]any, bool) {
	p := jsonParser{data: data, numbers: numbers}
	return p.top()
}

// ParseDistinct is Parse that also reports whether every object in data
// has distinct keys. When one repeats a key (the last wins), callers that
// must report duplicates take the slower path that names them; knowing
// there are none spares them a scan of data.
func ParseDistinct(data []byte, numbers Numbers) (obj map[string]any, distinct, ok bool) {
	p := jsonParser{data: data, numbers: numbers}
	obj, ok = p.top()
	return obj, ok && !p.repeated, ok
}

// ParseKeeping is Parse, except that the value of member inner of the object
// that is member outer of the top-level object (metadata.managedFields) is
// not decoded: it is checked as Parse would read it (so ParseValue reads it
// later), left out of obj and returned as its bytes, nil when there is no
// such member. ok is false where Parse's is, and when outer or inner is
// there twice (the last would win: a case kept bytes do not model).
func ParseKeeping(data []byte, numbers Numbers, outer, inner string) (obj map[string]any, kept []byte, ok bool) {
	p := jsonParser{data: data, numbers: numbers, keepOuter: outer, keepInner: inner, outerAt: -1}
	obj, ok = p.top()
	if !ok || p.twice {
		return nil, nil, false
	}
	return obj, p.kept, true
}

// ParseValue is Parse for any JSON value, not only an object.
func ParseValue(data []byte, numbers Numbers) (any, bool) {
	p := jsonParser{data: data, numbers: numbers}
	p.space()
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	return v, p.i == len(p.data)
}

// top reads the whole input as one object.
func (p *jsonParser) top() (map[string]any, bool) {
	p.space()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, false
	}
	v, ok := p.value(0)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.data) {
		return nil, false
	}
	m, _ := v.(map[string]any)
	return m, true
}

// maxParseDepth bounds the recursion; deeper input goes to the library.
const maxParseDepth = 200

type jsonParser struct {
	data    []byte
	i       int
	numbers Numbers
	// ParseKeeping's: the members kept as bytes, where outer's value
	// starts, what was kept, and whether either member came twice.
	keepOuter, keepInner string
	outerAt              int
	kept                 []byte
	twice                bool
	// repeated: some object had a key twice.
	repeated bool
}

func (p *jsonParser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, bool) {
	if p.i >= len(p.data) || depth > maxParseDepth {
		return nil, false
	}
	switch c := p.data[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.stringValue()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) object(depth int) (any, bool) {
	keeping := p.keepOuter != "" && depth == 1 && p.i == p.outerAt
	p.i++ // {
	m := make(map[string]any)
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return nil, false
		}
		k, ok := p.string()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		switch {
		case keeping && k == p.keepInner:
			p.twice = p.twice || p.kept != nil
			start := p.i
			if !p.skip(depth + 1) {
				return nil, false
			}
			p.kept = p.data[start:p.i]
		default:
			if depth == 0 && p.keepOuter != "" && k == p.keepOuter {
				p.twice = p.twice || p.outerAt >= 0
				p.outerAt = p.i
			}
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			n := len(m)
			if m[k] = v; len(m) == n {
				p.repeated = true
			}
		}
		p.space()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

// skip passes over the value at p.i as value would read it, building
// nothing.
func (p *jsonParser) skip(depth int) bool {
	if p.i >= len(p.data) || depth > maxParseDepth {
		return false
	}
	switch c := p.data[p.i]; {
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.space()
		if p.i < len(p.data) && p.data[p.i] == end {
			p.i++
			return true
		}
		for {
			p.space()
			if c == '{' {
				if p.i >= len(p.data) || p.data[p.i] != '"' {
					return false
				}
				if _, ok := p.stringBytes(); !ok {
					return false
				}
				p.space()
				if p.i >= len(p.data) || p.data[p.i] != ':' {
					return false
				}
				p.i++
				p.space()
			}
			if !p.skip(depth + 1) {
				return false
			}
			p.space()
			if p.i >= len(p.data) {
				return false
			}
			switch p.data[p.i] {
			case ',':
				p.i++
			case end:
				p.i++
				return true
			default:
				return false
			}
		}
	case c == '"':
		_, ok := p.stringBytes()
		return ok
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		_, ok := p.number()
		return ok
	}
	return false
}

func (p *jsonParser) array(depth int) (any, bool) {
	p.i++ // [
	a := make([]any, 0)
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		p.space()
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, false
		}
		switch p.data[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// string reads a string without escapes: its bytes are the value when they
// are UTF-8 (the library replaces bad bytes; such strings go to it).
func (p *jsonParser) string() (string, bool) {
	b, ok := p.stringBytes()
	if !ok {
		return "", false
	}
	return intern(b), true
}

// stringBytes is string's bytes, not yet a string.
func (p *jsonParser) stringBytes() ([]byte, bool) {
	start := p.i + 1
	ascii := true
	for j := start + PlainRun(p.data[start:]); j < len(p.data); j++ {
		switch c := p.data[j]; {
		case c == '"':
			b := p.data[start:j]
			if !ascii && !utf8.Valid(b) {
				return nil, false
			}
			p.i = j + 1
			return b, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, false
}

func (p *jsonParser) literal(word string) bool {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return false
	}
	p.i += len(word)
	return true
}

// number reads a number by JSON's grammar and converts it by the number rule.
func (p *jsonParser) number() (any, bool) {
	end, intEnd, ok := NumberEnd(p.data, p.i)
	if !ok {
		return nil, false
	}
	s := string(p.data[p.i:end])
	p.i = end
	if p.numbers == AsWritten {
		// Within float64's range, as the other rules: beyond it the library
		// takes the input (and its answer is the same).
		_, err := strconv.ParseFloat(s, 64)
		return json.Number(s), err == nil
	}
	if end == intEnd && p.numbers == PreserveInts {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// NumberEnd scans the number at b[i:] by JSON's grammar (an optional minus,
// an integer without leading zeros, an optional fraction and exponent): end
// is the index after it and intEnd the index after its integer part, so
// end == intEnd for an integer. ok is false when no number starts at i.
func NumberEnd(b []byte, i int) (end, intEnd int, ok bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return j, j, false
	}
	intEnd = j
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return j, intEnd, false
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || b[j] < '0' || b[j] > '9' {
			return j, intEnd, false
		}
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	}
	return j, intEnd, true
}

// common are the frequent keys and values of Kubernetes objects: most of a
// small object's strings, decoded without a copy each.
var common = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations", "uid", "resourceVersion",
		"creationTimestamp", "generation", "managedFields", "manager", "operation", "time", "fieldsType", "fieldsV1",
		"subresource", "FieldsV1", "Update", "Apply", "f:data", "f:metadata", "f:labels", "f:annotations", "f:spec",
		".", "v1", "data", "spec", "status", "ConfigMap", "Secret", "Namespace",
	} {
		m[s] = s
	}
	return m
}()

// commonValues are common's strings as values: a string put into an
// interface is an allocation of its own, done once here for these.
var commonValues = func() map[string]any {
	m := make(map[string]any, len(common))
	for s := range common {
		m[s] = s
	}
	return m
}()

// stringValue is string as a value.
func (p *jsonParser) stringValue() (any, bool) {
	b, ok := p.stringBytes()
	if !ok {
		return nil, false
	}
	if v, ok := commonValues[string(b)]; ok {
		return v, true
	}
	return string(b), true
}

func intern(b []byte) string {
	if s, ok := common[string(b)]; ok { // no allocation for the lookup
		return s
	}
	return string(b)
}
