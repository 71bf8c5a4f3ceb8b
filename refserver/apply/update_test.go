package apply

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// managerFor is the Manager the differential tests use for a kind name.
func managerFor(t testing.TB, kind string) *Manager {
	t.Helper()
	var (
		m   *Manager
		err error
	)
	switch kind {
	case "widget":
		m, err = ForSchema(schema.GroupVersionKind{Group: "fc.example.com", Version: "v1", Kind: "Widget"}, widgetSchema(t))
	case "deduced":
		m, err = ForSchema(schema.GroupVersionKind{Group: "x.example.com", Version: "v1", Kind: "Thing"}, nil)
	default:
		m, err = ForBuiltin(kind)
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// managers builds each kind's Manager once per test (kind "" is ConfigMap).
type managerSet map[string]*Manager

func (ms managerSet) of(t testing.TB, kind string) *Manager {
	if kind == "" {
		kind = "ConfigMap"
	}
	if ms[kind] == nil {
		ms[kind] = managerFor(t, kind)
	}
	return ms[kind]
}

// decode reads a case's object: nil for "", integers as int64 when ints
// (plain, read in place) or float64 (as the registry holds them, copied).
func decode(t testing.TB, s string, ints bool) map[string]any {
	t.Helper()
	if s == "" {
		return nil
	}
	var m map[string]any
	var err error
	if ints {
		err = sigsjson.UnmarshalCaseSensitivePreserveInts([]byte(s), &m)
	} else {
		err = json.Unmarshal([]byte(s), &m)
	}
	if err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return m
}

// normTimes is o with every managedFields time of the last hour (the
// writer's, stamped by each side's clock) replaced by "now".
func normTimes(o map[string]any) map[string]any {
	if o == nil {
		return nil
	}
	c := make(map[string]any, len(o))
	for k, v := range o {
		c[k] = v
	}
	md, ok := o["metadata"].(map[string]any)
	if !ok {
		return c
	}
	mdc := make(map[string]any, len(md))
	for k, v := range md {
		mdc[k] = v
	}
	c["metadata"] = mdc
	list, ok := md["managedFields"].([]any)
	if !ok {
		return c
	}
	lc := make([]any, len(list))
	for i, e := range list {
		em, ok := e.(map[string]any)
		if !ok {
			lc[i] = e
			continue
		}
		ec := make(map[string]any, len(em))
		for k, v := range em {
			ec[k] = v
		}
		if s, ok := em["time"].(string); ok {
			if tm, err := time.Parse(time.RFC3339, s); err == nil && time.Since(tm) < time.Hour && time.Since(tm) > -time.Hour {
				ec["time"] = "now"
			}
		}
		lc[i] = ec
	}
	mdc["managedFields"] = lc
	return c
}

func dump(o map[string]any) string {
	b, _ := json.MarshalIndent(o, "", " ")
	return string(b)
}

// differ runs the fast path and the library on the same inputs and reports
// whether the fast path answered; where it did, the results must be equal
// (times normalised) and neither may have touched the inputs.
//
// Both sides stamp the writer's entry with their own clock, and entries sort
// by their time in seconds: when a second ends between the two calls, an
// entry stamped in the same second as an earlier one (a live object the test
// just created) sorts differently, so the pair is run again (as differApply
// does).
func differ(t testing.TB, m *Manager, live, updated map[string]any, manager string) bool {
	t.Helper()
	liveBefore, updBefore := jsonCopy(live), jsonCopy(updated)
	var (
		fast, lib map[string]any
		ok        bool
		err       error
	)
	for try := 0; ; try++ {
		start := time.Now().Unix()
		fast, ok = m.fastUpdate(live, updated, manager)
		if !reflect.DeepEqual(jsonCopy(live), liveBefore) || !reflect.DeepEqual(jsonCopy(updated), updBefore) {
			t.Fatalf("the fast path changed its inputs")
		}
		lib, err = m.libraryUpdate(live, updated, manager)
		if time.Now().Unix() == start || try == 5 {
			break
		}
	}
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("the fast path answered where the library failed: %v\nfast: %s", err, dump(fast))
	}
	if f, l := normTimes(fast), normTimes(lib); !reflect.DeepEqual(f, l) {
		t.Fatalf("fast path and library differ\nfast:    %s\nlibrary: %s", dump(f), dump(l))
	}
	return true
}

const cmMeta = `"name":"c","namespace":"d","uid":"u-1","resourceVersion":"7","creationTimestamp":"2026-01-02T03:04:05Z"`

// cm is a ConfigMap with the given metadata fields (after cmMeta) and data.
func cm(meta, data string) string {
	if meta != "" {
		meta = "," + meta
	}
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + cmMeta + meta + `},"data":` + data + `}`
}

// mfs is a managedFields member with the given entries.
func mfs(entries ...string) string {
	return `"managedFields":[` + strings.Join(entries, ",") + `]`
}

// upd is an Update entry at v1 of an old time.
func upd(manager, fields string) string {
	return `{"manager":"` + manager + `","operation":"Update","apiVersion":"v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
}

type updateCase struct {
	name     string
	kind     string // ConfigMap (""), Secret, Namespace, widget, deduced
	live     string // "" is a create
	updated  string
	manager  string
	registry bool   // updated carries live's managedFields, as the registry sends it
	second   string // the manager of the second write ("" is "later")
	ints     bool   // integers as int64
	// library: the fast path declines (a create compared with the kind's
	// zero object) and the library answers.
	library bool
}

var (
	aOwnsA    = upd("a", `{"f:data":{".":{},"f:a":{}}}`)
	aOwnsAB   = upd("a", `{"f:data":{".":{},"f:a":{},"f:b":{}}}`)
	kubectlAB = `{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2021-05-06T07:08:09Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}`
	statusS   = `{"manager":"ctl","operation":"Update","apiVersion":"v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:s":{}}},"subresource":"status"}`
)

func updateCases() []updateCase {
	full := `"labels":{"app":"x","tier":"web"},"annotations":{"note":"n"},"finalizers":["example.com/f","example.com/g"],` +
		`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"o-1","controller":true}]`
	ten := []string{}
	for i := 0; i < 9; i++ {
		ten = append(ten, upd(fmt.Sprintf("m%d", i), fmt.Sprintf(`{"f:data":{"f:k%d":{}}}`, i)))
	}
	tenData := `{"k0":"0","k1":"1","k2":"2","k3":"3","k4":"4","k5":"5","k6":"6","k7":"7","k8":"8"}`
	widget := func(meta, spec string) string {
		if meta != "" {
			meta = "," + meta
		}
		return `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{` + cmMeta + meta + `},"spec":` + spec + `}`
	}
	thing := func(meta, spec string) string {
		if meta != "" {
			meta = "," + meta
		}
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{` + cmMeta + meta + `},"spec":` + spec + `}`
	}
	wEntry := func(manager, fields string) string {
		return `{"manager":"` + manager + `","operation":"Update","apiVersion":"fc.example.com/v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
	}
	tEntry := func(manager, fields string) string {
		return `{"manager":"` + manager + `","operation":"Update","apiVersion":"x.example.com/v1","time":"2020-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":` + fields + `}`
	}
	wSpec := `{"size":1,"name":"w","tags":["x","y"],"items":[{"a":"1"}],"labels":{"l":"v"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":1}},"keyed":[{"name":"a","v":"1"},{"name":"b","v":"2"}]}`
	wSpec2 := `{"size":2,"name":"w","tags":["x"],"items":[{"a":"1"}],"labels":{"l":"v","m":"w"},"nested":{"inner":{"x":"2"}},"free":{"n":{"d":2}},"keyed":[{"name":"a","v":"9"},{"name":"c","v":"3"}]}`
	wFields := `{"f:spec":{".":{},"f:free":{".":{},"f:n":{".":{},"f:d":{}}},"f:items":{},"f:keyed":{".":{},"k:{\"name\":\"a\"}":{".":{},"f:name":{},"f:v":{}},"k:{\"name\":\"b\"}":{".":{},"f:name":{},"f:v":{}}},"f:labels":{".":{},"f:l":{}},"f:name":{},"f:nested":{".":{},"f:inner":{".":{},"f:x":{}}},"f:size":{},"f:tags":{}}}`
	return []updateCase{
		{name: "create with data, labels, annotations, finalizers, ownerReferences", updated: cm(full, `{"a":"1","b":"2"}`), manager: "curl"},
		{name: "create without a manager name", updated: cm("", `{"a":"1"}`), manager: ""},
		{name: "create without data", updated: cm("", `{}`), manager: "curl"},
		{name: "create of a bare object", updated: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, manager: "curl"},
		{name: "create without apiVersion and kind", updated: `{"metadata":{"name":"c"},"data":{"a":"1"}}`, manager: "curl"},
		{name: "same manager adds a key", live: cm(mfs(aOwnsA), `{"a":"1"}`), updated: cm("", `{"a":"1","b":"2"}`), manager: "a", registry: true},
		{name: "second manager changes a key", live: cm(mfs(aOwnsAB), `{"a":"1","b":"2"}`), updated: cm("", `{"a":"x","b":"2"}`), manager: "b", registry: true},
		{name: "second manager takes every field of the first", live: cm(mfs(aOwnsA), `{"a":"1"}`), updated: cm("", `{"a":"x"}`), manager: "b", registry: true},
		{name: "removed key leaves its owner", live: cm(mfs(aOwnsAB), `{"a":"1","b":"2"}`), updated: cm("", `{"b":"2"}`), manager: "b", registry: true},
		{name: "owner of only a removed key disappears", live: cm(mfs(aOwnsA), `{"a":"1"}`), updated: cm("", `{}`), manager: "b", registry: true},
		{name: "removing data entirely", live: cm(mfs(aOwnsAB), `{"a":"1","b":"2"}`), updated: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + cmMeta + `}}`, manager: "b", registry: true},
		{name: "no change keeps every entry and time", live: cm(mfs(aOwnsAB, kubectlAB), `{"a":"1","b":"2"}`), updated: cm("", `{"a":"1","b":"2"}`), manager: "a", registry: true},
		{name: "a change of labels only", live: cm(`"labels":{"x":"1"},`+mfs(aOwnsA), `{"a":"1"}`), updated: cm(`"labels":{"x":"2","y":"3"}`, `{"a":"1"}`), manager: "a", registry: true},
		{name: "entry of a subresource loses a changed field", live: cm(mfs(aOwnsA, statusS), `{"a":"1","s":"1"}`), updated: cm("", `{"a":"1","s":"2"}`), manager: "b", registry: true},
		{name: "entry of a subresource untouched", live: cm(mfs(aOwnsA, statusS), `{"a":"1","s":"1"}`), updated: cm("", `{"a":"2","s":"1"}`), manager: "a", registry: true},
		{name: "apply entry loses changed and removed fields", live: cm(`"labels":{"x":"1"},`+mfs(kubectlAB, upd("a", `{"f:metadata":{"f:labels":{".":{},"f:x":{}}}}`)), `{"a":"1","b":"2"}`),
			updated: cm(`"labels":{"x":"1"}`, `{"a":"9"}`), manager: "b", registry: true},
		{name: "apply and update entries of one manager", live: cm(mfs(kubectlAB, upd("kubectl", `{"f:data":{"f:c":{}}}`)), `{"a":"1","b":"2","c":"3"}`),
			updated: cm("", `{"a":"1","b":"5","c":"4","d":"1"}`), manager: "kubectl", registry: true},
		{name: "updated without managedFields takes live's", live: cm(mfs(aOwnsAB), `{"a":"1","b":"2"}`), updated: cm("", `{"a":"1","b":"3"}`), manager: "b"},
		{name: "updated's own managedFields win", live: cm(mfs(aOwnsAB), `{"a":"1","b":"2"}`), updated: cm(mfs(upd("z", `{"f:data":{"f:b":{}}}`)), `{"a":"1","b":"3"}`), manager: "b"},
		{name: "untracked object stays untracked", live: cm("", `{"a":"1"}`), updated: cm("", `{"a":"2"}`), manager: "b"},
		{name: "untracked object without uid is tracked", live: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1"}}`,
			updated: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"2"}}`, manager: "b"},
		{name: "entries with equal or no times sort by manager", live: cm(mfs(upd("z", `{"f:data":{"f:a":{}}}`), upd("y", `{"f:data":{"f:b":{}}}`),
			`{"manager":"x","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:c":{}}}}`,
			`{"operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:e":{}}}}`), `{"a":"1","b":"2","c":"3","e":"5"}`),
			updated: cm("", `{"a":"1","b":"2","c":"3","d":"4","e":"5"}`), manager: "w", registry: true},
		{name: "ten update managers are not capped", live: cm(mfs(ten...), tenData), updated: cm("", `{"k0":"0","k1":"1","k2":"2","k3":"3","k4":"4","k5":"5","k6":"6","k7":"7","k8":"8","k9":"9"}`), manager: "m9", registry: true, second: "m3"},
		{name: "ownerReferences and finalizers change", live: cm(full+`,`+mfs(upd("a", `{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/f\"":{},"v:\"example.com/g\"":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"o-1\"}":{}}}}`)), `{}`),
			updated: cm(`"finalizers":["example.com/g","example.com/h"],"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"o-1","controller":false},{"apiVersion":"v1","kind":"Pod","name":"q","uid":"o-2"}]`, `{}`), manager: "b", registry: true},
		{name: "fieldsV1 in a form the library rewrites", live: cm(mfs(upd("a", `{".":{},"f:data":{"f:a":{}},"f:metadata":{".":{}}}`)), `{"a":"1","b":"2"}`), updated: cm("", `{"a":"1","b":"3"}`), manager: "b", registry: true},
		{name: "an entry owning managedFields loses them", live: cm(mfs(aOwnsA, upd("odd", `{"f:metadata":{"f:managedFields":{}}}`)), `{"a":"1"}`), updated: cm("", `{"a":"2"}`), manager: "b", registry: true},
		{name: "an entry owning managedFields and more", live: cm(mfs(upd("odd", `{"f:data":{"f:a":{}},"f:metadata":{"f:managedFields":{}}}`)), `{"a":"1"}`), updated: cm("", `{"a":"1","b":"2"}`), manager: "b", registry: true},
		{name: "live's managedFields malformed, updated's used", live: cm(mfs(`{"manager":"x","operation":"Bogus"}`), `{"a":"1"}`), updated: cm(mfs(aOwnsA), `{"a":"2"}`), manager: "b"},
		{name: "live's managedFields an empty list", live: cm(`"managedFields":[]`, `{"a":"1"}`), updated: cm(mfs(aOwnsA), `{"a":"2"}`), manager: "b"},
		{name: "names needing escapes", live: cm(`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p","uid":"o\"1<&>"}],`+mfs(upd("a<é>&", `{"f:data":{"f:a\"b\\c<&>é":{}}}`)), `{"a\"b\\c<&>é":"1"}`),
			updated: cm(`"ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"q","uid":"o\"1<&>"}]`, `{"a\"b\\c<&>é":"2","\u2028x":"y"}`), manager: "w<\"é>", registry: true},
		{name: "numbers as float64 elsewhere in metadata", live: cm(`"generation":3,`+mfs(aOwnsA), `{"a":"1"}`), updated: cm(`"generation":3`, `{"a":"2"}`), manager: "b", registry: true},
		{name: "secret create", kind: "Secret", updated: `{"apiVersion":"v1","kind":"Secret","metadata":{` + cmMeta + `},"type":"Opaque","data":{"k":"dg=="},"stringData":{"s":"v"}}`, manager: "curl"},
		{name: "secret update", kind: "Secret", live: `{"apiVersion":"v1","kind":"Secret","metadata":{` + cmMeta + `,` + mfs(upd("a", `{"f:data":{".":{},"f:k":{}},"f:type":{}}`)) + `},"type":"Opaque","data":{"k":"dg=="}}`,
			updated: `{"apiVersion":"v1","kind":"Secret","metadata":{` + cmMeta + `},"type":"Opaque","data":{"k":"dw==","j":"dg=="},"immutable":false}`, manager: "b", registry: true},
		{name: "namespace create", kind: "Namespace", updated: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","uid":"u","labels":{"kubernetes.io/metadata.name":"n"}},"spec":{"finalizers":["kubernetes"]}}`, manager: "curl", library: true},
		{name: "namespace update", kind: "Namespace", live: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","uid":"u","labels":{"a":"1"},` + mfs(upd("a", `{"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`)) + `},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`,
			updated: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","uid":"u","labels":{"a":"2","b":"1"}},"spec":{"finalizers":["kubernetes"]},"status":{"phase":"Active"}}`, manager: "b", registry: true},
		{name: "widget create", kind: "widget", updated: widget("", wSpec), manager: "curl"},
		{name: "widget create, integers int64", kind: "widget", updated: widget("", wSpec), manager: "curl", ints: true},
		{name: "widget update", kind: "widget", live: widget(mfs(wEntry("a", wFields)), wSpec), updated: widget("", wSpec2), manager: "b", registry: true},
		{name: "widget update, integers int64", kind: "widget", live: widget(mfs(wEntry("a", wFields)), wSpec), updated: widget("", wSpec2), manager: "b", registry: true, ints: true},
		{name: "widget update of status", kind: "widget", live: widget(mfs(wEntry("a", wFields)), wSpec), updated: strings.TrimSuffix(widget("", wSpec), "}") + `,"status":{"ready":true}}`, manager: "b", registry: true, ints: true},
		{name: "deduced create", kind: "deduced", updated: thing(`"labels":{"a":"1"}`, `{"list":[1,2],"m":{"x":"1"},"s":"v"}`), manager: "curl"},
		{name: "deduced update", kind: "deduced", live: thing(mfs(tEntry("a", `{"f:spec":{".":{},"f:list":{},"f:m":{".":{},"f:x":{}},"f:s":{}}}`)), `{"list":[1,2],"m":{"x":"1"},"s":"v"}`),
			updated: thing("", `{"list":[3],"m":{"x":"1","y":"2"}}`), manager: "b", registry: true},
	}
}

func TestUpdateFastPathMatchesLibrary(t *testing.T) {
	ms := managerSet{}
	for _, c := range updateCases() {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			live, updated := decode(t, c.live, c.ints), decode(t, c.updated, c.ints)
			if c.registry {
				updated["metadata"].(map[string]any)["managedFields"] = live["metadata"].(map[string]any)["managedFields"]
			}
			if answered := differ(t, m, live, updated, c.manager); answered == c.library {
				t.Fatalf("the fast path answered %v, want %v", answered, !c.library)
			}
			// The result again as live, with a further change by another manager.
			out, err := m.Update(live, updated, c.manager)
			if err != nil {
				t.Fatal(err)
			}
			next := jsonCopy(out).(map[string]any)
			if d, ok := next["data"].(map[string]any); ok {
				d["later"] = "1"
			} else {
				md := next["metadata"].(map[string]any)
				a, _ := md["annotations"].(map[string]any)
				if a == nil {
					a = map[string]any{}
				}
				a["later"] = "1"
				md["annotations"] = a
			}
			second := c.second
			if second == "" {
				second = "later"
			}
			if !differ(t, m, out, next, second) {
				t.Fatal("the fast path declined the second write")
			}
		})
	}
}

func TestUpdateFastPathDeclines(t *testing.T) {
	entry := func(fields string) string {
		return `{` + cmMeta + `,"managedFields":[` + fields + `]}`
	}
	obj := func(meta string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":` + meta + `,"data":{"a":"1"}}`
	}
	live := cm(mfs(aOwnsA), `{"a":"1"}`)
	eleven := []string{}
	for i := 0; i < 10; i++ {
		eleven = append(eleven, upd(fmt.Sprintf("m%d", i), fmt.Sprintf(`{"f:data":{"f:k%d":{}}}`, i)))
	}
	for _, c := range []struct {
		name          string
		live, updated string
	}{
		{"reset: an empty list", live, obj(`{` + cmMeta + `,"managedFields":[]}`)},
		{"managedFields not a list", live, obj(`{` + cmMeta + `,"managedFields":{}}`)},
		{"managedFields null", live, obj(`{` + cmMeta + `,"managedFields":null}`)},
		{"entry not an object", live, obj(entry(`"x"`))},
		{"empty entry", live, obj(entry(`{}`))},
		{"bad operation", live, obj(entry(`{"manager":"a","operation":"Patch","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"missing fieldsType", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","fieldsV1":{}}`))},
		{"other fieldsType", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV2","fieldsV1":{}}`))},
		{"unknown key", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{},"x":1}`))},
		{"manager not a string", live, obj(entry(`{"manager":1,"operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"fractional time", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","time":"2020-01-01T00:00:00.5Z","fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"time with an offset", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","time":"2020-01-01T01:00:00+01:00","fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"null time", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","time":null,"fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"zero time", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","time":"0001-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{}}`))},
		{"fieldsV1 null", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":null}`))},
		{"unknown path element", live, obj(entry(upd("a", `{"f:data":{"x:y":{}}}`)))},
		{"bad key element", live, obj(entry(upd("a", `{"f:data":{"k:{bad":{}}}`)))},
		{"dot with content", live, obj(entry(upd("a", `{"f:data":{".":{"f:a":{}},"f:a":{}}}`)))},
		{"non-object in fieldsV1", live, obj(entry(upd("a", `{"f:data":{"f:a":true}}`)))},
		{"one path element twice", live, obj(entry(upd("a", `{"f:data":{"k:{\"a\":1,\"b\":2}":{},"k:{\"b\":2,\"a\":1}":{"f:x":{}}}}`)))},
		{"other apiVersion", live, obj(entry(`{"manager":"a","operation":"Update","apiVersion":"v1beta1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{}}}}`))},
		{"duplicate managers", live, obj(entry(aOwnsA + `,` + aOwnsAB))},
		{"duplicate apply managers at two versions", live, obj(entry(kubectlAB + `,` + strings.Replace(kubectlAB, `"v1"`, `"v2"`, 1)))},
		{"eleven update managers", cm(mfs(eleven...), `{}`), obj(entry(strings.Join(eleven, ",")))},
		{"last-applied annotation", live, obj(`{` + cmMeta + `,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}}`)},
		{"last-applied annotation on live", cm(`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{}`), obj(`{` + cmMeta + `}`)},
		{"field not in the schema", live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{` + cmMeta + `},"bogus":1}`},
		{"other kind", live, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{` + cmMeta + `}}`},
		{"live of another kind", `{"apiVersion":"v1","kind":"Secret","metadata":{` + cmMeta + `}}`, obj(`{` + cmMeta + `}`)},
		{"no metadata", live, `{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1"}}`},
		{"metadata not an object", live, `{"apiVersion":"v1","kind":"ConfigMap","metadata":"m"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := managerFor(t, "ConfigMap")
			l, u := decode(t, c.live, false), decode(t, c.updated, false)
			if differ(t, m, l, u, "b") {
				t.Fatal("the fast path answered")
			}
		})
	}
	t.Run("manager name not UTF-8", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		if differ(t, m, nil, decode(t, cm("", `{"a":"1"}`), false), "b\xff") {
			t.Fatal("the fast path answered")
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		u := decode(t, cm("", `{}`), false)
		u["data"].(map[string]any)["a"] = "\xff"
		if differ(t, m, nil, u, "b") {
			t.Fatal("the fast path answered")
		}
	})
	// Not a decline: a typed nil map is read from the copy, as null.
	t.Run("typed nil map", func(t *testing.T) {
		m := managerFor(t, "ConfigMap")
		u := decode(t, cm("", `{}`), false)
		u["data"] = map[string]any(nil)
		if !differ(t, m, nil, u, "b") {
			t.Fatal("the fast path declined")
		}
	})
}

// TestUpdateFastPathClock pins the writer's time: the entry carries the
// injected clock's second, in UTC.
func TestUpdateFastPathClock(t *testing.T) {
	m := managerFor(t, "ConfigMap")
	m.clock = func() time.Time { return time.Date(2030, 1, 2, 4, 5, 6, 7e8, time.FixedZone("x", 3600)) }
	out, ok := m.fastUpdate(nil, decode(t, cm("", `{"a":"1"}`), false), "curl")
	if !ok {
		t.Fatal("declined")
	}
	e := out["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)
	if e["time"] != "2030-01-02T03:05:06Z" {
		t.Fatalf("time %v", e["time"])
	}
}

// TestUpdateFastPathConcurrent: one Manager's fast path from many goroutines
// (run with -race: the shared typed value of a create is only read).
func TestUpdateFastPathConcurrent(t *testing.T) {
	for _, kind := range []string{"ConfigMap", "widget"} {
		m := managerFor(t, kind)
		var src string
		if kind == "widget" {
			src = `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":1,"keyed":[{"name":"a","v":"1"}]}}`
		} else {
			src = cm("", `{"a":"1"}`)
		}
		concurrently(t, 8, func(i int) error {
			created, err := m.Update(nil, decode(t, src, i%2 == 0), "c")
			if err != nil {
				return err
			}
			next := jsonCopy(created).(map[string]any)
			next["metadata"].(map[string]any)["labels"] = map[string]any{"i": fmt.Sprint(i)}
			_, err = m.Update(created, next, "d")
			return err
		})
	}
}

// concurrently runs fn(0) … fn(n-1) at once and fails t on the first error.
func concurrently(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	done := make(chan error, n)
	for i := range n {
		go func() { done <- fn(i) }()
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// TestAddPrefixes: addPrefixes gives what inserting every prefix of every
// path gives (its definition), for the field sets of 2,000 generated objects
// of the fuzz kinds and for a set with an empty child, which holds no path.
func TestAddPrefixes(t *testing.T) {
	byDefinition := func(s *fieldpath.Set) *fieldpath.Set {
		out := fieldpath.NewSet()
		s.Iterate(func(p fieldpath.Path) {
			for i := 1; i <= len(p); i++ {
				out.Insert(p[:i])
			}
		})
		return out
	}
	check := func(name string, s *fieldpath.Set) {
		t.Helper()
		got := &fieldpath.Set{}
		addPrefixes(got, s)
		if want := byDefinition(s); !got.Equals(want) {
			t.Fatalf("%s: addPrefixes of\n%v\ngives\n%v\nwant\n%v", name, s, got, want)
		}
	}

	hollow := fieldpath.NewSet(fieldpath.MakePathOrDie("a", "b"))
	hollow.Children.Descend(fieldpath.PathElement{FieldName: ptrTo("empty")})
	hollow.Children.Descend(fieldpath.PathElement{FieldName: ptrTo("a")}).Children.Descend(fieldpath.PathElement{FieldName: ptrTo("c")})
	check("a set with empty children", hollow)
	check("the empty set", fieldpath.NewSet())

	kinds := fuzzKinds(t)
	checked := 0
	eachDraw(kinds, 17, 2000, 64, func(i int, in *fuzzBytes, k *fuzzKind) {
		tv, err := k.m.tc.ObjectToTyped(&unstructured.Unstructured{Object: k.object(in)}, typed.AllowDuplicates)
		if err != nil {
			return // an object the schema refuses has no field set
		}
		leaves, err := tv.ToFieldSet()
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("object %d", i), leaves)
		checked++
	})
	if checked < 1000 {
		t.Fatalf("only %d of 2,000 generated objects had a field set", checked)
	}
}

func ptrTo(s string) *string { return &s }
