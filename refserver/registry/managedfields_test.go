package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestSentManagedFields: a write other than an apply that sends
// metadata.managedFields gets what kube-apiserver v1.36.3 answered for the
// same writes (configmaps, observed with curl): the list sent stands in for
// the stored one, an empty list or one empty entry clears it, a list the
// field manager cannot read leaves the stored one, a list differing from
// the stored one in its times alone changes nothing. Each update runs with
// the stored managedFields decoded and kept as bytes.
func TestSentManagedFields(t *testing.T) {
	ctx := context.Background()
	entry := func(manager string, fields map[string]any) map[string]any {
		return map[string]any{"manager": manager, "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields}
	}
	ownsData := func(keys ...string) map[string]any {
		d := map[string]any{}
		for _, k := range keys {
			d[k] = map[string]any{}
		}
		return map[string]any{"f:data": d}
	}
	cm := func(data map[string]any, mf any) Object {
		md := map[string]any{"name": "cm"}
		if mf != nil {
			md["managedFields"] = mf
		}
		return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
	}
	changed := map[string]any{"a": "1", "x": "2"}
	unchanged := map[string]any{"a": "1"}
	// stored is the creator's entry as stored, with (true) or without its time.
	stored := func(withTime bool) func(Object) any {
		return func(cur Object) any {
			var out []any
			for _, e := range sliceOf(meta(cur)["managedFields"]) {
				c := deepCopy(e.(map[string]any))
				if !withTime {
					delete(c, "time")
				}
				out = append(out, c)
			}
			return out
		}
	}
	for _, tc := range []struct {
		name string
		data map[string]any
		// sent gives the list the write sends from the current object.
		sent func(cur Object) any
		dry  bool
		// want: each entry as "manager operation fieldsV1", sorted, with
		// "+t" where it carries a time.
		want    []string
		noWrite bool
	}{
		{"one empty entry clears them", changed, func(Object) any { return []any{map[string]any{}} }, false, nil, false},
		{"an empty list clears them", changed, func(Object) any { return []any{} }, false, nil, false},
		{"entries stand in for the stored ones", changed, func(Object) any { return []any{entry("zed", ownsData("f:a"))} }, false,
			[]string{`putter Update {"f:data":{"f:x":{}}} +t`, `zed Update {"f:data":{"f:a":{}}}`}, false},
		{"entries without a change of data", unchanged, func(Object) any { return []any{entry("zed", ownsData("f:a"))} }, false,
			[]string{`zed Update {"f:data":{"f:a":{}}}`}, false},
		{"an entry owning a field the object lacks", changed, func(Object) any { return []any{entry("ghost", ownsData("f:zz"))} }, false,
			[]string{`ghost Update {"f:data":{"f:zz":{}}}`, `putter Update {"f:data":{"f:x":{}}} +t`}, false},
		{"the stored list sent back", changed, stored(true), false,
			[]string{`creator Update {"f:data":{".":{},"f:a":{}}} +t`, `putter Update {"f:data":{"f:x":{}}} +t`}, false},
		{"the stored list without its times, no change", unchanged, stored(false), false,
			[]string{`creator Update {"f:data":{".":{},"f:a":{}}} +t`}, true},
		{"an entry the field manager cannot read", changed, func(Object) any {
			e := entry("bad", ownsData("f:a"))
			delete(e, "fieldsType")
			return []any{e}
		}, false, []string{`creator Update {"f:data":{".":{},"f:a":{}}} +t`, `putter Update {"f:data":{"f:x":{}}} +t`}, false},
		{"null", changed, func(Object) any { return nil }, false,
			[]string{`creator Update {"f:data":{".":{},"f:a":{}}} +t`, `putter Update {"f:data":{"f:x":{}}} +t`}, false},
		{"a dry run answers the reset and stores nothing", changed, func(Object) any { return []any{map[string]any{}} }, true, nil, true},
	} {
		for _, fromBytes := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/answer from bytes %v", tc.name, fromBytes), func(t *testing.T) {
				r, k := newTestRegistry(t)
				if _, err := r.Create(ctx, k, "v1", "default", cm(unchanged, nil), WriteOptions{FieldManager: "creator"}); err != nil {
					t.Fatal(err)
				}
				before, err := r.store.Get(ctx, keyOf(k, "default", "cm"), 0)
				if err != nil {
					t.Fatal(err)
				}
				var cur Object
				if err := json.Unmarshal(before.Value, &cur); err != nil {
					t.Fatal(err)
				}
				sent := tc.sent(cur)
				if sent == nil {
					sent = []any(nil) // JSON null
				}
				o := WriteOptions{FieldManager: "putter", DryRun: tc.dry}
				if fromBytes && !tc.dry {
					o.Answer = new([]byte)
				}
				obj := cm(tc.data, nil)
				meta(obj)["managedFields"] = jsonShaped(t, sent)
				got, err := r.UpdateFrom(ctx, k, "v1", "default", "cm", func() (Object, error) { return deepCopy(obj), nil }, o)
				if err != nil {
					t.Fatal(err)
				}
				answer := Answered(o.Answer)
				if answer == nil {
					if answer, err = json.Marshal(got); err != nil {
						t.Fatal(err)
					}
				}
				after, err := r.store.Get(ctx, keyOf(k, "default", "cm"), 0)
				if err != nil {
					t.Fatal(err)
				}
				if wrote := after.ModRevision != before.ModRevision; wrote == tc.noWrite {
					t.Errorf("wrote %v, want %v", wrote, !tc.noWrite)
				}
				if e := entriesOf(t, answer); strings.Join(e, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("answered\n%s\nwant\n%s", strings.Join(e, "\n"), strings.Join(tc.want, "\n"))
				}
				want := tc.want
				if tc.dry {
					want = []string{`creator Update {"f:data":{".":{},"f:a":{}}} +t`}
				}
				if e := entriesOf(t, after.Value); strings.Join(e, "\n") != strings.Join(want, "\n") {
					t.Errorf("stored\n%s\nwant\n%s", strings.Join(e, "\n"), strings.Join(want, "\n"))
				}
			})
		}
	}
}

// TestCreateSentManagedFields: a create's list goes to the field manager
// too (kube-apiserver v1.36.3, observed): the creator takes every field the
// object has, so an entry owning only those goes, and one owning a field
// the object lacks stays.
func TestCreateSentManagedFields(t *testing.T) {
	r, k := newTestRegistry(t)
	obj := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "managedFields": []any{
		map[string]any{"manager": "other", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:zz": map[string]any{}}}},
		map[string]any{"manager": "o2", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:a": map[string]any{}}}},
	}}, "data": map[string]any{"a": "1", "x": "2"}}
	o := WriteOptions{FieldManager: "creator", Answer: new([]byte)}
	if _, err := r.Create(context.Background(), k, "v1", "default", obj, o); err != nil {
		t.Fatal(err)
	}
	want := []string{`creator Update {"f:data":{".":{},"f:a":{},"f:x":{}}} +t`, `other Update {"f:data":{"f:zz":{}}}`}
	if e := entriesOf(t, Answered(o.Answer)); strings.Join(e, "\n") != strings.Join(want, "\n") {
		t.Errorf("answered\n%s\nwant\n%s", strings.Join(e, "\n"), strings.Join(want, "\n"))
	}
}

// jsonShaped is v as the decoder of a request body gives it.
func jsonShaped(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// entriesOf lists an encoded object's managedFields entries, sorted, each
// as "manager operation fieldsV1" and " +t" where it has a time.
func entriesOf(t *testing.T, obj []byte) []string {
	t.Helper()
	var o struct {
		Metadata struct {
			ManagedFields []struct {
				Manager, Operation, Time string
				FieldsV1                 json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(obj, &o); err != nil {
		t.Fatalf("%v: %s", err, obj)
	}
	var out []string
	for _, e := range o.Metadata.ManagedFields {
		s := e.Manager + " " + e.Operation + " " + string(e.FieldsV1)
		if e.Time != "" {
			s += " +t"
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// TestCreateLeavesServerFieldsUnowned: what a kind's strategy sets on a
// create, after the field manager (PrepareCreated), no entry owns, as on
// kube-apiserver v1.36.3 (observed): a namespace's creator owns its labels,
// the defaulted kubernetes.io/metadata.name among them, not the finalizer
// and phase; a CRD's creator owns its spec, not the status.
func TestCreateLeavesServerFieldsUnowned(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRegistry(t)
	crd := Object{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "owns.own.example.com"},
		"spec": map[string]any{"group": "own.example.com", "scope": "Namespaced", "names": map[string]any{"plural": "owns", "kind": "Own"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true, "schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}}}}}
	for _, tc := range []struct {
		resource, group string
		obj             Object
		set             []string // what the server set, which the answer must have
		owned, unowned  []string // paths into the creator's fieldsV1
	}{
		{"namespaces", "", Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "own", "labels": map[string]any{"x": "1"}}},
			[]string{"spec", "status"}, []string{"f:metadata.f:labels.f:x", "f:metadata.f:labels.f:kubernetes.io/metadata.name"}, []string{"f:spec", "f:status"}},
		{"customresourcedefinitions", "apiextensions.k8s.io", crd, []string{"status"}, []string{"f:spec.f:group"}, []string{"f:status"}},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			k := r.Lookup(tc.group, tc.resource)
			out, err := r.Create(ctx, k, "v1", "", tc.obj, WriteOptions{FieldManager: "creator"})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.set {
				if out[f] == nil {
					t.Errorf("the server set no %s: %v", f, out)
				}
			}
			entries := sliceOf(meta(out)["managedFields"])
			if len(entries) != 1 {
				t.Fatalf("managedFields %v, want the creator's entry", entries)
			}
			fields := mapOf(mapOf(entries[0])["fieldsV1"])
			has := func(path string) bool {
				cur := fields
				for _, p := range strings.Split(path, ".f:") {
					if !strings.HasPrefix(p, "f:") {
						p = "f:" + p
					}
					next, ok := cur[p].(map[string]any)
					if !ok {
						return false
					}
					cur = next
				}
				return true
			}
			for _, p := range tc.owned {
				if !has(p) {
					t.Errorf("the creator does not own %s: %v", p, fields)
				}
			}
			for _, p := range tc.unowned {
				if has(p) {
					t.Errorf("the creator owns %s, which the server set: %v", p, fields)
				}
			}
		})
	}
}

// TestNamespaceUpdateRecordsBeforeStrategy: a namespace PUT that changes
// spec.finalizers, which the strategy puts back (PrepareUpdated), still
// records its writer as owning them and stores a revision; the same writer
// doing it again changes only its entry's time, which is no change. As
// kube-apiserver v1.36.3 answered (observed with curl). Each step runs
// twice, the second time answered from the stored bytes: a repeat, which
// changes only the entry's time, so no change either.
func TestNamespaceUpdateRecordsBeforeStrategy(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRegistry(t)
	k := r.Lookup("", "namespaces")
	ns := func(finalizer string) Object {
		return Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "own", "labels": map[string]any{"y": "1"}},
			"spec": map[string]any{"finalizers": []any{finalizer}}}
	}
	created, err := r.Create(ctx, k, "v1", "", Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "own"}}, WriteOptions{FieldManager: "creator"})
	if err != nil {
		t.Fatal(err)
	}
	rv := str(meta(created)["resourceVersion"])
	for _, step := range []struct {
		manager, finalizer string
		want               []string
		write              bool
	}{
		{"putter", "example.com/z", []string{
			`creator Update {"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}} +t`,
			`putter Update {"f:metadata":{"f:labels":{"f:y":{}}},"f:spec":{"f:finalizers":{}}} +t`}, true},
		{"putter2", "example.com/q", []string{
			`creator Update {"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}} +t`,
			`putter Update {"f:metadata":{"f:labels":{"f:y":{}}}} +t`,
			`putter2 Update {"f:spec":{"f:finalizers":{}}} +t`}, true},
		{"putter2", "example.com/r", nil, false},
	} {
		for _, fromBytes := range []bool{false, true} {
			o := WriteOptions{FieldManager: step.manager}
			if fromBytes {
				o.Answer = new([]byte)
			}
			got, err := r.UpdateFrom(ctx, k, "v1", "", "own", func() (Object, error) { return ns(step.finalizer), nil }, o)
			if err != nil {
				t.Fatal(err)
			}
			if f := sliceOf(mapOf(got["spec"])["finalizers"]); len(f) != 1 || f[0] != "kubernetes" {
				t.Errorf("%s: finalizers %v, want [kubernetes]", step.manager, f)
			}
			now := str(meta(got)["resourceVersion"])
			if wrote := now != rv; wrote != (step.write && !fromBytes) {
				t.Errorf("%s (answer from bytes %v): wrote %v (%s → %s)", step.manager, fromBytes, wrote, rv, now)
			}
			rv = now
			if step.want == nil {
				continue
			}
			b, _ := json.Marshal(got)
			if e := entriesOf(t, b); strings.Join(e, "\n") != strings.Join(step.want, "\n") {
				t.Errorf("%s: entries\n%s\nwant\n%s", step.manager, strings.Join(e, "\n"), strings.Join(step.want, "\n"))
			}
		}
	}
}
