package apply

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// The messages and managedFields below were observed on kube-apiserver
// v1.36.3 with the same sequence of requests on one ConfigMap.

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

type entry struct {
	Manager, Operation, APIVersion, FieldsType string
	Fields                                     string // fieldsV1 as compact JSON
	Timed                                      bool   // time is set (and recent)
}

func entries(t *testing.T, o map[string]any) []entry {
	t.Helper()
	md, _ := o["metadata"].(map[string]any)
	b, _ := json.Marshal(md["managedFields"])
	var mf []metav1.ManagedFieldsEntry
	if err := json.Unmarshal(b, &mf); err != nil {
		t.Fatal(err)
	}
	var out []entry
	for _, e := range mf {
		timed := e.Time != nil && time.Since(e.Time.Time) < time.Hour
		out = append(out, entry{e.Manager, string(e.Operation), e.APIVersion, e.FieldsType, string(e.FieldsV1.Raw), timed})
	}
	return out
}

func expectConflict(t *testing.T, err error, message string, fields []string, cause string) {
	t.Helper()
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		t.Fatalf("error %T %v, want a 409", err, err)
	}
	st := se.Status()
	if st.Code != 409 || st.Reason != metav1.StatusReasonConflict || st.Message != message {
		t.Fatalf("status %d %s %q\nwant 409 Conflict %q", st.Code, st.Reason, st.Message, message)
	}
	var got []string
	for _, c := range st.Details.Causes {
		if c.Type != "FieldManagerConflict" || c.Message != cause {
			t.Errorf("cause %+v, want FieldManagerConflict %q", c, cause)
		}
		got = append(got, c.Field)
	}
	if !reflect.DeepEqual(got, fields) {
		t.Errorf("conflicting fields %q, want %q", got, fields)
	}
}

func TestApplyConfigMapSequence(t *testing.T) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	cm := func(data string) map[string]any {
		return obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap1","namespace":"fcobs"},"data":`+data+`}`)
	}

	// Create by apply.
	live, err := m.Apply(nil, cm(`{"key":"v1"}`), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{{"kubectl", "Apply", "v1", "FieldsV1", `{"f:data":{"f:key":{}}}`, true}}
	if got := entries(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields after create\n got %+v\nwant %+v", got, want)
	}
	if live["data"].(map[string]any)["key"] != "v1" {
		t.Fatalf("data %v", live["data"])
	}

	// Re-apply of the same configuration changes nothing.
	again, err := m.Apply(live, cm(`{"key":"v1"}`), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, live) {
		t.Fatalf("re-apply changed the object\n got %v\nwant %v", again, live)
	}

	// Another manager setting the same field to another value conflicts.
	_, err = m.Apply(live, cm(`{"key":"v2"}`), "other", false)
	expectConflict(t, err, `Apply failed with 1 conflict: conflict with "kubectl": .data.key`, []string{".data.key"}, `conflict with "kubectl"`)

	// ... unless it forces: it takes the field, and kubectl's empty entry goes.
	live, err = m.Apply(live, cm(`{"key":"v2","k2":"x"}`), "other", true)
	if err != nil {
		t.Fatal(err)
	}
	want = []entry{{"other", "Apply", "v1", "FieldsV1", `{"f:data":{"f:k2":{},"f:key":{}}}`, true}}
	if got := entries(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields after force\n got %+v\nwant %+v", got, want)
	}

	// An update (PUT by "editor") takes the fields it changes.
	upd := cm(`{"key":"v3","k2":"y","k3":"z"}`)
	upd["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
	live, err = m.Update(live, upd, "editor")
	if err != nil {
		t.Fatal(err)
	}
	want = []entry{{"editor", "Update", "v1", "FieldsV1", `{"f:data":{"f:k2":{},"f:k3":{},"f:key":{}}}`, true}}
	if got := entries(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields after update\n got %+v\nwant %+v", got, want)
	}

	// Applying fields an Update manager owns names it with its apiVersion.
	_, err = m.Apply(live, cm(`{"key":"v2","k2":"x","k3":"q"}`), "other", false)
	expectConflict(t, err, "Apply failed with 3 conflicts: conflicts with \"editor\" using v1:\n- .data.k2\n- .data.k3\n- .data.key",
		[]string{".data.k2", ".data.k3", ".data.key"}, `conflict with "editor" using v1`)
	_, err = m.Apply(live, cm(`{"key":"v9"}`), "kubectl", false)
	expectConflict(t, err, `Apply failed with 1 conflict: conflict with "editor" using v1: .data.key`, []string{".data.key"}, `conflict with "editor" using v1`)

	// Applying the value the owner already set is no conflict: shared ownership.
	shared, err := m.Apply(live, cm(`{"key":"v3"}`), "kubectl", false)
	if err != nil {
		t.Fatal(err)
	}
	want = []entry{
		// kube-apiserver leaves time unset when an apply changes nothing in the object.
		{"kubectl", "Apply", "v1", "FieldsV1", `{"f:data":{"f:key":{}}}`, false},
		{"editor", "Update", "v1", "FieldsV1", `{"f:data":{"f:k2":{},"f:k3":{},"f:key":{}}}`, true},
	}
	if got := entries(t, shared); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields after shared apply\n got %+v\nwant %+v", got, want)
	}
}

func TestApplyRejectsUndeclaredFields(t *testing.T) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, message string }{
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap2"},"data":{"key":"v1"},"bogus":1}`,
			"failed to create typed patch object (/ap2; /v1, Kind=ConfigMap): .bogus: field not declared in schema"},
		{`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ap2"},"data":{"key":1}}`,
			"failed to create typed patch object (/ap2; /v1, Kind=ConfigMap): .data.key: expected string, got &value.valueUnstructured{Value:1}"},
	} {
		_, err := m.Apply(nil, obj(t, tc.body), "m1", false)
		se, ok := err.(*apierrors.StatusError)
		if !ok || se.Status().Code != 500 || se.Status().Message != tc.message || se.Status().Reason != "" {
			t.Errorf("error %v, want 500 %q", err, tc.message)
		}
	}
}

func widgetSchema(t testing.TB) map[string]any {
	b, err := os.ReadFile("testdata/widget-schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestApplyCustomResource(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "fc.example.com", Version: "v1", Kind: "Widget"}
	m, err := ForSchema(gvk, widgetSchema(t))
	if err != nil {
		t.Fatal(err)
	}
	w := func(spec string) map[string]any {
		return obj(t, `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w9"},"spec":`+spec+`}`)
	}
	live, err := m.Apply(nil, w(`{"size":1,"keyed":[{"name":"a","v":"1"}],"tags":["x"]}`), "m1", false)
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{{"m1", "Apply", "fc.example.com/v1", "FieldsV1", `{"f:spec":{"f:keyed":{"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}}},"f:size":{},"f:tags":{}}}`, true}}
	if got := entries(t, live); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields\n got %+v\nwant %+v", got, want)
	}
	_, err = m.Apply(live, w(`{"size":2,"keyed":[{"name":"a","v":"2"},{"name":"b","v":"3"}],"tags":["y"]}`), "m2", false)
	expectConflict(t, err, "Apply failed with 3 conflicts: conflicts with \"m1\":\n- .spec.size\n- .spec.tags\n- .spec.keyed[name=\"a\"].v",
		[]string{".spec.size", ".spec.tags", `.spec.keyed[name="a"].v`}, `conflict with "m1"`)

	// A map-list entry of its own is no conflict: m2 adds name=b next to m1's a.
	merged, err := m.Apply(live, w(`{"keyed":[{"name":"b","v":"3"}]}`), "m2", false)
	if err != nil {
		t.Fatal(err)
	}
	keyed := merged["spec"].(map[string]any)["keyed"].([]any)
	if len(keyed) != 2 {
		t.Fatalf("keyed %v, want a and b", keyed)
	}
}

func TestApplyDeducedSchemaIsAtomic(t *testing.T) {
	m, err := ForSchema(schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "Thing"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	th := func(spec string) map[string]any {
		return obj(t, `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":`+spec+`}`)
	}
	live, err := m.Apply(nil, th(`{"list":[1,2],"a":"x"}`), "m1", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Apply(live, th(`{"list":[3]}`), "m2", false)
	expectConflict(t, err, `Apply failed with 1 conflict: conflict with "m1": .spec.list`, []string{".spec.list"}, `conflict with "m1"`)
}

func TestValidatePatchOptions(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name    string
		opts    metav1.PatchOptions
		pt      types.PatchType
		message string
		field   string
	}{
		{"apply without fieldManager", metav1.PatchOptions{}, types.ApplyPatchType,
			`PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch`, "fieldManager"},
		{"force on a merge patch", metav1.PatchOptions{FieldManager: "kubectl", Force: &yes}, types.MergePatchType,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`, "force"},
		{"apply without fieldManager, bad dryRun", metav1.PatchOptions{DryRun: []string{"Foo"}}, types.ApplyPatchType,
			`PatchOptions.meta.k8s.io "" is invalid: [fieldManager: Required value: is required for apply patch, dryRun: Unsupported value: ["Foo"]: supported values: "All"]`, "fieldManager"},
		{"apply with fieldManager", metav1.PatchOptions{FieldManager: "kubectl", Force: &yes}, types.ApplyPatchType, "", ""},
		{"merge without fieldManager", metav1.PatchOptions{}, types.MergePatchType, "", ""},
	} {
		err := ValidatePatchOptions(tc.opts, tc.pt)
		if tc.message == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		se, ok := err.(*apierrors.StatusError)
		if !ok {
			t.Fatalf("%s: %v", tc.name, err)
		}
		st := se.Status()
		if st.Code != 422 || st.Reason != metav1.StatusReasonInvalid || st.Message != tc.message ||
			st.Details.Kind != "PatchOptions" || st.Details.Group != "meta.k8s.io" || st.Details.Causes[0].Field != tc.field {
			t.Errorf("%s: %d %s %q %+v", tc.name, st.Code, st.Reason, st.Message, st.Details)
		}
	}
}

// A POST records an Update entry; observed for
// {"data":{"a":"b"},"data":{"c":"d"}} decoded to data {a, c} by "curl".
func TestUpdateOnCreate(t *testing.T) {
	m, err := ForBuiltin("ConfigMap")
	if err != nil {
		t.Fatal(err)
	}
	created, err := m.Update(nil, obj(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c1","namespace":"fcobs"},"data":{"a":"b","c":"d"}}`), "curl")
	if err != nil {
		t.Fatal(err)
	}
	want := []entry{{"curl", "Update", "v1", "FieldsV1", `{"f:data":{".":{},"f:a":{},"f:c":{}}}`, true}}
	if got := entries(t, created); !reflect.DeepEqual(got, want) {
		t.Fatalf("managedFields\n got %+v\nwant %+v", got, want)
	}
	ns, err := ForBuiltin("Namespace")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ns.Update(nil, obj(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"},"spec":{"finalizers":["kubernetes"]}}`), "curl"); err != nil {
		t.Fatal(err)
	}
	if _, err := ForBuiltin("Pod"); err == nil {
		t.Fatal("ForBuiltin(Pod) succeeded")
	}
}

func TestManagerIsSharedSafely(t *testing.T) {
	m, err := ForBuiltin("Secret")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func(i int) {
			s := map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "s"},
				"stringData": map[string]any{"k": "v"}, "type": "Opaque"}
			live, err := m.Apply(nil, s, "m", false)
			if err == nil {
				_, err = m.Update(live, s, "other")
			}
			done <- err
		}(i)
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
