package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
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
				if fmt.Sprint(errA) != fmt.Sprint(errB) || !sameUntimed(t, a, b) {
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
// sameUntimed reports whether a and b are the same object but for their
// managedFields' times. The library orders entries by their times, and a
// step run on two managers may cross a second between them: where the
// entries' times differ, their order is compared as a set.
func sameUntimed(t *testing.T, a, b map[string]any) bool {
	t.Helper()
	if untimed(t, a, false) == untimed(t, b, false) {
		return true
	}
	return entryTimes(a) != entryTimes(b) && untimed(t, a, true) == untimed(t, b, true)
}

// untimed is o's JSON without its managedFields' times, the entries in
// their order or, with byManager, sorted by manager, operation and
// subresource.
func untimed(t *testing.T, o map[string]any, byManager bool) string {
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
			if byManager {
				sort.SliceStable(mf, func(i, j int) bool { return entryID(mf[i]) < entryID(mf[j]) })
			}
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// entryTimes is each managedFields entry's time by its manager, operation
// and subresource.
func entryTimes(o map[string]any) string {
	md, _ := o["metadata"].(map[string]any)
	mf, _ := md["managedFields"].([]any)
	times := make([]string, 0, len(mf))
	for _, e := range mf {
		tm, _ := e.(map[string]any)["time"].(string)
		times = append(times, entryID(e)+"="+tm)
	}
	sort.Strings(times)
	return strings.Join(times, ",")
}

func entryID(e any) string {
	m, _ := e.(map[string]any)
	return fmt.Sprint(m["manager"], "/", m["operation"], "/", m["subresource"])
}

// TestSameUntimed: entries in another order are the same only where their
// times differ (the library orders by time); other content never is.
func TestSameUntimed(t *testing.T) {
	entry := func(manager, tm, field string) any {
		return map[string]any{"manager": manager, "operation": "Apply", "time": tm, "fieldsV1": map[string]any{"f:" + field: map[string]any{}}}
	}
	object := func(entries ...any) map[string]any {
		return map[string]any{"metadata": map[string]any{"managedFields": entries}}
	}
	const t1, t2 = "2026-11-28T16:59:37Z", "2026-11-28T16:59:38Z"
	for _, tc := range []struct {
		name string
		a, b map[string]any
		want bool
	}{
		{"same", object(entry("a", t1, "x"), entry("b", t1, "y")), object(entry("a", t1, "x"), entry("b", t1, "y")), true},
		{"other times only", object(entry("a", t1, "x"), entry("b", t1, "y")), object(entry("a", t2, "x"), entry("b", t2, "y")), true},
		{"order, times differing", object(entry("a", t1, "x"), entry("b", t2, "y")), object(entry("b", t2, "y"), entry("a", t2, "x")), true},
		{"order, the same times", object(entry("a", t1, "x"), entry("b", t1, "y")), object(entry("b", t1, "y"), entry("a", t1, "x")), false},
		{"content", object(entry("a", t1, "x"), entry("b", t2, "y")), object(entry("b", t2, "z"), entry("a", t2, "x")), false},
	} {
		if got := sameUntimed(t, tc.a, tc.b); got != tc.want {
			t.Errorf("%s: sameUntimed = %v, want %v", tc.name, got, tc.want)
		}
	}
}
