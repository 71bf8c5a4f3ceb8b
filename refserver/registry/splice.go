package registry

import (
	"bytes"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// spliceForm is the rendering spliceStored gives.
type spliceForm int

const (
	formItem   spliceForm = iota // a list item: the stored members in their (sorted) order
	formBare                     // a list item without apiVersion and kind (lists of one kind only)
	formObject                   // a single object as MarshalObject writes it: kind, apiVersion, metadata first
)

// spliceStored gives the rendering of a stored value at revision rev in the
// storage version without decoding it: the stored bytes with
// "resourceVersion":"<rev>" put into the top-level metadata at its sorted
// place; as a list item (as stored, or bare: without the top-level
// apiVersion and kind), or as a single object (MarshalObject's order and
// trailing newline). ok is false when the bytes are not in the shape this
// relies on; the caller then decodes and encodes.
//
// Why this is safe: encode stores MarshalJSON's bytes (compact, sorted keys,
// encoding/json's escaping) of the object without resourceVersion, and the
// store checksums them, so decoding them and encoding the result gives the
// same bytes; what decode adds is resourceVersion, and apiVersion and kind,
// which the stored bytes already hold. MarshalObject only moves kind,
// apiVersion and metadata to the front, encoding every value as MarshalJSON
// does. The scan checks all of that instead of trusting it: whitespace,
// unsorted or duplicate keys, a string or number MarshalJSON would write
// otherwise, no metadata object, a resourceVersion already there, another
// apiVersion or kind, or nesting deeper than maxSpliceDepth gives ok false.
//
// One difference is deliberate: an integer of 16 to 18 digits is kept as
// stored, where decode's float64 would round one beyond 2^53; kube-apiserver
// decodes integers as int64 and keeps them exact, as the splice does.
// Integers int64 cannot hold (-0, more than 18 digits) give ok false.
func spliceStored(stored []byte, rev int64, apiVersion, kind string, form spliceForm) ([]byte, bool) {
	s := spliceScan{b: stored}
	if !s.top(apiVersion, kind) {
		return nil, false
	}
	return s.spliceLayout.splice(stored, rev, form), true
}

// splice is spliceStored's rendering of stored, laid out as s says (by
// the scan, or by appendStored as it wrote the bytes).
func (s *spliceLayout) splice(stored []byte, rev int64, form spliceForm) []byte {
	var buf [48]byte
	ins := buf[:0]
	if s.mode == insertAppend {
		ins = append(ins, ',')
	}
	ins = append(ins, `"resourceVersion":"`...)
	ins = strconv.AppendInt(ins, rev, 10)
	ins = append(ins, '"')
	if s.mode == insertBefore {
		ins = append(ins, ',')
	}
	b := stored
	out := make([]byte, 0, len(b)+len(ins)+1)
	switch form {
	case formBare:
		// apiVersion < kind < metadata, so both are followed by a comma,
		// which goes with them.
		out = append(out, b[:s.api.start]...)
		out = append(out, b[s.api.end+1:s.kind.start]...)
		out = append(out, b[s.kind.end+1:s.insert]...)
	case formObject:
		out = append(out, '{')
		out = append(out, b[s.kind.start:s.kind.end]...)
		out = append(out, ',')
		out = append(out, b[s.api.start:s.api.end]...)
		out = append(out, ',')
		out = append(out, b[s.meta.start:s.insert]...)
		out = append(out, ins...)
		out = append(out, b[s.insert:s.meta.end]...)
		// The other members, in their stored (sorted) order: the runs
		// before apiVersion, between it, kind and metadata, and after.
		for _, run := range [4]span{{1, s.api.start - 1}, {s.api.end + 1, s.kind.start - 1}, {s.kind.end + 1, s.meta.start - 1}, {s.meta.end + 1, len(b) - 1}} {
			if run.start < run.end {
				out = append(out, ',')
				out = append(out, b[run.start:run.end]...)
			}
		}
		return append(out, '}', '\n')
	default:
		out = append(out, b[:s.insert]...)
	}
	out = append(out, ins...)
	return append(out, b[s.insert:]...)
}

// maxSpliceDepth bounds the nesting the scan follows; deeper values are
// left to decode (MarshalJSON's own bound is far beyond real objects).
const maxSpliceDepth = 64

// Where resourceVersion goes in metadata.
const (
	insertBefore = iota + 1 // before the member at insert (a key after "resourceVersion")
	insertAppend            // after the last member, insert is the closing brace
	insertOnly              // into an empty metadata, insert is the closing brace
)

// spliceScan validates stored bytes and notes the positions spliceStored
// cuts at.
type spliceScan struct {
	b []byte
	spliceLayout
}

// spliceLayout is where spliceStored cuts a stored value: its apiVersion,
// kind and metadata members (the others lie in the runs between them), and
// where resourceVersion goes in metadata.
type spliceLayout struct {
	api, kind, meta span // key start to value end
	insert          int
	mode            int
}

type span struct{ start, end int }

var resourceVersionKey = []byte("resourceVersion")

// top scans the whole value: one object, its apiVersion and kind equal to
// the given ones and its metadata an object without resourceVersion.
func (s *spliceScan) top(apiVersion, kind string) bool {
	b := s.b
	if len(b) < 2 || b[0] != '{' {
		return false
	}
	var prev []byte
	prevEsc := false
	for i := 1; ; {
		start := i
		key, esc, j, ok := s.str(i)
		if !ok || (prev != nil && compareKeys(prev, prevEsc, key, esc) >= 0) || j >= len(b) || b[j] != ':' {
			return false
		}
		prev, prevEsc = key, esc
		j++
		switch {
		case !esc && string(key) == "apiVersion":
			if j, ok = s.literalString(j, apiVersion); ok {
				s.api = span{start, j}
			}
		case !esc && string(key) == "kind":
			if j, ok = s.literalString(j, kind); ok {
				s.kind = span{start, j}
			}
		case !esc && string(key) == "metadata":
			if j, ok = s.metadata(j); ok {
				s.meta = span{start, j}
			}
		default:
			j, ok = s.value(j, 1)
		}
		if !ok || j >= len(b) {
			return false
		}
		if b[j] == '}' {
			if j+1 != len(b) {
				return false
			}
			break
		}
		if b[j] != ',' {
			return false
		}
		i = j + 1
	}
	// Keys are sorted, so a present apiVersion and kind precede metadata.
	return s.api.start > 0 && s.kind.start > 0 && s.mode != 0
}

// literalString scans a string value at i that must hold want exactly
// (apiVersion and kind never need escaping).
func (s *spliceScan) literalString(i int, want string) (int, bool) {
	v, esc, end, ok := s.str(i)
	return end, ok && !esc && string(v) == want
}

// metadata scans the metadata object at i and notes where resourceVersion goes.
func (s *spliceScan) metadata(i int) (int, bool) {
	b := s.b
	if i >= len(b) || b[i] != '{' {
		return i, false
	}
	i++
	if i < len(b) && b[i] == '}' {
		s.insert, s.mode = i, insertOnly
		return i + 1, true
	}
	var prev []byte
	prevEsc := false
	for {
		start := i
		key, esc, j, ok := s.str(i)
		if !ok || (prev != nil && compareKeys(prev, prevEsc, key, esc) >= 0) || j >= len(b) || b[j] != ':' {
			return j, false
		}
		prev, prevEsc = key, esc
		if s.mode == 0 {
			switch c := compareKeys(key, esc, resourceVersionKey, false); {
			case c == 0:
				return j, false // stored values have none; decode would overwrite it
			case c > 0:
				s.insert, s.mode = start, insertBefore
			}
		}
		if j, ok = s.value(j+1, 2); !ok || j >= len(b) {
			return j, false
		}
		switch b[j] {
		case ',':
			i = j + 1
		case '}':
			if s.mode == 0 {
				s.insert, s.mode = j, insertAppend
			}
			return j + 1, true
		default:
			return j, false
		}
	}
}

// value scans the canonical JSON value at i, nested depth deep, and
// returns the index after it.
func (s *spliceScan) value(i, depth int) (int, bool) {
	b := s.b
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; c {
	case '"':
		_, _, end, ok := s.str(i)
		return end, ok
	case '{':
		return s.object(i, depth)
	case '[':
		return s.array(i, depth)
	case 't':
		return scanLiteral(b, i, "true")
	case 'f':
		return scanLiteral(b, i, "false")
	case 'n':
		return scanLiteral(b, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return scanNumber(b, i)
		}
	}
	return i, false
}

func (s *spliceScan) object(i, depth int) (int, bool) {
	return s.eachMember(i, depth, func(_ []byte, _ bool, at int) (int, bool) { return s.value(at, depth+1) })
}

// eachMember scans the canonical object at i, nested depth deep: its keys in
// MarshalJSON's order (so none twice), each member's value scanned by
// member, given the key (still escaped when esc) and where the value
// starts, which returns the index after the value.
func (s *spliceScan) eachMember(i, depth int, member func(key []byte, esc bool, at int) (int, bool)) (int, bool) {
	b := s.b
	if depth > maxSpliceDepth || i >= len(b) || b[i] != '{' {
		return i, false
	}
	i++
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	var prev []byte
	prevEsc := false
	for {
		key, esc, j, ok := s.str(i)
		if !ok || (prev != nil && compareKeys(prev, prevEsc, key, esc) >= 0) || j >= len(b) || b[j] != ':' {
			return j, false
		}
		prev, prevEsc = key, esc
		if j, ok = member(key, esc, j+1); !ok || j >= len(b) {
			return j, false
		}
		switch b[j] {
		case ',':
			i = j + 1
		case '}':
			return j + 1, true
		default:
			return j, false
		}
	}
}

// eachMetadataMember scans a whole stored value in the canonical encoding,
// an object, handing each member of its metadata to member as eachMember
// does (depth 2). hasMeta says a metadata object was there; ok is false for
// anything not canonical, or when member refuses.
func (s *spliceScan) eachMetadataMember(member func(key []byte, esc bool, at int) (int, bool)) (hasMeta, ok bool) {
	end, ok := s.eachMember(0, 0, func(key []byte, esc bool, at int) (int, bool) {
		if esc || string(key) != "metadata" {
			return s.value(at, 1)
		}
		hasMeta = true
		return s.eachMember(at, 1, member)
	})
	return hasMeta, ok && end == len(s.b)
}

func (s *spliceScan) array(i, depth int) (int, bool) {
	b := s.b
	if depth > maxSpliceDepth {
		return i, false
	}
	i++
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		j, ok := s.value(i, depth+1)
		if !ok || j >= len(b) {
			return j, false
		}
		switch b[j] {
		case ',':
			i = j + 1
		case ']':
			return j + 1, true
		default:
			return j, false
		}
	}
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// Byte classes inside a string.
const (
	strPlain = iota
	strQuote
	strEscape
	strNonASCII
	strBad // a control character (invalid JSON), or <, > and & (which MarshalJSON escapes)
)

var strClass = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = strBad
	}
	t['"'], t['\\'] = strQuote, strEscape
	t['<'], t['>'], t['&'] = strBad, strBad, strBad
	for c := utf8.RuneSelf; c < 256; c++ {
		t[c] = strNonASCII
	}
	return t
}()

// str scans the string at i as MarshalJSON writes strings: it returns the
// bytes between the quotes, whether they hold an escape, and the index
// after the closing quote.
func (s *spliceScan) str(i int) (content []byte, esc bool, end int, ok bool) {
	b := s.b
	if i >= len(b) || b[i] != '"' {
		return nil, false, i, false
	}
	// Plain runs are passed over a word at a time: from the start and after
	// each escape (a file's lines end in one).
	for j := i + 1 + jsonvalue.EncodeRun(b[i+1:]); j < len(b); {
		switch strClass[b[j]] {
		case strPlain:
			j++
		case strQuote:
			return b[i+1 : j], esc, j + 1, true
		case strEscape:
			n := canonicalEscape(b[j:])
			if n == 0 {
				return nil, false, j, false
			}
			esc = true
			j += n
			j += jsonvalue.EncodeRun(b[j:])
		case strNonASCII:
			r, size := utf8.DecodeRune(b[j:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				return nil, false, j, false // MarshalJSON writes these as escapes
			}
			j += size
		default:
			return nil, false, j, false
		}
	}
	return nil, false, len(b), false
}

// canonicalEscape is the length of the escape b starts with when it is one
// MarshalJSON writes, else 0.
func canonicalEscape(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		v := 0
		for _, c := range b[2:6] {
			switch {
			case c >= '0' && c <= '9':
				v = v<<4 | int(c-'0')
			case c >= 'a' && c <= 'f':
				v = v<<4 | int(c-'a'+10)
			default:
				return 0 // MarshalJSON writes lower-case hex
			}
		}
		switch {
		case v < 0x20 && v != '\b' && v != '\f' && v != '\n' && v != '\r' && v != '\t',
			v == '<', v == '>', v == '&', v == 0x2028, v == 0x2029:
			return 6
		}
	}
	return 0
}

// scanNumber scans the number at i: an integer of at most 18 digits (exact in
// int64; not -0), or a number written as MarshalJSON writes its float64.
func scanNumber(b []byte, i int) (int, bool) {
	j, intEnd, ok := jsonvalue.NumberEnd(b, i)
	if !ok {
		return j, false
	}
	if j == intEnd {
		digits := i
		if b[i] == '-' {
			digits++
		}
		n := intEnd - digits
		return j, n <= 18 && !(n == 1 && b[digits] == '0' && digits > i)
	}
	f, err := strconv.ParseFloat(unsafe.String(&b[i], j-i), 64)
	if err != nil {
		return j, false
	}
	var buf [32]byte
	return j, bytes.Equal(appendJSONFloat(buf[:0], f), b[i:j])
}

// compareKeys orders two keys as MarshalJSON sorts them: by their decoded
// bytes, which only differ from the written ones when there is an escape.
func compareKeys(a []byte, aEsc bool, b []byte, bEsc bool) int {
	if aEsc {
		a = unescape(a)
	}
	if bEsc {
		b = unescape(b)
	}
	return bytes.Compare(a, b)
}

// unescape decodes a string's contents holding only canonical escapes.
func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			v, _ := strconv.ParseUint(string(s[i+1:i+5]), 16, 32)
			out = utf8.AppendRune(out, rune(v))
			i += 4
		default: // " and \
			out = append(out, c)
		}
	}
	return out
}
