package apply

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// typedCreateFields is what the typed path gives a create's own entry: the
// object's field set with every prefix, less the server's metadata, as
// fieldsV1. An error is an object the typed conversion refuses.
func typedCreateFields(m *Manager, obj map[string]any) (map[string]any, error) {
	tv, err := m.tc.ObjectToTyped(&unstructured.Unstructured{Object: obj}, typed.AllowDuplicates)
	if err != nil {
		return nil, err
	}
	added, err := addedFromEmpty(tv)
	if err != nil {
		return nil, err
	}
	fields, ok := setToFields(added.Difference(stripSet))
	if !ok {
		return nil, fmt.Errorf("setToFields declined")
	}
	return fields, nil
}

// sameCreateFields: where createFields answers, the typed path accepts the
// object and gives the same fieldsV1; it reports whether it answered.
func sameCreateFields(t *testing.T, name string, m *Manager, obj map[string]any) bool {
	t.Helper()
	got, ok := m.createFields(obj)
	if !ok {
		return false
	}
	want, err := typedCreateFields(m, obj)
	if err != nil {
		t.Fatalf("%s: createFields answered for an object the typed path refuses (%v): %s", name, err, dump(obj))
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: createFields of %s\ngives %s\nwant  %s", name, dump(obj), dump(got), dump(want))
	}
	return true
}

func TestCreateFields(t *testing.T) {
	ms := managerSet{}
	cases := []struct {
		name, kind, obj string
		answers         bool
	}{
		{"name only", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}}`, true},
		{"empty maps are members", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{}},"data":{}}`, true},
		{"server metadata left out", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"3","generation":2,"creationTimestamp":"2026-01-02T03:04:05Z","generateName":"g","labels":{"x":"1"},"annotations":{"y":"2"}},"data":{"k":"v"},"binaryData":{"b":"AA=="},"immutable":true}`, true},
		{"secret", "Secret", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","stringData":{"p":"q"},"data":{"d":"AA=="}}`, true},
		{"namespace", "Namespace", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"s","labels":{"a":"b"}}}`, true},
		{"custom resource", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":3,"name":"n","labels":{"l":"1"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":2.5,"e":{}}}},"status":{"ready":true}}`, true},
		{"float where the schema says integer (numeric)", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":2.5}}`, true},
		{"no schema", "deduced", `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t"},"spec":{"a":{"b":{"c":1}},"s":"x","t":true}}`, true},

		{"a list", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","finalizers":["f"]}}`, false},
		{"a null", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":null}`, false},
		{"an undeclared field", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"extra":"x"}`, false},
		{"a number for a string", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":1}}`, false},
		{"a string for a map", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":"x"}`, false},
		{"a map for a string", "", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":{}}}`, false},
		{"a string for a boolean", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"ready":"yes"}}`, false},
		{"an atomic map", "widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"pinned":{"a":"b"}}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			obj := decode(t, c.obj, true)
			if got := sameCreateFields(t, c.name, ms.of(t, c.kind), obj); got != c.answers {
				t.Fatalf("createFields answered %v, want %v", got, c.answers)
			}
		})
	}
}

// TestCreateFieldsGenerated: createFields equals the typed path on 2,000
// generated objects of the fuzz kinds, and answers for most of them (those
// without lists); it declines those that are not their own JSON copy
// (an integral float64), and answers for their copies.
func TestCreateFieldsGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	answered, unstable := 0, 0
	eachDraw(kinds, 23, 2000, 64, func(i int, in *fuzzBytes, k *fuzzKind) {
		obj := k.object(in)
		if !jsonvalue.Stable(obj, jsonvalue.PreserveInts) {
			unstable++
			if _, ok := k.m.createFields(obj); ok {
				t.Fatalf("object %d: createFields answered for %s, which is not its own JSON copy", i, dump(obj))
			}
			obj = jsonCopy(obj).(map[string]any)
		}
		if sameCreateFields(t, fmt.Sprintf("object %d", i), k.m, obj) {
			answered++
		}
	})
	if answered < 1000 || unstable == 0 {
		t.Fatalf("createFields answered for %d of 2,000 generated objects (%d not their own JSON copy); want over 1,000 (and some)", answered, unstable)
	}
}

// TestSoleOwnerUpdateGenerated: 2,000 updates of generated objects written
// before by a Manager whose clock is in 2020 (so a kept entry keeps that
// time, and a stamped one is "now"), by the same writer or another, to a new
// object, the same one, or the same one less a field: the fast path equals
// the library wherever it answers, and the sole-owner walk answers for over
// 600 (the others: another writer, a list in the object, an object the
// schema refuses).
func TestSoleOwnerUpdateGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	past := map[*Manager]*Manager{}
	for i := range kinds {
		p := managerFor(t, map[string]string{"v1": "ConfigMap", "fc.example.com/v1": "widget", "x.example.com/v1": "deduced"}[kinds[i].apiVersion])
		p.clock = func() time.Time { return time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC) }
		past[kinds[i].m] = p
	}
	var sole, kept int
	var heard string
	hearWalks(t, kinds, &heard)
	eachDraw(kinds, 29, 2000, 96, func(i int, in *fuzzBytes, k *fuzzKind) {
		live, err := past[k.m].Update(nil, k.object(in), "w")
		if err != nil {
			return // an object the schema refuses
		}
		liveMeta := live["metadata"].(map[string]any)
		liveMeta["uid"] = "u-1"
		updated := drawWritten(in, k, live)
		md := updated["metadata"].(map[string]any)
		md["uid"] = "u-1"
		if mf, ok := liveMeta["managedFields"]; ok {
			md["managedFields"] = mf // the registry hands live's list on
		}
		manager := []string{"w", "w", "w", "other"}[in.pick(4)]
		heard = ""
		if !differ(t, k.m, live, updated, manager) {
			return
		}
		if heard == "sole owner" {
			sole++
			if out, _ := k.m.fastUpdate(live, updated, manager); strings.Contains(dump(out), "2020-05-06") {
				kept++
			}
		}
	})
	if sole < 600 || kept < 100 {
		t.Fatalf("the sole-owner walk answered %d of 2,000 updates (%d keeping the entry's time); want over 600 (100)", sole, kept)
	}
}

// TestSoleOwnerUpdate: updates by the writer that created the object, each
// answered by the sole-owner walk and equal to the library, the entry's time
// kept (2020) or stamped now as the case says.
func TestSoleOwnerUpdate(t *testing.T) {
	ms := managerSet{}
	pastOf := managerSet{}
	thing := func(spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d"},"spec":` + spec + `}`
	}
	cases := []struct {
		name, kind, before, after string
		stamped                   bool
	}{
		{"no change", "", cm("", `{"a":"1"}`), cm("", `{"a":"1"}`), false},
		{"a value changed", "", cm("", `{"a":"1"}`), cm("", `{"a":"2"}`), true},
		{"a key added", "", cm("", `{"a":"1"}`), cm("", `{"a":"1","b":"2"}`), true},
		{"a key removed", "", cm("", `{"a":"1","b":"2"}`), cm("", `{"a":"1"}`), false},
		{"every field removed", "", cm("", `{"a":"1"}`), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"d","uid":"u-1"}}`, false},
		{"a label added", "", cm(`"labels":{"x":"1"}`, `{"a":"1"}`), cm(`"labels":{"x":"1","y":"2"}`, `{"a":"1"}`), true},
		{"server metadata changed only", "", cm(`"generation":1`, `{"a":"1"}`), cm(`"generation":2`, `{"a":"1"}`), false},
		{"a scalar becomes an empty map", "deduced", thing(`{"s":"x"}`), thing(`{"s":{}}`), true},
		{"a map becomes a scalar", "deduced", thing(`{"s":{"a":"b"}}`), thing(`{"s":"x"}`), true},
		{"an integer becomes the same float", "deduced", thing(`{"s":2}`), thing(`{"s":2.5}`), true},
		{"a number becomes a string", "deduced", thing(`{"s":2}`), thing(`{"s":"2"}`), true},
		{"an empty map stays empty", "deduced", thing(`{"s":{}}`), thing(`{"s":{}}`), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			past := pastOf.of(t, c.kind)
			past.clock = func() time.Time { return time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC) }
			live, err := past.Update(nil, decode(t, c.before, true), "w")
			if err != nil {
				t.Fatal(err)
			}
			updated := decode(t, c.after, true)
			updated["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
			answered := false
			m.walked = func(which string) { answered = which == "sole owner" }
			defer func() { m.walked = nil }()
			if !differ(t, m, live, updated, "w") || !answered {
				t.Fatal("the sole-owner walk did not answer")
			}
			out, _ := m.fastUpdate(live, updated, "w")
			if kept := strings.Contains(dump(out), "2020-05-06"); kept == c.stamped && strings.Contains(dump(out), "managedFields") {
				t.Fatalf("entry time kept %v, want %v: %s", kept, !c.stamped, dump(out))
			}
		})
	}
}

// TestMatchesFields: matchesFields holds exactly for the fieldsV1 mapFields
// lists, on 2,000 generated objects and, for each, that fieldsV1 with one
// key removed, one added, a "." added or dropped, or a member given a field;
// an object mapFields refuses matches nothing, its keys' fieldsV1
// included; and an object that is not its own JSON copy (an integral
// float64, a string or key that is not UTF-8, a typed nil map) gets no
// fields from mapFields and matches none, its copy's included.
func TestMatchesFields(t *testing.T) {
	kinds := fuzzKinds(t)
	rng := rand.New(rand.NewPCG(37, 8)) // which node to change
	var key []byte
	// nodes lists every map in a fieldsV1, itself first.
	var nodes func(f map[string]any) []map[string]any
	nodes = func(f map[string]any) []map[string]any {
		out := []map[string]any{f}
		for _, v := range f {
			out = append(out, nodes(v.(map[string]any))...)
		}
		return out
	}
	// Objects the schema refuses, with the fieldsV1 their keys would give.
	ms := managerSet{}
	for _, c := range []struct{ kind, obj, fields string }{
		{"", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":1}}`, `{"f:data":{".":{},"f:k":{}}}`},
		{"", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"extra":"x"}`, `{"f:extra":{}}`},
		{"", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":{}}}`, `{}`},
		{"widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"ready":"yes"}}`, `{"f:status":{".":{},"f:ready":{}}}`},
		{"widget", `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"pinned":{"a":"b"}}}`, `{"f:spec":{".":{},"f:pinned":{".":{},"f:a":{}}}}`},
	} {
		m := ms.of(t, c.kind)
		root, ok := m.walkRoot()
		if !ok {
			t.Fatal("no walk type")
		}
		if matchesFields(root, decode(t, c.obj, true), decode(t, c.fields, true), updateStrip, 0, &key, false) {
			t.Fatalf("%s, which the schema refuses, matched %s", c.obj, c.fields)
		}
	}

	// Objects and fieldsV1 that are not their own JSON copy, each of which
	// matches with the one change undone.
	cmRoot, ok := ms.of(t, "").walkRoot()
	if !ok {
		t.Fatal("no walk type")
	}
	for _, c := range []struct {
		name   string
		change func(obj, fields map[string]any)
	}{
		{"as written", func(obj, fields map[string]any) {}},
		{"a string not UTF-8", func(obj, _ map[string]any) { obj["data"].(map[string]any)["k"] = "\xff" }},
		{"a key not UTF-8", func(obj, fields map[string]any) {
			obj["data"].(map[string]any)["\xff"] = "v"
			fields["f:data"].(map[string]any)["f:\xff"] = map[string]any{}
		}},
		{"a typed nil map", func(obj, fields map[string]any) {
			obj["metadata"].(map[string]any)["labels"] = map[string]any(nil)
		}},
		{"a typed nil map in fieldsV1", func(_, fields map[string]any) { fields["f:data"].(map[string]any)["f:k"] = map[string]any(nil) }},
		{"a typed nil map as fieldsV1's \".\"", func(_, fields map[string]any) { fields["f:data"].(map[string]any)["."] = map[string]any(nil) }},
	} {
		obj := decode(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`, true)
		fields := decode(t, `{"f:data":{".":{},"f:k":{}}}`, true)
		c.change(obj, fields)
		if got, want := matchesFields(cmRoot, obj, fields, updateStrip, 0, &key, false), c.name == "as written"; got != want {
			t.Errorf("%s: matchesFields = %v, want %v", c.name, got, want)
		}
		if _, listed := mapFields(cmRoot, obj, updateStrip, everyField); listed != jsonvalue.Stable(obj, jsonvalue.PreserveInts) {
			t.Errorf("%s: mapFields listed %v for an object whose being its own JSON copy is %v", c.name, listed, !listed)
		}
	}

	// Read through its copy, an object's integral float64s are read as the
	// int64s they become; a number without an exact copy is not.
	for _, c := range []struct {
		name           string
		n              float64
		copied, itself bool // matches when read through its copy, as itself
	}{
		{"a fraction", 2.5, true, true},
		{"an integral float64", 2, true, false},
		{"the largest exact integer", 1<<53 - 1, true, false},
		{"2^53", 1 << 53, false, false},
		{"NaN", math.NaN(), false, false},
	} {
		m := ms.of(t, "deduced")
		root, ok := m.walkRoot()
		if !ok {
			t.Fatal("no walk type")
		}
		obj := map[string]any{"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"}, "spec": map[string]any{"s": c.n}}
		fields := decode(t, `{"f:spec":{".":{},"f:s":{}}}`, true)
		if got := matchesFields(root, obj, fields, updateStrip, 0, &key, true); got != c.copied {
			t.Errorf("%s read through its copy: matchesFields = %v, want %v", c.name, got, c.copied)
		}
		if got := matchesFields(root, obj, fields, updateStrip, 0, &key, false); got != c.itself {
			t.Errorf("%s read as itself: matchesFields = %v, want %v", c.name, got, c.itself)
		}
	}

	listed, refused, unstable := 0, 0, 0
	eachDraw(kinds, 37, 2000, 64, func(i int, in *fuzzBytes, k *fuzzKind) {
		obj := k.object(in)
		root, ok := k.m.walkRoot()
		if !ok {
			t.Fatal("no walk type")
		}
		match := func(f map[string]any) bool { return matchesFields(root, obj, f, updateStrip, 0, &key, false) }
		want, ok := mapFields(root, obj, updateStrip, everyField)
		if !jsonvalue.Stable(obj, jsonvalue.PreserveInts) {
			unstable++
			copied, copyOK := mapFields(root, jsonCopy(obj).(map[string]any), updateStrip, everyField)
			if ok || copyOK && match(copied) {
				t.Fatalf("object %d: %s is not its own JSON copy, and mapFields listed %v or matchesFields matched its copy's fields %s", i, dump(obj), ok, dump(copied))
			}
			return
		}
		if !ok {
			refused++
			if match(map[string]any{}) {
				t.Fatalf("object %d: mapFields refuses %s, matchesFields matched it", i, dump(obj))
			}
			return
		}
		listed++
		if !match(want) {
			t.Fatalf("object %d: %s does not match its own fields %s", i, dump(obj), dump(want))
		}
		all := nodes(want)
		n := all[rng.IntN(len(all))]
		for _, change := range []struct {
			name string
			do   func() func() // makes the change, returns its undo
		}{
			{"a key added", func() func() { n["f:zz"] = map[string]any{}; return func() { delete(n, "f:zz") } }},
			{"a key removed", func() func() {
				for k, v := range n {
					delete(n, k)
					return func() { n[k] = v }
				}
				return nil
			}},
			{`"." toggled`, func() func() {
				if _, ok := n["."]; ok {
					delete(n, ".")
					return func() { n["."] = map[string]any{} }
				}
				if len(n) == 0 {
					return nil
				}
				n["."] = map[string]any{}
				return func() { delete(n, ".") }
			}},
			{"a member given a field", func() func() {
				if len(n) != 0 {
					return nil
				}
				n["f:zz"] = map[string]any{}
				return func() { delete(n, "f:zz") }
			}},
		} {
			undo := change.do()
			if undo == nil {
				continue
			}
			if match(want) {
				t.Fatalf("object %d: %s matches fields with %s: %s", i, dump(obj), change.name, dump(want))
			}
			undo()
		}
	})
	if listed < 900 || refused == 0 || unstable == 0 {
		t.Fatalf("of 2,000 generated objects %d had fields listed, %d were refused and %d not their own JSON copy; want over 900 and some of each", listed, refused, unstable)
	}
}

// TestCreateInPlace: createUpdate answers a create of an object that is its
// own JSON copy, of the Manager's kind and without managedFields, reading
// it in place; it declines the others, which fastUpdate then answers from a
// normalised copy where it can. Every answer equals the library's, and no
// input changes (differ).
func TestCreateInPlace(t *testing.T) {
	ms := managerSet{}
	thing := func(spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d"},"spec":` + spec + `}`
	}
	cases := []struct {
		name, kind, obj   string
		ints              bool
		inPlace, answered bool
	}{
		{"a configmap", "", cm(`"labels":{"x":"1"}`, `{"a":"1"}`), true, true, true},
		{"a fraction", "deduced", thing(`{"s":2.5}`), false, true, true},
		{"an integer as int64", "deduced", thing(`{"s":2}`), true, true, true},
		{"an integer as float64", "deduced", thing(`{"s":2}`), false, false, true},
		{"no kind", "", `{"apiVersion":"v1","metadata":{"name":"c"},"data":{"a":"1"}}`, true, false, true},
		{"managedFields brought", "", cm(`"managedFields":[{"manager":"a","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}]`, `{"a":"1"}`), true, false, true},
		{"kubectl's last-applied annotation", "", cm(`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{"a":"1"}`), true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			obj := decode(t, c.obj, c.ints)
			if _, ok := m.createUpdate(nil, obj, "w"); ok != c.inPlace {
				t.Fatalf("createUpdate answered %v, want %v", ok, c.inPlace)
			}
			if got := differ(t, m, nil, obj, "w"); got != c.answered {
				t.Fatalf("the fast path answered %v, want %v", got, c.answered)
			}
		})
	}
}

// TestSoleOwnerStoredNumbers: live as the registry decodes a stored object,
// its integers float64s (a custom resource's generation and fields), is
// answered by the sole-owner walk, equal to the library; a live number
// without an exact copy (2^53) is left to the library.
func TestSoleOwnerStoredNumbers(t *testing.T) {
	ms := managerSet{}
	thing := func(meta, spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d"` + meta + `},"spec":` + spec + `}`
	}
	for _, c := range []struct {
		name, before, after string
		afterFloats         bool // the written object's numbers float64 too
		sole                bool
	}{
		{"an integer changed", thing("", `{"s":2}`), thing("", `{"s":3}`), false, true},
		{"an integer kept, a string changed", thing("", `{"s":2,"m":{"x":"1"}}`), thing("", `{"s":2,"m":{"x":"2"}}`), false, true},
		{"generation", thing(`,"generation":4`, `{"s":2}`), thing(`,"generation":5`, `{"s":3}`), false, true},
		{"2^53", thing("", `{"s":9007199254740992}`), thing("", `{"s":3}`), false, false},
		// The written object's values are the answer's: read only as
		// their own copy, so the typed path answers with int64s.
		{"the written integer a float64", thing("", `{"s":2}`), thing("", `{"s":3}`), true, false},
		// ...but for its metadata, which the Update copies: the registry
		// carries the stored generation over as a float64 when the spec
		// stays.
		{"the written generation a float64", thing(`,"generation":4`, `{"s":2}`), thing(`,"generation":4.0,"labels":{"x":"1"}`, `{"s":2}`), false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, "deduced")
			created, err := m.libraryUpdate(nil, decode(t, c.before, true), "w")
			if err != nil {
				t.Fatal(err)
			}
			live := decode(t, dump(created), false) // numbers float64, as stored objects decode
			updated := decode(t, c.after, !c.afterFloats)
			updated["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
			sole := false
			m.walked = func(which string) { sole = which == "sole owner" }
			defer func() { m.walked = nil }()
			differ(t, m, live, updated, "w")
			if sole != c.sole {
				t.Fatalf("the sole-owner walk answered %v, want %v", sole, c.sole)
			}
		})
	}
}

// drawWritten draws the object an update of live writes: live again, live
// less a top-level field or label, or a new object.
func drawWritten(in *fuzzBytes, k *fuzzKind, live map[string]any) map[string]any {
	switch in.pick(3) {
	case 0:
		return jsonCopy(live).(map[string]any)
	case 1:
		updated := jsonCopy(live).(map[string]any)
		for _, key := range []string{"data", "spec", "status"} {
			if _, ok := updated[key]; ok && in.pick(2) == 0 {
				delete(updated, key)
				break
			}
		}
		if labels, ok := updated["metadata"].(map[string]any)["labels"].(map[string]any); ok {
			delete(labels, "x")
		}
		return updated
	default:
		return k.object(in)
	}
}
