package apiserver

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tidwall/gjson"
)

// flushCounter is a recorder that counts flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestWatchFlushesPerBurst: events that are ready together go out with one
// flush, not one each (kube-apiserver flushes when its queue is empty too),
// and every event still reaches the client.
func TestWatchFlushesPerBurst(t *testing.T) {
	reg, _ := testKinds(t)
	h := New(Config{Registry: reg, Logf: t.Logf})
	if rec := benchDo(h, "POST", "/api/v1/namespaces", `{"metadata":{"name":"w"}}`, "application/json"); rec.Code != 201 {
		t.Fatalf("namespace: %d %s", rec.Code, rec.Body)
	}
	const path = "/api/v1/namespaces/w/configmaps"
	list := serve(h, "", path)
	rv := gjson.GetBytes(list.Body.Bytes(), "metadata.resourceVersion").String()
	if list.Code != 200 || rv == "" {
		t.Fatalf("list: %d %s", list.Code, list.Body)
	}
	const n = 200
	for i := range n {
		if rec := benchDo(h, "POST", path, fmt.Sprintf(`{"metadata":{"name":"c%03d"}}`, i), "application/json"); rec.Code != 201 {
			t.Fatalf("create %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	// The watch replays the n creates, waits for more until its timeout, and
	// ends.
	w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path+"?watch=1&timeoutSeconds=1&resourceVersion="+rv, nil))
	if w.Code != 200 {
		t.Fatalf("watch: %d %s", w.Code, w.Body)
	}
	lines := bytes.Split(bytes.TrimSpace(w.Body.Bytes()), []byte("\n"))
	if len(lines) != n {
		t.Fatalf("%d events, want %d", len(lines), n)
	}
	for i, l := range lines {
		if typ, name := gjson.GetBytes(l, "type").String(), gjson.GetBytes(l, "object.metadata.name").String(); typ != "ADDED" || name != fmt.Sprintf("c%03d", i) {
			t.Fatalf("event %d: %s %s", i, typ, name)
		}
	}
	// The headers' flush, then one once the replay is written; a flush per
	// event would be n more.
	if w.flushes > 5 {
		t.Errorf("%d flushes for a burst of %d events", w.flushes, n)
	}
}
