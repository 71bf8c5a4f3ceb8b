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
// a get's compact JSON, so they are only written. answer is the registry's
// WrittenJSON bytes when the write gave them (answerInto).
func (h *Handler) answerWrite(w http.ResponseWriter, r *http.Request, ri *requestInfo, code int, out registry.Object, dry bool, answer []byte) {
	if answer != nil { // answerInto found a compact JSON answer wanted
		writeEncoded(w, code, answer)
		return
	}
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

// answerInto is the WriteOptions.Answer of a write answered with
// answerWrite: where the registry leaves the answer it takes from the
// stored bytes, when the answer is a get's compact JSON (nil otherwise).
func answerInto(r *http.Request, dry bool) *[]byte {
	if dry || !encodedOK(r, formatJSON) {
		return nil
	}
	return new([]byte)
}
