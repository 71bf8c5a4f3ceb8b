package apiserver

import (
	"net/http"

	"github.com/apiconform/apiconform/refserver/registry"
)

// answerWrite answers a create, update or patch with the object it stored.
// Its compact JSON is also the answer to a get of that object at its new
// revision, so the registry keeps it as one (registry.WrittenJSON): a read
// after a write — what controllers and tests do most — copies these bytes.
// A dry run stored nothing, and other forms (YAML, protobuf, pretty) are not
// a get's compact JSON, so they are only written.
func (h *Handler) answerWrite(w http.ResponseWriter, r *http.Request, ri *requestInfo, code int, out registry.Object, dry bool) {
	if dry || !encodedOK(r, formatJSON) {
		writeObject(w, r, code, out)
		return
	}
	b, err := h.reg.WrittenJSON(r.Context(), ri.kind, ri.version, out)
	if err != nil {
		writeObject(w, r, code, out) // its 500 answer
		return
	}
	writeEncoded(w, code, b)
}
