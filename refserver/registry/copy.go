package registry

import "github.com/apiconform/apiconform/refserver/jsonvalue"

// copyJSON copies a JSON-shaped value exactly as a json.Marshal and
// json.Unmarshal round trip does (numbers become float64), without the
// encoding: deepCopy sat on every write. ok is false for anything
// jsonvalue.Copy does not know to copy identically, and the caller takes
// the round trip.
func copyJSON(v any) (out any, ok bool) { return jsonvalue.Copy(v, jsonvalue.Float64) }
