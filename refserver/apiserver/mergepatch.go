package apiserver

import (
	"bytes"
	"encoding/json"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// A JSON merge patch (RFC 7386) is applied to the decoded current object
// here, instead of encoding the object, handing both documents to the
// evanphx/json-patch library kube-apiserver uses (which decodes them again
// and encodes the result) and decoding its answer: that round trip was a
// seventh of every merge patch. The result must be the library's, so the
// rules below are its rules, not only the RFC's:
//   - a null member of the patch removes the member;
//   - a member the object lacks (or holds as null) takes the patch's value
//     with every null member of its objects removed, at any depth, arrays
//     keeping their null elements;
//   - an object member of the patch is merged into an object member of the
//     object; any other patch value replaces the member as it is.
//
// Only a patch that is a JSON object takes this path, and only an answer
// without warnings or errors is kept from it (patch.go): anything else is
// applied by the library again, so that the wording and order of every
// warning and error stay kube-apiserver's.

// decodeMergePatch reads a merge patch that is a JSON object, keeping its
// numbers as written (json.Number), as the library keeps its raw bytes: a
// 1.0 sent for an integer field is refused by the typed decoding as on
// kube-apiserver. ok is false for anything else (the library decides).
func decodeMergePatch(body []byte) (patch map[string]any, ok bool) {
	if patch, ok := jsonvalue.Parse(body, jsonvalue.AsWritten); ok {
		return patch, true // one pass, no reflection; the same map (FuzzParse)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&patch); err != nil || patch == nil {
		return nil, false
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, false // more after the object: the library decides
	}
	return patch, true
}

// mergeObject returns cur with patch merged in. Neither is changed: the
// result shares the members the patch does not touch, and a write retried
// after a conflict merges the same patch into the newer object.
func mergeObject(cur, patch map[string]any) map[string]any {
	out := make(map[string]any, len(cur)+len(patch))
	for k, v := range cur {
		out[k] = v
	}
	for k, v := range patch {
		switch old, ok := out[k]; {
		case v == nil:
			delete(out, k)
		case !ok || old == nil:
			out[k] = withoutNulls(v)
		default:
			out[k] = mergeValue(old, v)
		}
	}
	return out
}

func mergeValue(cur, patch any) any {
	curObj, ok := cur.(map[string]any)
	if !ok {
		return withoutNulls(patch)
	}
	patchObj, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	return mergeObject(curObj, patchObj)
}

// withoutNulls copies v without the null members of its objects.
func withoutNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if e != nil {
				out[k] = withoutNulls(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = withoutNulls(e)
		}
		return out
	}
	return v
}
