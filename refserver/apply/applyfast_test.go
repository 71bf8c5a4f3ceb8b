package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// applyOutcome is one run of the fast path and the library on the same
// inputs.
type applyOutcome struct {
	answered bool           // the fast path answered
	lib      map[string]any // the library's result
	err      error          // the library's error
}

// differApply runs the fast path and the library on the same inputs; where
// the fast path answers, its result must equal the library's exactly (both
// stamp the current second: a run that straddles a second is run again)
// and neither may touch the inputs.
func differApply(t testing.TB, m *Manager, live, applied map[string]any, manager string, force bool) applyOutcome {
	t.Helper()
	liveBefore, appliedBefore := jsonCopy(live), jsonCopy(applied)
	for try := 0; ; try++ {
		start := time.Now().Unix()
		fast, ok := m.fastApply(live, applied, manager, force)
		if !reflect.DeepEqual(jsonCopy(live), liveBefore) || !reflect.DeepEqual(jsonCopy(applied), appliedBefore) {
			t.Fatalf("the fast path changed its inputs")
		}
		lib, err := m.libraryApply(live, applied, manager, force)
		if time.Now().Unix() != start && try < 5 {
			continue
		}
		if !ok {
			return applyOutcome{false, lib, err}
		}
		if err != nil {
			t.Fatalf("the fast path answered where the library failed: %v\nfast: %s", err, dump(fast))
		}
		if !reflect.DeepEqual(fast, lib) {
			t.Fatalf("fast path and library differ\nfast:    %s\nlibrary: %s", dump(fast), dump(lib))
		}
		return applyOutcome{true, lib, nil}
	}
}

// app is an Apply entry at v1 of an old time.
func app(manager, fields string) string {
	return `{"manager":"` + manager + `","operation":"Apply","apiVersion":"v1","time":"2021-05-06T07:08:09Z","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
}

// acm is an applied ConfigMap: name and namespace, the given metadata
// fields, and data ("" for none).
func acm(meta, data string) string {
	if meta != "" {
		meta = "," + meta
	}
	s := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"d"` + meta + `}`
	if data != "" {
		s += `,"data":` + data
	}
	return s + `}`
}

// applyStep is one apply of a case; each step's live is the result of the
// one before, through JSON as the registry stores it.
type applyStep struct {
	manager  string
	applied  string
	force    bool
	declines bool // the fast path is to decline (a conflict)
}

type applyCase struct {
	name  string
	kind  string // ConfigMap (""), Secret, Namespace, widget, deduced
	live  string // "" is a create
	ints  bool   // live's and applied's integers as int64 (else float64, as the registry holds them)
	steps []applyStep
}

func applyCases() []applyCase {
	full := `"labels":{"app":"x","tier":"web"},"annotations":{"note":"n"},"finalizers":["example.com/f","example.com/g"],` +
		`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"o-1","controller":true}]`
	eleven := []string{}
	elevenData := []string{}
	for i := 0; i < 11; i++ {
		eleven = append(eleven, upd(fmt.Sprintf("m%d", i), fmt.Sprintf(`{"f:data":{"f:k%d":{}}}`, i)))
		elevenData = append(elevenData, fmt.Sprintf(`"k%d":"%d"`, i, i))
	}
	widget := func(meta, spec string) string {
		if meta != "" {
			meta = "," + meta
		}
		return `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"` + meta + `},"spec":` + spec + `}`
	}
	thing := func(meta, spec string) string {
		if meta != "" {
			meta = "," + meta
		}
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t"` + meta + `},"spec":` + spec + `}`
	}
	// A ConfigMap as the load generator's create, update and merge patch
	// leave it: Update entries of one manager.
	loaded := cm(`"labels":{"load":"apiconform","shard":"3"},`+mfs(upd("apiconform", `{"f:data":{".":{},"f:index":{},"f:patched":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:load":{},"f:shard":{}}}}`)),
		`{"index":"3","payload":"p","patched":"3"}`)
	return []applyCase{
		{name: "create with data, labels, annotations, finalizers, ownerReferences", steps: []applyStep{
			{manager: "kubectl", applied: acm(full, `{"a":"1","b":"2"}`)},
			{manager: "kubectl", applied: acm(full, `{"a":"1","b":"2"}`)}, // re-apply: nothing changes, not even the time
			{manager: "kubectl", applied: acm(`"labels":{"app":"y"},"finalizers":["example.com/g"]`, `{"a":"1","c":"3"}`)},
		}},
		{name: "create of a bare object records nothing", steps: []applyStep{
			{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`},
			{manager: "kubectl", applied: acm("", `{"a":"1"}`)},
		}},
		{name: "create without apiVersion and kind", steps: []applyStep{{manager: "kubectl", applied: `{"metadata":{"name":"c"},"data":{"a":"1"}}`}}},
		{name: "create without metadata", steps: []applyStep{{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"}}`}}},
		{name: "create by an unnamed manager", steps: []applyStep{
			{manager: "", applied: acm("", `{"a":"1"}`)},
			{manager: "unknown", applied: acm("", `{"a":"1","b":"2"}`)},
		}},
		{name: "create with empty data", steps: []applyStep{{manager: "kubectl", applied: acm("", `{}`)}}},
		{name: "an applier drops a field it alone owned: pruned", steps: []applyStep{
			{manager: "kubectl", applied: acm(`"labels":{"x":"1","y":"2"}`, `{"a":"1","b":"2"}`)},
			{manager: "kubectl", applied: acm(`"labels":{"x":"1"}`, `{"a":"1"}`)},
			{manager: "kubectl", applied: acm("", "")},
		}},
		{name: "an applier drops a field another applier shares: kept", steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"a":"1","b":"2"}`)},
			{manager: "other", applied: acm("", `{"b":"2"}`)}, // shared, no conflict
			{manager: "kubectl", applied: acm("", `{"a":"1"}`)},
			{manager: "other", applied: acm("", `{"c":"3"}`)},
		}},
		{name: "an applier drops a field an Update manager owns: kept", live: cm(mfs(upd("editor", `{"f:data":{"f:b":{}}}`), app("kubectl", `{"f:data":{"f:a":{},"f:b":{}}}`)), `{"a":"1","b":"2"}`),
			steps: []applyStep{{manager: "kubectl", applied: acm("", `{"a":"1"}`)}}},
		{name: "first apply on a loaded object", live: loaded, steps: []applyStep{
			{manager: "apiconform-load", applied: acm("", `{"applied":"3"}`)},
			{manager: "apiconform-load", applied: acm("", `{"applied":"3"}`)},
			{manager: "apiconform-load", applied: acm("", `{"applied":"4"}`)},
		}},
		{name: "applying an Update manager's value is shared ownership", live: loaded, steps: []applyStep{
			{manager: "kubectl", applied: acm(`"labels":{"load":"apiconform"}`, `{"index":"3"}`)},
		}},
		{name: "conflict with an Update manager, then force", live: loaded, steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"index":"9"}`), declines: true},
			{manager: "kubectl", applied: acm("", `{"index":"9","payload":"q"}`), force: true},
		}},
		{name: "conflict with an applier, then force", steps: []applyStep{
			{manager: "a", applied: acm(`"labels":{"x":"1"}`, `{"k":"1","j":"2"}`)},
			{manager: "b", applied: acm("", `{"k":"2"}`), declines: true},
			{manager: "b", applied: acm(`"labels":{"x":"2"}`, `{"k":"2","j":"2"}`), force: true},
			{manager: "a", applied: acm("", `{"k":"3"}`), force: true},
		}},
		{name: "force without a conflict", live: loaded, steps: []applyStep{{manager: "kubectl", applied: acm("", `{"x":"1"}`), force: true}}},
		{name: "an untracked object: before-first-apply", live: cm(`"labels":{"a":"1"}`, `{"a":"1","b":"2"}`), steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"a":"1","c":"3"}`)},
			{manager: "kubectl", applied: acm("", `{"a":"2"}`), declines: true},
			{manager: "kubectl", applied: acm("", `{"a":"2"}`), force: true},
		}},
		{name: "an untracked object with an empty list", live: cm(`"managedFields":[]`, `{"a":"1"}`), steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"a":"1"}`)},
		}},
		{name: "an untracked bare object", live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"u"}}`, steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"a":"1"}`)},
		}},
		{name: "a new manager applying what is there gets an entry without a time", live: loaded, steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"payload":"p"}`)},
		}},
		{name: "an apply of only the name by a new manager records nothing", live: loaded, steps: []applyStep{
			{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`},
		}},
		{name: "an applier applying only the name loses everything it applied", steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"a":"1"}`)},
			{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`},
		}},
		{name: "eleven update managers are not capped by an apply", live: cm(mfs(eleven...), `{`+strings.Join(elevenData, ",")+`}`), steps: []applyStep{
			{manager: "kubectl", applied: acm("", `{"z":"1"}`)},
			{manager: "kubectl", applied: acm("", `{"k0":"x"}`), force: true},
		}},
		{name: "entries of a subresource and unnamed managers", live: cm(mfs(statusS, `{"operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:u":{}}}}`,
			`{"manager":"kubectl","operation":"Apply","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:q":{}}},"subresource":"status"}`), `{"s":"1","u":"2","q":"3"}`),
			steps: []applyStep{
				{manager: "", applied: acm("", `{"u":"2","v":"1"}`)},
				{manager: "kubectl", applied: acm("", `{"q":"3","s":"1"}`)},
			}},
		{name: "fieldsV1 in a form the library rewrites", live: cm(mfs(upd("a", `{".":{},"f:data":{"f:a":{}},"f:metadata":{".":{}}}`), app("kubectl", `{"f:data":{".":{},"f:b":{}}}`)), `{"a":"1","b":"2"}`),
			steps: []applyStep{{manager: "kubectl", applied: acm("", `{"c":"1"}`)}}},
		// The other entries are kept as they were read only when that is
		// how the library writes them.
		{name: "a first apply rewrites another entry's fieldsV1: a top-level \".\"", live: cm(`"labels":{"x":"1"},`+mfs(upd("a", `{".":{},"f:data":{".":{},"f:a":{}},"f:metadata":{"f:labels":{".":{},"f:x":{}}}}`)), `{"a":"1"}`),
			steps: []applyStep{{manager: "kubectl", applied: acm("", `{"c":"1"}`)}}},
		{name: "a first apply rewrites another entry's fieldsV1: a \".\" alone", live: cm(`"labels":{"x":"1"},`+mfs(upd("a", `{"f:data":{".":{},"f:a":{".":{}}},"f:metadata":{"f:labels":{".":{}}}}`)), `{"a":"1"}`),
			steps: []applyStep{{manager: "kubectl", applied: acm("", `{"c":"1"}`)}}},
		{name: "a first apply keeps another entry's fieldsV1 of keys and values", live: cm(full+`,`+mfs(upd("a", `{"f:data":{".":{},"f:a":{}},"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/f\"":{},"v:\"example.com/g\"":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"o-1\"}":{".":{},"f:apiVersion":{},"f:controller":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}`)), `{"a":"1"}`),
			steps: []applyStep{{manager: "kubectl", applied: acm("", `{"c":"1"}`)}}},
		{name: "ownerReferences and finalizers merge by key and value", live: cm(full+`,`+mfs(upd("a", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/f\"":{},"v:\"example.com/g\"":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"o-1\"}":{".":{},"f:apiVersion":{},"f:controller":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}`)), `{}`),
			steps: []applyStep{
				{manager: "kubectl", applied: acm(`"finalizers":["example.com/h"],"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"q","uid":"o-2"}]`, "")},
				{manager: "kubectl", applied: acm(`"finalizers":["example.com/g"]`, "")},
				{manager: "kubectl", applied: acm(`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p2","uid":"o-1"}]`, ""), declines: true},
			}},
		{name: "names needing escapes", live: cm(mfs(upd("a<é>&", `{"f:data":{"f:a\"b\\c<&>é":{}}}`)), `{"a\"b\\c<&>é":"1"}`), steps: []applyStep{
			{manager: "w<\"é>", applied: acm("", `{"a\"b\\c<&>é":"1","\u2028x":"y"}`)},
		}},
		{name: "secret", kind: "Secret", steps: []applyStep{
			{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","data":{"k":"dg=="},"stringData":{"s":"v"}}`},
			{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"type":"Opaque","data":{"k":"dw==","j":"dg=="},"immutable":false}`},
		}},
		{name: "namespace", kind: "Namespace", live: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","uid":"u","labels":{"kubernetes.io/metadata.name":"n"},` + mfs(upd("a", `{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`)) + `},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
			steps: []applyStep{
				{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"team":"x"}}}`},
				{manager: "kubectl", applied: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","labels":{"kubernetes.io/metadata.name":"n"}}}`},
			}},
		{name: "widget", kind: "widget", steps: []applyStep{
			{manager: "m1", applied: widget("", `{"size":1,"name":"w","tags":["x","y"],"items":[{"a":"1"}],"labels":{"l":"v"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":1.5}},"keyed":[{"name":"a","v":"1"},{"name":"b","v":"2"}]}`)},
			{manager: "m2", applied: widget("", `{"keyed":[{"name":"c","v":"3"}],"labels":{"m":"w"}}`)},
			{manager: "m1", applied: widget("", `{"size":1,"keyed":[{"name":"a","v":"1"}],"nested":{"inner":{"x":"2"}}}`)},
			{manager: "m2", applied: widget("", `{"size":2,"tags":["z"]}`), declines: true},
			{manager: "m2", applied: widget("", `{"size":2,"tags":["z"]}`), force: true},
			{manager: "m1", applied: widget("", `{"keyed":[{"name":"a"}]}`)},
		}},
		{name: "widget, integers int64", kind: "widget", ints: true, live: widget(`"uid":"u",`+mfs(`{"manager":"e","operation":"Update","apiVersion":"fc.example.com/v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{".":{},"f:size":{},"f:free":{".":{},"f:n":{}}}}}`), `{"size":3,"free":{"n":{"d":2}}}`),
			steps: []applyStep{
				{manager: "m1", applied: widget("", `{"size":3,"name":"w"}`)},
				{manager: "m1", applied: widget("", `{"name":"w","free":{"n":{"d":2}}}`)},
			}},
		{name: "widget status", kind: "widget", steps: []applyStep{
			{manager: "m1", applied: `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"status":{"ready":true}}`},
		}},
		{name: "deduced", kind: "deduced", steps: []applyStep{
			{manager: "m1", applied: thing(`"labels":{"a":"1"}`, `{"list":[1,2],"m":{"x":"1"},"s":"v"}`)},
			{manager: "m2", applied: thing("", `{"m":{"y":"2"},"t":1.5}`)},
			{manager: "m1", applied: thing("", `{"list":[3],"m":{"x":"1"}}`)},
			{manager: "m2", applied: thing("", `{"list":[4]}`), declines: true},
			{manager: "m2", applied: thing("", `{"list":[4]}`), force: true},
		}},
	}
}

func TestApplyFastPathMatchesLibrary(t *testing.T) {
	ms := managerSet{}
	for _, c := range applyCases() {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			live := decode(t, c.live, c.ints)
			for i, s := range c.steps {
				got := differApply(t, m, live, decode(t, s.applied, c.ints), s.manager, s.force)
				switch {
				case s.declines && got.answered:
					t.Fatalf("step %d: the fast path answered", i)
				case !s.declines && !got.answered:
					t.Fatalf("step %d: the fast path declined (library: %v)", i, got.err)
				case s.declines && got.err == nil:
					t.Fatalf("step %d: no conflict", i)
				case got.err != nil:
					continue
				}
				// The next live as the registry stores it: JSON, numbers float64
				// (or int64).
				b, err := json.Marshal(got.lib)
				if err != nil {
					t.Fatal(err)
				}
				live = decode(t, string(b), c.ints)
			}
		})
	}
}

// TestApplyFastPathTimes pins the writer's time: the entry carries the
// injected clock's second, in UTC, when the object changed, and keeps its
// time when it did not.
func TestApplyFastPathTimes(t *testing.T) {
	m := managerFor(t, "ConfigMap")
	m.clock = func() time.Time { return time.Date(2030, 1, 2, 4, 5, 6, 7e8, time.FixedZone("x", 3600)) }
	time0 := func(o map[string]any) any {
		return o["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)["time"]
	}
	out, ok := m.fastApply(nil, decode(t, acm("", `{"a":"1"}`), false), "kubectl", false)
	if !ok {
		t.Fatal("declined")
	}
	if time0(out) != "2030-01-02T03:05:06Z" {
		t.Fatalf("time %v", time0(out))
	}
	m.clock = func() time.Time { return time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC) }
	again, ok := m.fastApply(out, decode(t, acm("", `{"a":"1"}`), false), "kubectl", false)
	if !ok || time0(again) != "2030-01-02T03:05:06Z" {
		t.Fatalf("re-apply: %v, time %v", ok, time0(again))
	}
}

func TestApplyFastPathDeclines(t *testing.T) {
	live := cm(mfs(aOwnsA, kubectlAB), `{"a":"1","b":"2"}`)
	applied := acm("", `{"c":"3"}`)
	for _, c := range []struct {
		name          string
		live, applied string
		manager       string
		force         bool
	}{
		{"a conflict", live, acm("", `{"a":"9"}`), "b", false},
		{"a conflict with an applier", live, acm("", `{"b":"9"}`), "other", false},
		{"patch of another kind", live, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, "b", false},
		{"patch of another version", live, `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"c"}}`, "b", false},
		{"patch with managedFields", live, acm(`"managedFields":[]`, `{}`), "b", false},
		{"patch with managedFields null", live, acm(`"managedFields":null`, `{}`), "b", false},
		{"patch with entries", live, acm(mfs(aOwnsA), `{}`), "b", false},
		{"patch with the last-applied annotation", live, acm(`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{}`), "kubectl", false},
		{"live with the last-applied annotation", cm(`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},`+mfs(aOwnsA), `{"a":"1"}`), applied, "kubectl", false},
		{"patch metadata not an object", live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":"m"}`, "b", false},
		{"patch metadata null", live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":null}`, "b", false},
		{"live metadata not an object", `{"apiVersion":"v1","kind":"ConfigMap","metadata":"m"}`, applied, "b", false},
		{"live metadata null", `{"apiVersion":"v1","kind":"ConfigMap","metadata":null}`, applied, "b", false},
		{"live of another kind", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"c"}}`, applied, "b", false},
		{"live managedFields not a list", cm(`"managedFields":{}`, `{}`), applied, "b", false},
		{"live managedFields null", cm(`"managedFields":null`, `{}`), applied, "b", false},
		{"live entry malformed", cm(mfs(`{"manager":"x","operation":"Bogus"}`), `{}`), applied, "b", false},
		{"live entry of another version", cm(mfs(`{"manager":"a","operation":"Update","apiVersion":"v1beta1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}`), `{"a":"1"}`), applied, "b", false},
		{"live entries of one manager twice", cm(mfs(aOwnsA, aOwnsAB), `{"a":"1","b":"2"}`), applied, "b", false},
		{"an entry owning managedFields", cm(mfs(aOwnsA, upd("odd", `{"f:metadata":{"f:managedFields":{}}}`)), `{"a":"1"}`), applied, "b", false},
		{"an entry owning apiVersion", cm(mfs(app("kubectl", `{"f:apiVersion":{},"f:data":{"f:a":{}}}`)), `{"a":"1"}`), applied, "kubectl", false},
		{"an entry owning kind", cm(mfs(upd("odd", `{"f:kind":{}}`)), `{"a":"1"}`), applied, "kubectl", false},
		{"patch field not in the schema", live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}`, "b", false},
		{"patch field of the wrong type", live, acm("", `{"a":1}`), "b", false},
		{"patch with a duplicate in a set", live, acm(`"finalizers":["x","x"]`, `{}`), "b", false},
		{"patch with a duplicate map-list key", live, acm(`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"o"},{"apiVersion":"v1","kind":"Pod","name":"q","uid":"o"}]`, `{}`), "b", false},
		{"live field not in the schema", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}`, applied, "b", false},
		{"manager not UTF-8", live, applied, "b\xff", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := managerFor(t, "ConfigMap")
			if differApply(t, m, decode(t, c.live, false), decode(t, c.applied, false), c.manager, c.force).answered {
				t.Fatal("the fast path answered")
			}
		})
	}
	t.Run("invalid UTF-8 in the patch", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		a := decode(t, applied, false)
		a["data"].(map[string]any)["c"] = "\xff"
		if differApply(t, m, decode(t, live, false), a, "b", false).answered {
			t.Fatal("the fast path answered")
		}
	})
	t.Run("a strategy's defaulting", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		m.Default = func(map[string]any) {}
		if differApply(t, m, decode(t, live, false), decode(t, applied, false), "b", false).answered {
			t.Fatal("the fast path answered")
		}
	})
	// Not a decline: a typed nil map is read from the copy, as null.
	t.Run("typed nil map", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		a := decode(t, applied, false)
		a["data"] = map[string]any(nil)
		if !differApply(t, m, decode(t, live, false), a, "b", false).answered {
			t.Fatal("the fast path declined")
		}
	})
}

// TestApplyConflictWording: a conflict the fast path declines is the
// library's 409, as Apply answers it.
func TestApplyConflictWording(t *testing.T) {
	m := managerFor(t, "ConfigMap")
	live := decode(t, cm(mfs(upd("editor", `{"f:data":{"f:k2":{},"f:key":{}}}`)), `{"key":"v1","k2":"x"}`), false)
	_, err := m.Apply(live, decode(t, acm("", `{"key":"v2","k2":"y"}`), false), "kubectl", false)
	expectConflict(t, err, "Apply failed with 2 conflicts: conflicts with \"editor\" using v1:\n- .data.k2\n- .data.key",
		[]string{".data.k2", ".data.key"}, `conflict with "editor" using v1`)
}

// TestApplyFastPathConcurrent: one Manager's fast path from many goroutines
// (run with -race: the shared empty typed value and updater are only read).
func TestApplyFastPathConcurrent(t *testing.T) {
	m := managerFor(t, "widget")
	src := `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"keyed":[{"name":"a","v":"1"}]}}`
	concurrently(t, 8, func(i int) error {
		created, err := m.Apply(nil, decode(t, src, i%2 == 0), "c", false)
		if err != nil {
			return err
		}
		next := decode(t, fmt.Sprintf(`{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"keyed":[{"name":"b%d"}]}}`, i), false)
		_, err = m.Apply(created, next, "d", false)
		return err
	})
}

// TestApplyPruneSkip: pruning an applier's earlier fields is skipped where
// it provably changes nothing (every field nobody owns lies apart from what
// the applier applied before) and run everywhere else; either way the
// result is the library's. An unchanged re-apply is answered before either,
// by plainApply.
func TestApplyPruneSkip(t *testing.T) {
	loaded := cm(`"labels":{"load":"apiconform"},`+mfs(upd("apiconform", `{"f:data":{".":{},"f:index":{},"f:payload":{}},"f:metadata":{"f:labels":{".":{},"f:load":{}}}}`),
		app("kubectl", `{"f:data":{"f:applied":{}}}`)), `{"index":"3","payload":"p","applied":"3"}`)
	for _, c := range []struct {
		name, live, applied string
		want                string // "skipped", "pruned" or "unchanged re-apply"
	}{
		{"a re-apply of data, changed", loaded, acm("", `{"applied":"4"}`), "skipped"},
		{"a re-apply of data, unchanged", loaded, acm("", `{"applied":"3"}`), "unchanged re-apply"},
		{"a re-apply adding labels", loaded, acm(`"labels":{"x":"1"}`, `{"applied":"3"}`), "skipped"},
		{"the applier drops a field it alone owned", loaded, acm("", `{"other":"1"}`), "pruned"},
		{"the applier drops a field another manager shares", cm(mfs(upd("e", `{"f:data":{"f:a":{}}}`), app("kubectl", `{"f:data":{"f:a":{},"f:b":{}}}`)), `{"a":"1","b":"2"}`),
			acm("", `{"b":"2"}`), "skipped"},
		{"the applier applied labels: metadata holds fields nobody owns", cm(`"labels":{"x":"1"},`+mfs(app("kubectl", `{"f:metadata":{"f:labels":{"f:x":{}}}}`)), `{}`),
			acm(`"labels":{"x":"2"}`, ""), "pruned"},
		{"a data key nobody owns", cm(mfs(app("kubectl", `{"f:data":{"f:a":{}}}`)), `{"a":"1","z":"0"}`), acm("", `{"a":"2"}`), "pruned"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := managerFor(t, "ConfigMap")
			var heard []string
			m.prunes = func(skipped bool) { heard = append(heard, map[bool]string{true: "skipped", false: "pruned"}[skipped]) }
			m.walked = func(which string) { heard = append(heard, which) }
			if !differApply(t, m, decode(t, c.live, false), decode(t, c.applied, false), "kubectl", false).answered {
				t.Fatal("the fast path declined")
			}
			if len(heard) == 0 || heard[0] != c.want {
				t.Fatalf("heard %v, want %v", heard, c.want)
			}
		})
	}
}

func TestApart(t *testing.T) {
	f := func(s string) fieldpath.PathElement { return fieldpath.PathElement{FieldName: &s} }
	key := func(v string) fieldpath.PathElement {
		return fieldpath.PathElement{Key: &value.FieldList{{Name: "name", Value: value.NewValueInterface(v)}}}
	}
	idx := func(i int) fieldpath.PathElement { return fieldpath.PathElement{Index: &i} }
	p := func(pes ...fieldpath.PathElement) fieldpath.Path { return fieldpath.Path(pes) }
	for _, c := range []struct {
		name string
		r, l fieldpath.Path
		want bool
	}{
		{"siblings", p(f("metadata"), f("uid")), p(f("metadata"), f("labels")), true},
		{"other branches", p(f("metadata"), f("uid")), p(f("data"), f("a")), true},
		{"l is r", p(f("data"), f("a")), p(f("data"), f("a")), false},
		{"l above r", p(f("metadata"), f("uid")), p(f("metadata")), false},
		{"l under r", p(f("spec")), p(f("spec"), f("size")), false},
		{"other list items by key", p(f("spec"), f("keyed"), key("a"), f("v")), p(f("spec"), f("keyed"), key("b")), true},
		{"l in a list item on r's path", p(f("spec"), f("keyed"), key("a"), f("v")), p(f("spec"), f("keyed"), key("a"), f("name")), false},
		{"other list items by index", p(f("spec"), f("list"), idx(2), f("v")), p(f("spec"), f("list"), idx(0)), false},
	} {
		if got := apart(c.r, c.l); got != c.want {
			t.Errorf("%s: apart(%v, %v) = %v", c.name, c.r, c.l, got)
		}
	}
}
