package apiserver

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/storage"
)

func testKinds(t testing.TB) (*registry.Registry, *registry.Kind) {
	st := storage.NewMemory(storage.Options{})
	reg := registry.New(registry.Config{Store: st})
	reg.Register(registry.BuiltinKinds(reg)...)
	t.Cleanup(func() { reg.Close(); _ = st.Close() })
	return reg, reg.Lookup("", "configmaps")
}

// FuzzDecodeRequest: any body gives an object or a Status error, never a panic.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1"}}`,
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"a":1}}}`,
		`{"apiVersion":"v1","kind":"Secret"}`, `{bad`, `[]`, `null`, `{"metadata":"x"}`,
		`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"},"data":{"b":"2"},"x":1}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, yaml bool) {
		_, k := testKinds(t)
		ct := "application/json"
		if yaml {
			ct = "application/yaml"
		}
		b, f, err := bodyOf(ct, body)
		if err != nil {
			t.Fatalf("%s is a supported media type: %v", ct, err)
		}
		obj, _, err := decodeObject(&requestInfo{version: "v1", kind: k}, b, f, fieldcheck.Warn)
		if err != nil {
			if st := statusOf(err); st.Code != 400 {
				t.Fatalf("decode error with status %d: %v", st.Code, err)
			}
			return
		}
		if obj["kind"] != "ConfigMap" || obj["apiVersion"] != "v1" {
			t.Fatalf("decoded object without its kind: %v", obj)
		}
		if _, err := json.Marshal(obj); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzPatch: every patch type on a configmap gives a document or a Status error.
func FuzzPatch(f *testing.F) {
	seeds := []struct {
		typ   uint8
		patch string
	}{
		{0, `[{"op":"add","path":"/data/x","value":"1"}]`},
		{0, `[{"op":"remove","path":"/nope"}]`},
		{1, `{"data":{"x":null}}`},
		{1, `[]`},
		{2, `{"data":{"y":"2"},"$patch":"replace"}`},
		{2, `{"metadata":{"finalizers":["a"],"$setElementOrder/finalizers":["a"]}}`},
	}
	for _, s := range seeds {
		f.Add(s.typ, []byte(s.patch))
	}
	cur := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","finalizers":["x"]},"data":{"x":"1"}}`)
	types := []string{JSONPatch, MergePatch, StrategicPatch}
	f.Fuzz(func(t *testing.T, typ uint8, patch []byte) {
		out, err := applyPatchBytes(types[int(typ)%len(types)], cur, patch, corev1.ConfigMap{})
		if err != nil {
			if st := statusOf(err); st.Code < 400 || st.Code >= 500 {
				t.Fatalf("patch error with status %d: %v", st.Code, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out: %q", out)
		}
	})
}
