package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestConversionWithoutCopyIsTheCopy runs the same writes through a Manager
// that skips ConvertToVersion's copy (its object is already in the version)
// and one made to copy (a no-op Default), and wants the same objects and
// errors, and neither live nor the applied configuration touched.
func TestConversionWithoutCopyIsTheCopy(t *testing.T) {
	type step struct {
		op      string // apply, force, update
		manager string
		body    string // the object's spec or data
	}
	steps := []step{
		{"apply", "kubectl", `{"size":1,"keyed":[{"name":"a","v":"1"}],"tags":["x"],"free":{"n":{"d":1}}}`},
		{"apply", "kubectl", `{"size":1,"keyed":[{"name":"a","v":"1"}],"tags":["x"],"free":{"n":{"d":1}}}`},
		{"update", "editor", `{"size":2,"keyed":[{"name":"a","v":"1"},{"name":"c","v":"9"}],"tags":["x"],"free":{"n":{"d":2}}}`},
		{"apply", "other", `{"size":3,"keyed":[{"name":"b","v":"3"}]}`},
		{"apply", "other", `{"keyed":[{"name":"b","v":"3"}],"free":{"m":{"e":1}}}`},
		{"force", "kubectl", `{"size":4,"keyed":[{"name":"a","v":"2"}],"tags":["y"]}`},
		{"update", "editor", `{"size":4,"keyed":[{"name":"a","v":"2"}],"tags":["y"]}`},
		{"apply", "kubectl", `{"tags":["z"]}`},
	}
	widget := schema.GroupVersionKind{Group: "fc.example.com", Version: "v1", Kind: "Widget"}
	thing := schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "Thing"}
	for _, c := range []struct {
		name  string
		make  func() (*Manager, error)
		field string
		wrap  func(string) string
	}{
		{"widget", func() (*Manager, error) { return ForSchema(widget, widgetSchema(t)) }, "spec", nil},
		{"deduced", func() (*Manager, error) { return ForSchema(thing, nil) }, "spec", nil},
		{"configmap", func() (*Manager, error) { return ForBuiltin("ConfigMap") }, "data", func(s string) string {
			var m map[string]any
			_ = json.Unmarshal([]byte(s), &m)
			out := map[string]string{}
			for k, v := range m {
				b, _ := json.Marshal(v)
				out[k] = string(b)
			}
			b, _ := json.Marshal(out)
			return string(b)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			plain, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			copying, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			copying.Default = func(map[string]any) {}
			var livePlain, liveCopying map[string]any
			for i, s := range steps {
				body := s.body
				if c.wrap != nil {
					body = c.wrap(body)
				}
				o := func() map[string]any {
					gv := plain.gvk.GroupVersion().String()
					return obj(t, fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":"n","namespace":"d","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}},%q:%s}`, gv, plain.gvk.Kind, c.field, body))
				}
				run := func(m *Manager, live map[string]any) (map[string]any, error) {
					in, liveBefore := o(), jsonCopy(live)
					var out map[string]any
					var err error
					switch s.op {
					case "update":
						out, err = m.Update(live, in, s.manager)
					default:
						out, err = m.Apply(live, in, s.manager, s.op == "force")
					}
					if !reflect.DeepEqual(in, o()) {
						t.Fatalf("step %d: the input was changed", i)
					}
					if live != nil && !reflect.DeepEqual(jsonCopy(live), liveBefore) {
						t.Fatalf("step %d: live was changed", i)
					}
					return out, err
				}
				a, errA := run(plain, livePlain)
				b, errB := run(copying, liveCopying)
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !reflect.DeepEqual(untimed(t, a), untimed(t, b)) {
					t.Fatalf("step %d (%s by %s):\n without copy %v %v\n with copy    %v %v", i, s.op, s.manager, a, errA, b, errB)
				}
				if errA == nil {
					livePlain, liveCopying = a, b
				}
			}
		})
	}
}

// untimed is o as JSON without managedFields' times (the two runs differ by
// a clock tick at most).
func untimed(t *testing.T, o map[string]any) string {
	t.Helper()
	if o == nil {
		return "null"
	}
	c := jsonCopy(o).(map[string]any)
	if md, ok := c["metadata"].(map[string]any); ok {
		if mf, ok := md["managedFields"].([]any); ok {
			for _, e := range mf {
				delete(e.(map[string]any), "time")
			}
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
