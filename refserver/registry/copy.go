package registry

import (
	"unicode/utf8"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// copyJSON copies a JSON-shaped value exactly as a json.Marshal and
// json.Unmarshal round trip does (numbers become float64), without the
// encoding: deepCopy sat on every write. ok is false for anything
// jsonvalue.Copy does not know to copy identically, and the caller takes
// the round trip.
func copyJSON(v any) (out any, ok bool) { return jsonvalue.Copy(v, jsonvalue.Float64) }

// WriteCopy is what decoding obj's JSON would give (integral numbers
// int64, as the endpoint's decoder reads them), for an update of a k at
// version whose current object shares values with obj (a merge patch's or
// an apply's result). The object and its metadata are new maps: the write
// sets members of both. Below them a value that is already its own round
// trip is shared, not copied, when nothing an update of k does changes
// such values in place: k has no Prepare of either kind, and version is the
// storage version (no pruning after conversion). Other values, and every
// value of other kinds, are copied. ok is false where jsonvalue.Copy would
// decline.
func WriteCopy(k *Kind, version string, obj Object) (map[string]any, bool) {
	if obj == nil {
		return nil, false
	}
	share := k.Prepare == nil && k.PrepareVersioned == nil && k.storedAsServed(version)
	md, mdIsMap := obj["metadata"].(map[string]any)
	mdIsMap = mdIsMap && md != nil
	out, ok := copyMembers(obj, share, mdIsMap)
	if !ok {
		return nil, false
	}
	if mdIsMap {
		if out["metadata"], ok = copyMembers(md, share, false); !ok {
			return nil, false
		}
	}
	return out, true
}

// copyMembers is a new map of m's members, each shared (share, and
// already its own round trip) or copied; skipMetadata leaves metadata to
// the caller.
func copyMembers(m map[string]any, share, skipMetadata bool) (map[string]any, bool) {
	out := make(map[string]any, len(m))
	for key, v := range m {
		if !utf8.ValidString(key) {
			return nil, false
		}
		if skipMetadata && key == "metadata" {
			continue
		}
		if share && jsonvalue.Stable(v, jsonvalue.PreserveInts) {
			out[key] = v
			continue
		}
		c, ok := jsonvalue.Copy(v, jsonvalue.PreserveInts)
		if !ok {
			return nil, false
		}
		out[key] = c
	}
	return out, true
}
