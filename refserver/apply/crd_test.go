package apply

import (
	"encoding/json"
	"testing"
)

// TestCRDFastPaths: the Manager of CustomResourceDefinition, typed by
// apiextensions.k8s.io/v1's schemas (recursive JSONSchemaProps, JSON
// values, list and map types), answers creates, updates and applies of
// CRDs as the library does wherever its fast paths answer.
func TestCRDFastPaths(t *testing.T) {
	m, err := ForBuiltin("CustomResourceDefinition.apiextensions.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	crd := func(extra string) map[string]any {
		var o map[string]any
		doc := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"things.example.com","labels":{"a":"b"}},` +
			`"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"things","kind":"Thing","singular":"thing","listKind":"ThingList","shortNames":["th"]},` +
			`"conversion":{"strategy":"None"},"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},` +
			`"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"}],` +
			`"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{"size":{"type":"integer","default":3,"minimum":0},` +
			`"mode":{"type":"string","enum":["a","b"]},"tree":{"type":"object","x-kubernetes-preserve-unknown-fields":true}` + extra + `}}}}}}]}}`
		if err := json.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	created, err := m.libraryUpdate(nil, crd(""), "creator")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		live, updated map[string]any
		manager       string
	}{
		{"create", nil, crd(""), "creator"},
		{"the creator adds a property", created, withManaged(crd(`,"extra":{"type":"string"}`), created), "creator"},
		{"another writer adds a property", created, withManaged(crd(`,"extra":{"type":"boolean"}`), created), "other"},
		{"no change", created, withManaged(crd(""), created), "creator"},
	} {
		t.Run(tc.name, func(t *testing.T) { differ(t, m, tc.live, tc.updated, tc.manager) })
	}
	for _, tc := range []struct {
		name    string
		live    map[string]any
		applied map[string]any
		manager string
	}{
		{"apply creates", nil, crd(""), "applier"},
		{"first apply over an update", created, crd(`,"extra":{"type":"string"}`), "applier"},
		{"apply the same", created, crd(""), "creator"},
	} {
		t.Run(tc.name, func(t *testing.T) { differApply(t, m, tc.live, tc.applied, tc.manager, false) })
	}
}

// withManaged is obj with live's managedFields, as the registry hands an
// update to the field manager.
func withManaged(obj, live map[string]any) map[string]any {
	obj["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
	return obj
}

// TestCreateComparedWithZeroObject: a create's entry as kube-apiserver
// v1.36.3 records it (observed): the object is compared with its Go type's
// zero value, so a struct that value already holds (a CRD's spec and
// spec.names, a namespace's spec) carries no "." member, and one it lacks
// (spec.conversion, a pointer) does; a configmap's data, absent from its
// zero value, does too.
func TestCreateComparedWithZeroObject(t *testing.T) {
	for _, tc := range []struct {
		kind, obj, want string
	}{
		{"CustomResourceDefinition.apiextensions.k8s.io", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"a.b.c"},` +
			`"spec":{"group":"b.c","scope":"Namespaced","names":{"plural":"a","kind":"A","singular":"a","listKind":"AList"},"conversion":{"strategy":"None"},` +
			`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`,
			`{"f:spec":{"f:conversion":{".":{},"f:strategy":{}},"f:group":{},"f:names":{"f:kind":{},"f:listKind":{},"f:plural":{},"f:singular":{}},"f:scope":{},"f:versions":{}}}`},
		{"Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"x":"1"}},"spec":{"finalizers":["example.com/f"]}}`,
			`{"f:metadata":{"f:labels":{".":{},"f:x":{}}},"f:spec":{"f:finalizers":{}}}`},
		{"ConfigMap", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`,
			`{"f:data":{".":{},"f:a":{}}}`},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			m, err := ForBuiltin(tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			var obj map[string]any
			if err := json.Unmarshal([]byte(tc.obj), &obj); err != nil {
				t.Fatal(err)
			}
			out, err := m.Update(nil, obj, "creator")
			if err != nil {
				t.Fatal(err)
			}
			entries, _ := out["metadata"].(map[string]any)["managedFields"].([]any)
			if len(entries) != 1 {
				t.Fatalf("entries %v", entries)
			}
			got, _ := json.Marshal(entries[0].(map[string]any)["fieldsV1"])
			if string(got) != tc.want {
				t.Errorf("fieldsV1 %s\nwant     %s", got, tc.want)
			}
		})
	}
}
