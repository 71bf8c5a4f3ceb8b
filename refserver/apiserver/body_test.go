package apiserver

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/munnerz/goautoneg"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
)

// TestReadAtMost: readAtMost reads what io.ReadAll of a LimitReader reads,
// whatever length the request declares.
func TestReadAtMost(t *testing.T) {
	body := strings.Repeat("0123456789", 300) // 3,000 bytes
	cases := []struct {
		name     string
		body     string
		limit    int
		declared int64
		oneByte  bool // the body arrives a byte per Read
	}{
		{"declared", body, 10_000, int64(len(body)), false},
		{"unknown", body, 10_000, -1, false},
		{"declared short", body, 10_000, 10, false},
		{"declared long", body, 10_000, 5_000, false},
		{"empty", "", 10_000, 0, false},
		{"over the limit", body, 1_001, int64(len(body)), false},
		{"over the limit, unknown", body, 1_001, -1, false},
		{"at the limit", body, len(body), int64(len(body)), false},
		{"a byte per read", body, 10_000, int64(len(body)), true},
		{"a byte per read, over the limit", body, 100, -1, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(c.body)
			if c.oneByte {
				r = iotest.OneByteReader(r)
			}
			got, err := readAtMost(r, c.limit, c.declared)
			want, werr := io.ReadAll(io.LimitReader(strings.NewReader(c.body), int64(c.limit)))
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Fatalf("read %d bytes (%v), want %d (%v)", len(got), err, len(want), werr)
			}
		})
	}
	// A declared length is not an allocation the client may ask for: a
	// body that declares 3 MB and sends 3 bytes gets a small buffer.
	if got, err := readAtMost(strings.NewReader("abc"), MaxBodyBytes+1, MaxBodyBytes); err != nil || string(got) != "abc" || cap(got) > preallocCap+1 {
		t.Fatalf("declared %d bytes, sent 3: %q (%v), buffer of %d bytes, want at most %d", MaxBodyBytes, got, err, cap(got), preallocCap+1)
	}
	boom := errors.New("boom")
	if _, err := readAtMost(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 100, 3); !errors.Is(err, boom) {
		t.Fatalf("a failing body read: %v, want boom", err)
	}
}

// TestReadObjectAgain: an update's object is given once as decoded, and
// decoded anew for a retry, unchanged by what the first attempt did to it.
func TestReadObjectAgain(t *testing.T) {
	reg, k := testKinds(t)
	h := New(Config{Registry: reg, Logf: t.Logf})
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"ns"},"data":{"k":"v"}}`
	req := httptest.NewRequest("PUT", "/api/v1/namespaces/ns/configmaps/a", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	ri := &requestInfo{version: "v1", resource: "configmaps", namespace: "ns", name: "a", kind: k}
	obj, again, err := h.readObjectAgain(httptest.NewRecorder(), req, ri, "update")
	if err != nil {
		t.Fatal(err)
	}
	first, err := again()
	if err != nil || !reflect.DeepEqual(first, obj) || reflect.ValueOf(first).Pointer() != reflect.ValueOf(obj).Pointer() {
		t.Fatalf("first: %v (%v), want the object read", first, err)
	}
	registry.Meta(first)["name"] = "changed"
	first["data"].(map[string]any)["k"] = "changed"
	second, err := again()
	if err != nil {
		t.Fatal(err)
	}
	if registry.Meta(second)["name"] != "a" || second["data"].(map[string]any)["k"] != "v" {
		t.Fatalf("second: %v, want the body decoded anew", second)
	}
}

// TestNoQueryStaysEmpty: the shared query of requests without one is only
// read.
func TestNoQueryStaysEmpty(t *testing.T) {
	reg, _ := testKinds(t)
	h := New(Config{Registry: reg, Logf: t.Logf})
	for _, rq := range []struct{ method, path, body, ct string }{
		{"POST", "/api/v1/namespaces", `{"metadata":{"name":"q"}}`, "application/json"},
		{"POST", "/api/v1/namespaces/q/configmaps", `{"metadata":{"name":"a"},"data":{"k":"v"}}`, "application/json"},
		{"PUT", "/api/v1/namespaces/q/configmaps/a", `{"metadata":{"name":"a"},"data":{"k":"w"}}`, "application/json"},
		{"PATCH", "/api/v1/namespaces/q/configmaps/a", `{"data":{"k":"x"}}`, MergePatch},
		{"GET", "/api/v1/namespaces/q/configmaps/a", "", ""},
		{"GET", "/api/v1/namespaces/q/configmaps", "", ""},
		{"DELETE", "/api/v1/namespaces/q/configmaps/a", "", ""},
	} {
		req := httptest.NewRequest(rq.method, rq.path, strings.NewReader(rq.body))
		if rq.ct != "" {
			req.Header.Set("Content-Type", rq.ct)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", rq.method, rq.path, rec.Code, rec.Body)
		}
	}
	if len(noQuery) != 0 {
		t.Fatalf("noQuery was written: %v", noQuery)
	}
}

// TestCommonMediaTypes: the shortcuts for the common Accept and
// Content-Type headers answer what parsing them answers.
func TestCommonMediaTypes(t *testing.T) {
	for a, parsed := range commonAccepts {
		if want := goautoneg.ParseAccept(a); !reflect.DeepEqual([]goautoneg.Accept(parsed), []goautoneg.Accept(want)) {
			t.Errorf("Accept %q: held %v, parsed %v", a, parsed, want)
		}
	}
	ct := "application/json"
	f, proto, err := inputFormat(ct)
	mt, _, perr := mime.ParseMediaType(ct)
	if err != nil || proto || f != fieldcheck.JSON || perr != nil || mt != ct {
		t.Errorf("inputFormat(%q) = %v %v %v", ct, f, proto, err)
	}
	if bf, ok := bodyFormat(ct); !ok || bf != formatJSON {
		t.Errorf("bodyFormat(%q) = %v %v", ct, bf, ok)
	}
	// The slow path gives the same for the same media type written otherwise.
	for _, other := range []string{"application/json; charset=utf-8", "Application/JSON"} {
		if f2, proto2, err2 := inputFormat(other); f2 != f || proto2 != proto || (err2 == nil) != (err == nil) {
			t.Errorf("inputFormat(%q) = %v %v %v, want as %q", other, f2, proto2, err2, ct)
		}
		if bf, ok := bodyFormat(other); !ok || bf != formatJSON {
			t.Errorf("bodyFormat(%q) = %v %v", other, bf, ok)
		}
	}
}
