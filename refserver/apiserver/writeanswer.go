package apiserver

import (
	"net/http"

	"github.com/apiconform/apiconform/refserver/registry"
)

// getForm names the compact JSON of a get answer among the registry's kept
// encodings (registry.GetEncoded).
const getForm = "object-json"

// answerWrite answers a create, update or patch with the object it stored.
// The compact JSON sent is also the answer to a get of that object at its
// new revision, so it is kept as one (registry.KeepEncoded): a read after a
// write — what controllers and tests do most — copies these bytes. A dry
// run stored nothing, and other forms (YAML, protobuf, pretty) are not a
// get's compact JSON, so they are only written.
func (h *Handler) answerWrite(w http.ResponseWriter, r *http.Request, ri *requestInfo, code int, out registry.Object, dry bool) {
	if dry || !encodedOK(r, formatJSON) {
		writeObject(w, r, code, out)
		return
	}
	b, err := compactObject(out)
	if err != nil {
		writeObject(w, r, code, out) // its 500 answer
		return
	}
	h.reg.KeepEncoded(ri.kind, ri.version, out, getForm, b)
	writeEncoded(w, code, b)
}
