package fieldcheck

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The typed fast check: proving, from the Go type, that checkTyped's round
// trip (strict decode into the type, marshal, decode again) would give back
// the parsed object unchanged and report nothing. Most write bodies are such
// objects, and the proof costs a walk of the map instead of three decodes.
// Whatever is not proven goes through checkTyped, so every error, warning and
// rewrite stays the library's.

// fastChecks turns the fast checks off (tests compare the two paths).
var fastChecks = true

// shapeKind is what a Go type is to the fast check.
type shapeKind uint8

const (
	sDecline shapeKind = iota // not proven: any value declines
	sString
	sBool
	sInt   // signed integer in [min, max]
	sBytes // []byte: canonical base64 only
	sTime  // metav1.Time: canonical RFC 3339 only
	sRaw   // metav1.FieldsV1: a JSON object kept as its bytes
	sPtr
	sMap // map with string keys
	sSlice
	sStruct
)

// zeroForm is what json.Marshal writes for a field holding its zero value.
type zeroForm uint8

const (
	zOther   zeroForm = iota // a value the client did not send: declines
	zOmitted                 // nothing
	zNull                    // null (dropped in metadata; kept at the top, as kube-apiserver writes it)
	zEmpty                   // {} (likewise; an empty metadata dropped)
)

type shape struct {
	kind     shapeKind
	min, max int64  // sInt
	elem     *shape // sPtr, sMap, sSlice
	fields   map[string]*fieldShape
	always   []*fieldShape // sStruct: fields that marshal writes even when zero
	zero     zeroForm      // sStruct: the zero struct's form as a value
}

type fieldShape struct {
	name      string
	s         *shape
	omitEmpty bool
	zero      zeroForm // the field's form when the client left it out
}

var (
	shapesMu sync.Mutex
	shapes   sync.Map // reflect.Type → *shape

	timeType     = reflect.TypeFor[metav1.Time]()
	fieldsV1Type = reflect.TypeFor[metav1.FieldsV1]()
)

// shapeOf is t's shape, built once per type.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	shapesMu.Lock()
	defer shapesMu.Unlock()
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

// buildShape follows encoding/json's rules for the kinds it proves;
// seen breaks cycles of recursive types.
func buildShape(t reflect.Type, seen map[reflect.Type]*shape) *shape {
	if s, ok := seen[t]; ok {
		return s
	}
	s := &shape{}
	seen[t] = s
	switch {
	case t == timeType:
		s.kind, s.zero = sTime, zNull
		return s
	case t == fieldsV1Type:
		s.kind, s.zero = sRaw, zNull
		return s
	case t.Kind() == reflect.Pointer: // *T has T's methods: T decides
		s.kind, s.elem = sPtr, buildShape(t.Elem(), seen)
		return s
	case customJSON(t):
		return s // sDecline: its own (un)marshalling
	}
	switch t.Kind() {
	case reflect.String:
		s.kind = sString
	case reflect.Bool:
		s.kind = sBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		// Unsigned kinds decline: "-0" parses as 0 but is no uint.
		bits := t.Bits()
		s.kind, s.min, s.max = sInt, -1<<(bits-1), 1<<(bits-1)-1
		if bits == 64 {
			s.min, s.max = math.MinInt64, math.MaxInt64
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String && !customJSON(t.Key()) {
			s.kind, s.elem = sMap, buildShape(t.Elem(), seen)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			if !customJSON(t.Elem()) {
				s.kind = sBytes
			}
		} else {
			s.kind, s.elem = sSlice, buildShape(t.Elem(), seen)
		}
	case reflect.Struct:
		buildStruct(s, t, seen)
	}
	return s
}

// customJSON: t or *t (un)marshals itself, as JSON or as text.
func customJSON(t reflect.Type) bool {
	for _, u := range []reflect.Type{t, reflect.PointerTo(t)} {
		if u.Implements(reflect.TypeFor[json.Marshaler]()) || u.Implements(reflect.TypeFor[json.Unmarshaler]()) ||
			u.Implements(reflect.TypeFor[encoding.TextMarshaler]()) || u.Implements(reflect.TypeFor[encoding.TextUnmarshaler]()) {
			return true
		}
	}
	return false
}

// buildStruct collects the JSON fields of a struct, embedded structs'
// fields promoted. Anything this does not model (a name twice at any depth,
// ",string", omitzero on a field whose zero we do not know, embedded
// pointers) leaves the struct sDecline.
func buildStruct(s *shape, t reflect.Type, seen map[reflect.Type]*shape) {
	fields := map[string]*fieldShape{}
	var collect func(t reflect.Type) bool
	collect = func(t reflect.Type) bool {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				if sf.Type.Kind() != reflect.Struct || customJSON(sf.Type) || !collect(sf.Type) {
					return false
				}
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			f := &fieldShape{name: name, s: buildShape(sf.Type, seen)}
			omitZero := false
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty":
					f.omitEmpty = true
				case "omitzero":
					omitZero = true
				case "string":
					return false
				}
			}
			f.zero = zeroOf(sf.Type, f.s, f.omitEmpty)
			if omitZero {
				// Only where a value we accept is never zero: a time
				// (non-zero, checked) or a pointer (never null).
				if f.s.kind != sTime && f.s.kind != sPtr {
					return false
				}
				f.zero = zOmitted
			}
			if _, dup := fields[name]; dup {
				return false
			}
			fields[name] = f
		}
		return true
	}
	if !collect(t) {
		return
	}
	s.kind, s.fields, s.zero = sStruct, fields, zEmpty
	for _, f := range fields {
		if f.zero != zOmitted {
			s.always = append(s.always, f)
			s.zero = zOther
		}
	}
}

// zeroOf is the form json.Marshal gives a field of type t holding its zero
// value (omitempty drops empty values, never structs).
func zeroOf(t reflect.Type, s *shape, omitEmpty bool) zeroForm {
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		if omitEmpty {
			return zOmitted
		}
		return zNull
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		if omitEmpty && !customJSON(t) {
			return zOmitted
		}
	case reflect.Struct:
		switch s.kind {
		case sTime, sRaw:
			return zNull
		case sStruct:
			return s.zero
		}
	}
	return zOther
}

// typedFast reports whether checkTyped(data, obj, a new value of t) would answer obj
// itself and no issues. h is what parse read: h.added counts the keys it
// added to obj (apiVersion, kind) that data does not have, and h.distinct
// says whether it knows data to repeat no key; Decode puts back what parse
// filled in.
func typedFast(data []byte, obj map[string]any, h head, t reflect.Type) bool {
	keys, ok := typedFastObject(obj, t)
	// A duplicate key anywhere leaves fewer keys in the maps than in the
	// text (the map keeps one of them): then checkTyped reports it.
	return ok && (h.distinct || keys-h.added == keyCount(data))
}

// typedFastObject is typedFast for the object alone, whatever text it came
// from: whether the typed round trip gives obj back with no unknown field.
// keys counts the keys of every map walked.
func typedFastObject(obj map[string]any, t reflect.Type) (keys int, ok bool) {
	if !fastChecks || t == nil {
		return 0, false
	}
	if t.Kind() != reflect.Pointer {
		return 0, false
	}
	s := shapeOf(t.Elem())
	if s.kind != sStruct {
		return 0, false
	}
	w := walker{}
	if !w.object(obj, s, levelRoot) {
		return 0, false
	}
	return w.keys, true
}

// level says where an object sits: in the top's metadata dropAdded removes
// the null and {} fields the round trip adds; at the top they stay (but for
// an empty metadata).
type level uint8

const (
	levelNested level = iota
	levelRoot
	levelMetadata
)

type walker struct {
	keys int // keys of every map walked
}

func (w *walker) object(m map[string]any, s *shape, at level) bool {
	w.keys += len(m)
	for k, v := range m {
		f, ok := s.fields[k]
		if !ok || v == nil {
			return false // unknown field, or null (marshal writes the zero value or drops it)
		}
		if f.omitEmpty && empty(v, f.s) {
			return false // marshal would drop it
		}
		if at == levelRoot && k == "metadata" && f.s.kind == sStruct {
			if mm, ok := v.(map[string]any); !ok || !w.object(mm, f.s, levelMetadata) {
				return false
			}
			continue
		}
		if !w.value(v, f.s) {
			return false
		}
	}
	for _, f := range s.always {
		if _, sent := m[f.name]; sent {
			continue
		}
		if at == levelNested || (at == levelRoot && f.name != "metadata") || (f.zero != zNull && f.zero != zEmpty) {
			return false // the round trip adds the field
		}
	}
	return true
}

func (w *walker) value(v any, s *shape) bool {
	switch s.kind {
	case sString:
		_, ok := v.(string)
		return ok
	case sBool:
		_, ok := v.(bool)
		return ok
	case sInt:
		n, ok := v.(int64) // a float64 (1.0, 1e3, beyond int64) is a decode error or a rewrite
		return ok && n >= s.min && n <= s.max
	case sBytes:
		str, ok := v.(string)
		return ok && canonicalBase64(str)
	case sTime:
		str, ok := v.(string)
		return ok && canonicalTime(str)
	case sRaw:
		m, ok := v.(map[string]any)
		if ok {
			w.keys += countKeys(m)
		}
		return ok
	case sPtr:
		return v != nil && w.value(v, s.elem)
	case sMap:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		w.keys += len(m)
		for _, e := range m {
			if e == nil || !w.value(e, s.elem) {
				return false
			}
		}
		return true
	case sSlice:
		a, ok := v.([]any)
		if !ok {
			return false
		}
		for _, e := range a {
			if e == nil || !w.value(e, s.elem) {
				return false
			}
		}
		return true
	case sStruct:
		m, ok := v.(map[string]any)
		return ok && w.object(m, s, levelNested)
	}
	return false
}

// empty: omitempty would drop the (well-typed) value v.
func empty(v any, s *shape) bool {
	switch s.kind {
	case sString, sBytes:
		return v == ""
	case sBool:
		return v == false
	case sInt:
		return v == int64(0)
	case sMap:
		m, _ := v.(map[string]any)
		return len(m) == 0
	case sSlice:
		a, _ := v.([]any)
		return len(a) == 0
	}
	return false
}

// canonicalTime: metav1.Time reads s and writes it back unchanged (UTC,
// seconds, not the zero time, which it writes as null).
func canonicalTime(s string) bool {
	if len(s) != len("2006-01-02T15:04:05Z") {
		return false
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.IsZero() {
		return false
	}
	var buf [len("2006-01-02T15:04:05Z")]byte
	return string(t.UTC().AppendFormat(buf[:0], time.RFC3339)) == s
}

// canonicalBase64: a []byte reads s and writes it back unchanged.
func canonicalBase64(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	return err == nil && base64.StdEncoding.EncodeToString(b) == s
}

// countKeys counts the keys of every map in v.
func countKeys(v any) int {
	switch t := v.(type) {
	case map[string]any:
		n := len(t)
		for _, e := range t {
			n += countKeys(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range t {
			n += countKeys(e)
		}
		return n
	}
	return 0
}

// keyCount counts the object keys in data (valid JSON): each is followed by
// the only colons outside strings.
func keyCount(data []byte) int {
	n := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case ':':
			n++
		case '"':
			i = stringEnd(data, i+1)
		}
	}
	return n
}

// stringEnd is the index of the quote closing the string whose content
// starts at i (len(data) when there is none).
func stringEnd(data []byte, i int) int {
	for {
		j := bytes.IndexByte(data[i:], '"')
		if j < 0 {
			return len(data)
		}
		q := i + j
		bs := 0
		for k := q - 1; k >= i && data[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return q
		}
		i = q + 1
	}
}

// noDuplicateKeys reports whether no object of data repeats a key, when a
// plain comparison of the keys' bytes can tell (false otherwise: a key with
// an escape or a non-ASCII byte, a very wide object). On input that is not
// JSON the answer means nothing.
func noDuplicateKeys(data []byte) bool {
	const maxKeys = 64
	var keyBuf [maxKeys][2]int
	var frameBuf [32]int // per open container: index of its first key, or -1 for an array
	keys, frames := keyBuf[:0], frameBuf[:0]
	expectKey := false
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '{':
			frames = append(frames, len(keys))
			expectKey = true
		case '[':
			frames = append(frames, -1)
			expectKey = false
		case '}', ']':
			if len(frames) == 0 {
				return false
			}
			if top := frames[len(frames)-1]; top >= 0 {
				keys = keys[:top]
			}
			frames = frames[:len(frames)-1]
			expectKey = false
		case ',':
			expectKey = len(frames) > 0 && frames[len(frames)-1] >= 0
		case '"':
			start := i + 1
			i = stringEnd(data, start)
			if !expectKey {
				continue
			}
			expectKey = false
			key := data[start:min(i, len(data))]
			for _, c := range key {
				if c == '\\' || c >= 0x80 {
					return false
				}
			}
			if len(frames) == 0 || len(keys) == maxKeys {
				return false
			}
			for _, k := range keys[frames[len(frames)-1]:] {
				if string(data[k[0]:k[1]]) == string(key) {
					return false
				}
			}
			keys = append(keys, [2]int{start, start + len(key)})
		}
	}
	return true
}
