package apiserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/refserver/registry"
	"github.com/apiconform/apiconform/refserver/storage"
)

// A write's answer is kept as the get answer of the object at its new
// revision (answerWrite): for every kind of write it must be byte for byte
// what a get that decodes the stored object gives — here a second registry
// on the same store, which kept nothing, answers the get.
func TestWriteAnswerIsTheGetAnswer(t *testing.T) {
	st := storage.NewMemory(storage.Options{})
	t.Cleanup(func() { _ = st.Close() })
	newHandler := func() *Handler {
		reg := registry.New(registry.Config{Store: st})
		reg.Register(registry.BuiltinKinds(reg)...)
		if err := reg.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(reg.Close)
		return New(Config{Registry: reg, Logf: t.Logf})
	}
	writer := newHandler()
	do := func(h *Handler, method, path, body, ct string) *httptest.ResponseRecorder {
		t.Helper()
		return benchDo(h, method, path, body, ct)
	}
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},
	"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
	"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
	"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":3},"ratio":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}}}},"status":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}}}]}}`
	for _, setup := range []struct{ path, body string }{
		{"/api/v1/namespaces", `{"metadata":{"name":"w"}}`},
		{"/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd},
	} {
		if rec := do(writer, "POST", setup.path, setup.body, "application/json"); rec.Code != 201 {
			t.Fatalf("setup %s: %d %s", setup.path, rec.Code, rec.Body)
		}
	}
	reader := newHandler() // loads the CRD from the store; keeps no encodings of its own

	const cm = "/api/v1/namespaces/w/configmaps"
	const gadgets = "/apis/example.com/v1/namespaces/w/gadgets"
	frobbers := func(version string) string { return "/apis/compat.apiconform.io/" + version + "/namespaces/w/frobbers" }
	for _, tc := range []struct {
		name, method, path, body, ct, get string
	}{
		{"create", "POST", cm, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1"}},"data":{"k":"v <&> é"}}`, "application/json", cm + "/a"},
		{"update", "PUT", cm + "/a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"w"},"binaryData":{"b":"AAE="}}`, "application/json", cm + "/a"},
		{"no-op update", "PUT", cm + "/a", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"w"},"binaryData":{"b":"AAE="}}`, "application/json", cm + "/a"},
		{"merge patch", "PATCH", cm + "/a", `{"metadata":{"annotations":{"n":"1"}},"data":{"k":null,"j":"2"}}`, MergePatch, cm + "/a"},
		{"json patch", "PATCH", cm + "/a", `[{"op":"add","path":"/data/q","value":"3"}]`, JSONPatch, cm + "/a"},
		{"strategic patch", "PATCH", cm + "/a", `{"data":{"s":"4"}}`, StrategicPatch, cm + "/a"},
		{"apply", "PATCH", cm + "/b?fieldManager=t", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"x":"y"}}`, ApplyPatch, cm + "/b"},
		{"apply again", "PATCH", cm + "/b?fieldManager=t", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"x":"z"}}`, ApplyPatch, cm + "/b"},
		{"secret from stringData", "POST", "/api/v1/namespaces/w/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"p":"q"}}`, "application/json", "/api/v1/namespaces/w/secrets/s"},
		{"frobber, storage version, defaulted", "POST", frobbers("v6"), `{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":2,"param":"p"}`, "application/json", frobbers("v6") + "/f"},
		{"frobber, other version", "PATCH", frobbers("v7beta1") + "/f", `{"params":["p","q"]}`, MergePatch, frobbers("v7beta1") + "/f"},
		{"custom resource definition", "PATCH", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com", `{"metadata":{"labels":{"l":"1"}}}`, MergePatch, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com"},
		{"namespace", "POST", "/api/v1/namespaces", `{"metadata":{"name":"other"}}`, "application/json", "/api/v1/namespaces/other"},
		{"custom resource with a default", "POST", gadgets, `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"ratio":0.5,"tags":["a"],"dropped":1}}`, "application/json", gadgets + "/g"},
		{"custom resource status", "PUT", gadgets + "/g/status", `{"apiVersion":"example.com/v1","kind":"Gadget","metadata":{"name":"g"},"spec":{"size":3,"ratio":0.5,"tags":["a"]},"status":{"ok":true}}`, "application/json", gadgets + "/g"},
		{"custom resource merge patch", "PATCH", gadgets + "/g", `{"spec":{"ratio":1.25,"size":7}}`, MergePatch, gadgets + "/g"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(writer, tc.method, tc.path, tc.body, tc.ct)
			if rec.Code != 200 && rec.Code != 201 {
				t.Fatalf("write: %d %s", rec.Code, rec.Body)
			}
			written := rec.Body.String()
			for _, h := range []struct {
				name string
				h    *Handler
			}{{"the writer (kept bytes)", writer}, {"a fresh registry (decoded)", reader}} {
				got := do(h.h, "GET", tc.get, "", "")
				if got.Code != 200 || got.Body.String() != written {
					t.Fatalf("get from %s: %d\n got %s\nwant %s", h.name, got.Code, got.Body, written)
				}
			}
		})
	}

	// Written in one version, read in another: the writer's get is a decoding get.
	if rec := do(writer, "PATCH", frobbers("v7beta1")+"/f", `{"height":5}`, MergePatch); rec.Code != 200 {
		t.Fatalf("patch in v7beta1: %d %s", rec.Code, rec.Body)
	}
	if got, want := do(writer, "GET", frobbers("v6")+"/f", "", "").Body.String(), do(reader, "GET", frobbers("v6")+"/f", "", "").Body.String(); got != want {
		t.Fatalf("get in v6 after a write in v7beta1:\n got %s\nwant %s", got, want)
	}

	// A dry run stores nothing, and keeps nothing: the get answers the stored object.
	before := do(writer, "GET", cm+"/a", "", "").Body.String()
	if rec := do(writer, "PATCH", cm+"/a?dryRun=All", `{"data":{"dry":"run"}}`, MergePatch); rec.Code != 200 {
		t.Fatalf("dry run: %d %s", rec.Code, rec.Body)
	}
	if after := do(writer, "GET", cm+"/a", "", "").Body.String(); after != before || strings.Contains(after, "dry") {
		t.Fatalf("after a dry run the get answers\n%s\nwant\n%s", after, before)
	}
}
