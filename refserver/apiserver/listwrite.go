package apiserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/apiconform/apiconform/refserver/registry"
)

// Lists and gets in compact JSON are written from bytes the registry encoded
// once per revision (registry.ListEncoded, GetEncoded) instead of decoding
// and re-encoding every stored object per request. The bytes are those
// writeObject gives the object the other path builds; other media types
// take that path.

// encodedOK says whether r's answer can be written from pre-encoded bytes:
// compact JSON, and no protobuf in Accept (writeObject may pick it for the
// list object itself).
func encodedOK(r *http.Request, f format) bool {
	if f != formatJSON || strings.Contains(r.Header.Get("Accept"), "protobuf") {
		return false
	}
	ct, pretty, ok := responseType(r, nil)
	return ok && ct == "application/json" && !pretty
}

// bareItems: kube-apiserver leaves kind and apiVersion off the items of
// built-in kinds; custom resources keep them.
func bareItems(k *registry.Kind) bool {
	return k.Typed != nil || k.TypedFor != nil || k.Group == "apiextensions.k8s.io"
}

// listMeta is a list's metadata.
func listMeta(ri *requestInfo, res *registry.ListResult) map[string]any {
	lm := map[string]any{"resourceVersion": strconv.FormatInt(res.ResourceVersion, 10)}
	if res.Continue != "" || !bareItems(ri.kind) {
		lm["continue"] = res.Continue // custom resource lists always carry it, as kube-apiserver's do
	}
	if res.RemainingItemCount != nil {
		lm["remainingItemCount"] = *res.RemainingItemCount
	}
	return lm
}

// writeEncodedList writes a list of pre-encoded items in the field order
// marshalOrdered gives the list object: kind, apiVersion, metadata, items.
func writeEncodedList(w http.ResponseWriter, code int, kind, apiVersion string, meta map[string]any, items [][]byte) {
	n := 64
	for _, it := range items {
		n += len(it) + 1
	}
	buf := listBuffers.Get().(*bytes.Buffer)
	defer putListBuffer(buf)
	buf.Grow(n + 256)
	field := func(name string, v any) {
		b, _ := json.Marshal(v)
		buf.WriteString(`"` + name + `":`)
		buf.Write(b)
		buf.WriteByte(',')
	}
	buf.WriteByte('{')
	field("kind", kind)
	field("apiVersion", apiVersion)
	field("metadata", meta)
	buf.WriteString(`"items":[`)
	for i, it := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(it)
	}
	buf.WriteString("]}\n")
	writeEncoded(w, code, buf.Bytes())
}

// listBuffers recycles the buffers lists are written from: a page of a large
// collection is a large buffer, and allocating (and clearing) one per page
// was most of what serving a page cost.
var listBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledList keeps the pool from holding on to the buffers of huge lists.
const maxPooledList = 4 << 20

func putListBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledList {
		return
	}
	b.Reset()
	listBuffers.Put(b)
}

// compactObject is the compact JSON writeObject gives a single object.
func compactObject(obj registry.Object) ([]byte, error) { return marshalOrdered(obj, false) }

// writeEncoded writes compact JSON with writeObject's headers.
func writeEncoded(w http.ResponseWriter, code int, body []byte) {
	setJSONHeaders(w.Header())
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// The values of writeEncoded's headers, shared by every answer: a header's
// values are only read once set (Set and Add replace or outgrow the slice),
// and Set's own slice per header was two allocations of every get and write.
var (
	jsonContentType = []string{"application/json"}
	noCacheControl  = []string{"no-cache, private"}
)

// setJSONHeaders sets the Content-Type and Cache-Control of a JSON answer.
func setJSONHeaders(h http.Header) {
	h["Content-Type"] = jsonContentType
	h["Cache-Control"] = noCacheControl
}
