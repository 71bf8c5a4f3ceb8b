package registry

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// MarshalJSON gives the bytes json.Marshal gives v, writing JSON-shaped
// values (maps with string keys, slices, strings, bools, nil, float64 and
// integers) directly: encoding/json reaches every map entry through
// reflection, which made encoding stored objects, answers and watch events
// a large share of every request. Other values, and structures nested
// deeper than encoding/json starts looking for cycles, are left to
// json.Marshal, so the output and the errors are always its own.
func MarshalJSON(v any) ([]byte, error) {
	b, err := AppendJSON(make([]byte, 0, 512), v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendJSON appends MarshalJSON's bytes for v to dst.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	return appendJSON(dst, v, 0)
}

// maxJSONDepth hands deeper values to json.Marshal (which detects cycles).
const maxJSONDepth = 500

// member is one map entry, sorted by name for encoding: carrying the value
// with its name spares a second map lookup per member once sorted.
type member struct {
	name  string
	value any
}

// memberPool recycles the slices map entries are sorted in.
var memberPool = sync.Pool{New: func() any { s := make([]member, 0, 16); return &s }}

func appendJSON(dst []byte, v any, depth int) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, t), nil
	case string:
		return jsonvalue.AppendString(dst, t), nil
	case int64:
		return strconv.AppendInt(dst, t, 10), nil
	case int:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(t), 10), nil
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			break // json.Marshal's error
		}
		return appendJSONFloat(dst, t), nil
	case map[string]any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		if depth > maxJSONDepth {
			break
		}
		return appendMapWithout(dst, t, "", depth)
	case []any:
		if t == nil {
			return append(dst, "null"...), nil
		}
		if depth > maxJSONDepth {
			break
		}
		dst = append(dst, '[')
		for i, e := range t {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	return append(dst, b...), err
}

// appendStored appends MarshalJSON's bytes for a copy of obj with
// apiVersion and kind set to the given ones and metadata (a map, empty when
// missing or not a map) without resourceVersion, and with mf, when set, as
// its managedFields (MarshalJSON's bytes for them): what a write stores.
// lay, when not nil, gets where spliceStored would cut the bytes appended
// (offsets in them), so that the write's answer needs no scan of them.
func appendStored(dst []byte, obj Object, apiVersion, kind string, mf []byte, lay *spliceLayout) ([]byte, error) {
	mp := sortedMembers(obj, "", "apiVersion", "kind", "metadata")
	md, _ := obj["metadata"].(map[string]any)
	base := len(dst)
	dst = append(dst, '{')
	var err error
	for i, e := range *mp {
		start := len(dst) - base
		if i > 0 {
			start++ // after the comma
		}
		dst = appendName(dst, i, e.name)
		switch e.name {
		case "apiVersion":
			dst = jsonvalue.AppendString(dst, apiVersion)
		case "kind":
			dst = jsonvalue.AppendString(dst, kind)
		case "metadata":
			dst, err = appendStoredMetadata(dst, md, mf, base, lay)
		default:
			dst, err = appendJSON(dst, e.value, 1)
		}
		if err != nil {
			break
		}
		if lay != nil {
			lay.note(e.name, span{start, len(dst) - base})
		}
	}
	putMembers(mp)
	return closeObject(dst, err)
}

// note records top-level member name at m.
func (l *spliceLayout) note(name string, m span) {
	switch name {
	case "apiVersion":
		l.api = m
	case "kind":
		l.kind = m
	case "metadata":
		l.meta = m
	}
}

// appendStoredMetadata appends appendStored's metadata md: without
// resourceVersion, with mf as its managedFields when set; lay (offsets from
// base) gets where resourceVersion goes, as spliceScan.metadata notes it.
func appendStoredMetadata(dst []byte, md map[string]any, mf []byte, base int, lay *spliceLayout) ([]byte, error) {
	var mp *[]member
	if mf == nil {
		mp = sortedMembers(md, "resourceVersion")
	} else {
		mp = sortedMembers(md, "resourceVersion", "managedFields")
	}
	dst = append(dst, '{')
	var err error
	for i, e := range *mp {
		if lay != nil && lay.mode == 0 && e.name > "resourceVersion" {
			lay.insert, lay.mode = len(dst)-base, insertBefore
			if i > 0 {
				lay.insert++ // after the comma
			}
		}
		dst = appendName(dst, i, e.name)
		if mf != nil && e.name == "managedFields" {
			dst = append(dst, mf...)
		} else if dst, err = appendJSON(dst, e.value, 2); err != nil {
			break
		}
	}
	if lay != nil && lay.mode == 0 {
		lay.insert, lay.mode = len(dst)-base, insertAppend // the closing brace
		if len(*mp) == 0 {
			lay.mode = insertOnly
		}
	}
	putMembers(mp)
	return closeObject(dst, err)
}

// appendMapWithout appends appendJSON's bytes for m (at depth; nil reads
// as empty) without its member skip; skip "" leaves out nothing.
func appendMapWithout(dst []byte, m map[string]any, skip string, depth int) ([]byte, error) {
	if len(m) == 0 { // most of a managedFields entry's maps: nothing to sort
		return append(dst, "{}"...), nil
	}
	mp := sortedMembers(m, skip)
	dst = append(dst, '{')
	var err error
	for i, e := range *mp {
		dst = appendName(dst, i, e.name)
		if dst, err = appendJSON(dst, e.value, depth+1); err != nil {
			break
		}
	}
	putMembers(mp)
	return closeObject(dst, err)
}

// sortedMembers returns, sorted by name in a slice from memberPool (give it
// back with putMembers), m's entries but skip ("" skips nothing) and always,
// and then always itself with no value, whether m has those members or not.
func sortedMembers(m map[string]any, skip string, always ...string) *[]member {
	mp := memberPool.Get().(*[]member)
	members := (*mp)[:0]
	for k, v := range m {
		if (skip == "" || k != skip) && (len(always) == 0 || !slices.Contains(always, k)) {
			members = append(members, member{k, v})
		}
	}
	for _, k := range always {
		members = append(members, member{name: k})
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
	*mp = members
	return mp
}

func putMembers(mp *[]member) {
	clear(*mp) // drop the references to the values
	*mp = (*mp)[:0]
	memberPool.Put(mp)
}

// appendName appends member i's name and colon, after a comma but for the first.
func appendName(dst []byte, i int, name string) []byte {
	if i > 0 {
		dst = append(dst, ',')
	}
	dst = jsonvalue.AppendString(dst, name)
	return append(dst, ':')
}

// closeObject ends an object the loops above wrote, unless they failed.
func closeObject(dst []byte, err error) ([]byte, error) {
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// appendJSONFloat formats f as encoding/json does (ES6 number to string).
func appendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// e-09 becomes e-9, as encoding/json writes it.
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
