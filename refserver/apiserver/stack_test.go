package apiserver

import (
	"context"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"testing"
	"unsafe"

	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/storage"
)

// TestWritesFitTheGrownStack: a write handled on a goroutine whose stack
// growStack has grown never grows it again, so writeStackPad is large
// enough for each of these: the writes of the built-in kinds, the bench
// load's among them. A stack that grows is copied to a new place, and a
// local variable's address moves with it: that is what is checked. Deeper
// writes (a conversion between versions, a CRD, a custom resource checked
// against its schema) still work; they pay one more growth.
func TestWritesFitTheGrownStack(t *testing.T) {
	// A collection may shrink a parked goroutine's stack, which moves it
	// too: none runs during the test.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	st := storage.NewMemory(storage.Options{})
	t.Cleanup(func() { _ = st.Close() })
	reg := registry.New(registry.Config{Store: st})
	reg.Register(registry.BuiltinKinds(reg)...)
	if err := reg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	h := New(Config{Registry: reg, Logf: t.Logf})

	// moved runs one request as net/http does, on a goroutine of its own,
	// after growing its stack as ServeHTTP would.
	moved := func(method, path, body, ct string) (*httptest.ResponseRecorder, bool) {
		type result struct {
			rec   *httptest.ResponseRecorder
			moved bool
		}
		done := make(chan result)
		go func() {
			growStack(1)
			var here byte
			before := uintptr(unsafe.Pointer(&here))
			rec := benchDo(h, method, path, body, ct)
			done <- result{rec, uintptr(unsafe.Pointer(&here)) != before}
		}()
		r := <-done
		return r.rec, r.moved
	}

	const cm = "/api/v1/namespaces/w/configmaps"
	for _, tc := range []struct {
		name, method, path, body, ct string
	}{
		{"namespace", "POST", "/api/v1/namespaces", `{"metadata":{"name":"w"}}`, "application/json"},
		{"create", "POST", cm, benchConfigMap(1, benchPayload), "application/json"},
		{"update", "PUT", cm + "/cm-00001", benchConfigMap(1, "updated"), "application/json"},
		{"merge patch", "PATCH", cm + "/cm-00001", `{"data":{"patched":"1"}}`, MergePatch},
		{"json patch", "PATCH", cm + "/cm-00001", `[{"op":"add","path":"/data/q","value":"3"}]`, JSONPatch},
		{"strategic patch", "PATCH", cm + "/cm-00001", `{"data":{"s":"4"}}`, StrategicPatch},
		{"apply, first", "PATCH", cm + "/cm-00001?fieldManager=apiconform-load", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001"},"data":{"applied":"1"}}`, ApplyPatch},
		{"apply, again", "PATCH", cm + "/cm-00001?fieldManager=apiconform-load", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00001"},"data":{"applied":"2"}}`, ApplyPatch},
		{"apply, create", "PATCH", cm + "/cm-00002?fieldManager=t", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00002"},"data":{"x":"y"}}`, ApplyPatch},
		{"delete", "DELETE", cm + "/cm-00001", "", ""},
		{"secret", "POST", "/api/v1/namespaces/w/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"p":"q"}}`, "application/json"},
	} {
		rec, grew := moved(tc.method, tc.path, tc.body, tc.ct)
		if rec.Code >= 300 {
			t.Fatalf("%s: %d %s", tc.name, rec.Code, rec.Body)
		}
		if grew {
			t.Errorf("%s: the stack grew again beyond twice writeStackPad (%d KiB)", tc.name, 2*writeStackPad>>10)
		}
	}
}
