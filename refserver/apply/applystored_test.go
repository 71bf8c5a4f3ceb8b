package apply

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// storedApply is what storedVsApply found for one apply.
type storedApply struct {
	outMF      []byte // ApplyStored's managedFields, where it answered
	answered   bool   // ApplyStored answered
	firstApply bool   // Apply was answered by plainApply's first-apply walk
	// soleUpdate: live's list was one Update entry (never the applier's
	// own, an Apply one) of a named writer, of no subresource, owning
	// exactly live's fields as the typed path lists them.
	soleUpdate bool
	listed     int // the entries of Apply's answer (0 where it failed)
}

// due is where ApplyStored is to answer, live's list being json.Marshal's
// bytes: plainApply's first apply onto the one entry a writer's create and
// updates leave, which keeps that entry and lists the applier's before it.
func (s storedApply) due() bool {
	return s.firstApply && s.soleUpdate && s.listed == 2
}

// storedVsApply checks ApplyStored against its contract: no input changes;
// where it answers, liveMF decodes, and Apply, given live with that list as
// its managedFields, succeeds with the same object (the same JSON and the
// same Go types), outMF byte for byte json.Marshal's of Apply's list, in a
// slice of its own; Apply with force gives the same answer. m's clock must
// be fixed, so that both stamp the same second.
func storedVsApply(t testing.TB, m *Manager, live map[string]any, liveMF []byte, applied map[string]any, manager string) storedApply {
	t.Helper()
	if m.clock == nil {
		t.Fatal("storedVsApply compares the Apply entry's time exactly: give the Manager a fixed clock")
	}
	liveBefore, appliedBefore, mfBefore := typedCopy(live), typedCopy(applied), bytes.Clone(liveMF)
	heard := ""
	m.walked = func(which string) { heard = which }
	defer func() { m.walked = nil }()
	out, outMF, ok := m.ApplyStored(live, liveMF, applied, manager)
	if !reflect.DeepEqual(live, liveBefore) || !reflect.DeepEqual(applied, appliedBefore) || !bytes.Equal(liveMF, mfBefore) {
		t.Fatalf("ApplyStored changed its inputs")
	}
	if ok != (heard == "stored first apply") {
		t.Fatalf("ApplyStored answered %v but reported %q", ok, heard)
	}
	var list any
	if err := json.Unmarshal(liveMF, &list); err != nil {
		if ok {
			t.Fatalf("ApplyStored answered for managedFields that do not decode (%v): %q", err, liveMF)
		}
		return storedApply{}
	}
	heard = ""
	want, err := m.Apply(withManagedFields(live, list), applied, manager, false)
	got := storedApply{answered: ok, firstApply: heard == "first apply", soleUpdate: soleWriterEntry(m, live, list)}
	if err == nil {
		md, _ := want["metadata"].(map[string]any)
		l, _ := md["managedFields"].([]any)
		got.listed = len(l)
	}
	if !ok {
		return got
	}
	if err != nil {
		t.Fatalf("ApplyStored answered where Apply fails: %v", err)
	}
	wantOut, wantMF := asStored(t, want)
	gotJSON, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("ApplyStored's answer does not encode: %v", err)
	}
	if wantJSON, _ := json.Marshal(wantOut); !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("ApplyStored's object differs from Apply's\nstored: %s\napply:  %s", gotJSON, wantJSON)
	}
	if !reflect.DeepEqual(out, wantOut) {
		t.Fatalf("ApplyStored's object has Go types other than Apply's\nstored: %#v\napply:  %#v", out, wantOut)
	}
	if !bytes.Equal(outMF, wantMF) {
		t.Fatalf("ApplyStored's managedFields differ from Apply's\nstored: %s\napply:  %s", outMF, wantMF)
	}
	// Nothing conflicts, so force changes nothing.
	if forced, err := m.Apply(withManagedFields(live, list), applied, manager, true); err != nil || !reflect.DeepEqual(forced, want) {
		t.Fatalf("Apply with force gives another answer (%v)\nforced: %s\nwithout: %s", err, dump(forced), dump(want))
	}
	// outMF is a slice of its own: the caller may write to it.
	got.outMF = bytes.Clone(outMF)
	clear(outMF[:cap(outMF)])
	if !bytes.Equal(liveMF, mfBefore) {
		t.Fatalf("ApplyStored's managedFields share their bytes with liveMF")
	}
	return got
}

// soleWriterEntry reports whether list is one Update entry of a named
// writer, of no subresource, whose fieldsV1 is a create's of live: every
// field and the maps holding them, less the server's metadata, as the
// typed path (addedFromEmpty) lists them.
func soleWriterEntry(m *Manager, live map[string]any, list any) bool {
	l, _ := list.([]any)
	if len(l) != 1 {
		return false
	}
	e, _ := l[0].(map[string]any)
	writer, _ := e["manager"].(string)
	if _, sub := e["subresource"]; sub || e["operation"] != "Update" || writer == "" {
		return false
	}
	c, ok := jsonCopy(live).(map[string]any)
	if !ok {
		return false
	}
	tv, err := m.typedLive(c, false)
	if err != nil {
		return false
	}
	added, err := addedFromEmpty(tv)
	if err != nil {
		return false
	}
	fields, ok := setToFields(added.Difference(stripSet))
	return ok && reflect.DeepEqual(e["fieldsV1"], fields)
}

// TestApplyStored: applies onto objects a writer created (and updated) in
// 2020, their managedFields as stored: ApplyStored answers (as Apply does,
// storedVsApply checks, the applier's entry first, stamped now where the
// object changed, then the stored entry's bytes) or declines as each case
// says.
func TestApplyStored(t *testing.T) {
	ms, pastOf := managerSet{}, managerSet{}
	// The load generator's ConfigMap, as its writer creates and updates it.
	loaded := func(data string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00007","namespace":"bench","uid":"u-7","resourceVersion":"12",` +
			`"creationTimestamp":"2026-01-02T03:04:05Z","labels":{"load":"apiconform","shard":"7"}},"data":` + data + `}`
	}
	created, updated := loaded(`{"index":"7","payload":"0123456789abcdef"}`), loaded(`{"index":"7","payload":"updated-7","patched":"7"}`)
	bench := []string{created, updated}
	// A configuration of the load generator's applier: metadata fields
	// after the name, and data ("" for none).
	config := func(meta, data string) string {
		s := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00007"` + meta + `}`
		if data != "" {
			s += `,"data":` + data
		}
		return s + `}`
	}
	widget := func(spec string) string {
		return `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"d","uid":"u-1"},"spec":` + spec + `}`
	}
	thing := func(spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d","uid":"u-1"},"spec":` + spec + `}`
	}
	cases := []struct {
		name          string
		kind          string   // "" is ConfigMap
		writes        []string // what the writer wrote in 2020: a create, then updates
		writer        string   // "" is "w"
		appliedBefore string   // what the applier applied in 2020 after them ("" nothing)
		liveFloats    bool     // live as the registry decodes it: numbers float64
		// stored changes the bytes of live's list (nil: as json.Marshal
		// writes them).
		stored    func(t testing.TB, mf []byte) []byte
		defaulted bool // the Manager defaults objects (Default set)
		applied   string
		manager   string
		answers   bool
		stamped   bool // the applier's entry has a time (now): the object changed
	}{
		{name: "the bench's first apply", writes: bench, applied: config("", `{"applied":"1"}`), manager: "apiconform-load", answers: true, stamped: true},
		{name: "onto a created object", writes: bench[:1], applied: config("", `{"applied":"1"}`), manager: "apiconform-load", answers: true, stamped: true},
		{name: "live's values: shared, nothing changes, no time", writes: bench, applied: config(`,"labels":{"load":"apiconform"}`, `{"index":"7"}`),
			manager: "apiconform-load", answers: true},
		{name: "a label of its own", writes: bench, applied: config(`,"labels":{"own":"1"}`, ""), manager: "kubectl", answers: true, stamped: true},
		{name: "the server's metadata and a field", writes: bench, applied: config(`,"namespace":"bench","uid":"u-7"`, `{"applied":"1"}`),
			manager: "kubectl", answers: true, stamped: true},
		{name: "the writer applies: its Apply entry is another manager", writes: bench, applied: config("", `{"applied":"1"}`), manager: "w", answers: true, stamped: true},
		{name: "an unnamed applier is unknown", writes: bench, applied: config("", `{"applied":"1"}`), manager: "", answers: true, stamped: true},
		{name: "no apiVersion and kind in the configuration", writes: bench, applied: `{"metadata":{"name":"cm-00007"},"data":{"applied":"1"}}`,
			manager: "kubectl", answers: true, stamped: true},
		{name: "an entry without a time", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl", answers: true, stamped: true,
			stored: rewritten(func(l []any) []any { delete(firstEntry(l), "time"); return l })},
		{name: "keys and the applier's name needing escapes", writes: []string{cm("", `{"a\"b\\c<&>é":"1"}`)}, writer: "wé", applied: acm("", `{"\u2028x":"<y>"}`),
			manager: "a<\"é>&\u2028", answers: true, stamped: true},
		{name: "a writer's name needing escapes", writes: bench, writer: "w<\"\u2028>", applied: config("", `{"applied":"1"}`),
			manager: "kubectl", answers: true, stamped: true},
		{name: "a widget", kind: "widget", writes: []string{widget(`{"size":1,"name":"n","labels":{"l":"1"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":2.5}}}`)},
			applied: widget(`{"labels":{"m":"2"},"free":{"o":"x"}}`), manager: "a", answers: true, stamped: true},
		{name: "a widget read back, its integers float64", kind: "widget", writes: []string{widget(`{"size":1,"labels":{"l":"1"}}`)}, liveFloats: true,
			applied: widget(`{"size":1,"labels":{"m":"2"}}`), manager: "a", answers: true, stamped: true},
		{name: "a widget's integer applied as it is", kind: "widget", writes: []string{widget(`{"size":1}`)}, liveFloats: true,
			applied: widget(`{"size":1}`), manager: "a", answers: true},
		{name: "another name: the server's metadata, no conflict", writes: bench, applied: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00008"},"data":{"applied":"1"}}`,
			manager: "kubectl", answers: true, stamped: true},
		{name: "a thing without a schema", kind: "deduced", writes: []string{thing(`{"s":2,"m":{"x":"1"}}`)}, applied: thing(`{"m":{"y":"2"}}`),
			manager: "a", answers: true, stamped: true},

		{name: "a value of the writer's changed: a conflict", writes: bench, applied: config("", `{"index":"8"}`), manager: "apiconform-load"},
		{name: "a label of the writer's changed: a conflict", writes: bench, applied: config(`,"labels":{"shard":"8"}`, ""), manager: "kubectl"},
		{name: "the writer's own value changed by its Apply: a conflict", writes: bench, applied: config("", `{"index":"8"}`), manager: "w"},
		{name: "a new field and a conflict", writes: bench, applied: config("", `{"applied":"1","payload":"p"}`), manager: "kubectl"},
		{name: "the applier's entry is there: an unchanged re-apply", writes: bench, appliedBefore: config("", `{"applied":"1"}`),
			applied: config("", `{"applied":"1"}`), manager: "apiconform-load"},
		{name: "the applier's entry is there: a changed configuration", writes: bench, appliedBefore: config("", `{"applied":"1"}`),
			applied: config("", `{"applied":"2"}`), manager: "apiconform-load"},
		{name: "two writers' entries", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any {
				return append(l, map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:other": map[string]any{}}},
					"manager": "z", "operation": "Update"})
			})},
		{name: "an entry without a manager", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { delete(firstEntry(l), "manager"); return l })},
		{name: "an entry with an empty manager", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { firstEntry(l)["manager"] = ""; return l })},
		{name: "another applier's Apply entry", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { firstEntry(l)["operation"] = "Apply"; return l })},
		{name: "an entry of a subresource", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { firstEntry(l)["subresource"] = "status"; return l })},
		{name: "an entry of another apiVersion", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { firstEntry(l)["apiVersion"] = "v2"; return l })},
		{name: "an entry of a fractional time", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any { firstEntry(l)["time"] = "2020-05-06T07:08:09.5Z"; return l })},
		{name: "an entry owning fewer fields than live", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any {
				delete(firstEntry(l)["fieldsV1"].(map[string]any)["f:data"].(map[string]any), "f:index")
				return l
			})},
		{name: "an entry owning more fields than live", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func(l []any) []any {
				firstEntry(l)["fieldsV1"].(map[string]any)["f:data"].(map[string]any)["f:gone"] = map[string]any{}
				return l
			})},
		{name: "no entries", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: rewritten(func([]any) []any { return []any{} })},
		{name: "whitespace", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: func(t testing.TB, mf []byte) []byte {
				var b bytes.Buffer
				if err := json.Indent(&b, mf, "", "\t"); err != nil {
					t.Fatal(err)
				}
				return b.Bytes()
			}},
		{name: "keys reordered", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: func(t testing.TB, mf []byte) []byte {
				s := strings.Replace(string(mf), `"manager":"w","operation":"Update"`, `"operation":"Update","manager":"w"`, 1)
				if s == string(mf) {
					t.Fatal("no change")
				}
				return []byte(s)
			}},
		{name: "managedFields that do not decode", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kubectl",
			stored: func(_ testing.TB, mf []byte) []byte { return mf[:len(mf)-1] }},
		{name: "the configuration carries managedFields", writes: bench, applied: config(`,"managedFields":[]`, `{"applied":"1"}`), manager: "kubectl"},
		{name: "kubectl's last-applied annotation on live", writes: []string{cm(`"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{"a":"1"}`)},
			applied: acm("", `{"applied":"1"}`), manager: "kubectl"},
		{name: "kubectl's last-applied annotation in the configuration", writes: bench,
			applied: config(`,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{"applied":"1"}`), manager: "kubectl"},
		{name: "a Manager that defaults", writes: bench, defaulted: true, applied: config("", `{"applied":"1"}`), manager: "kubectl"},
		{name: "only the name: no entry of the applier's", writes: bench, applied: config("", ""), manager: "kubectl"},
		{name: "only the server's metadata: no entry of the applier's", writes: bench, applied: config(`,"namespace":"bench","uid":"u-7"`, ""), manager: "kubectl"},
		{name: "an empty map where live has one: the applier owns it", writes: bench, applied: config("", `{}`), manager: "kubectl", answers: true},
		{name: "another kind", writes: bench, applied: `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"cm-00007"},"data":{"a":"MQ=="}}`, manager: "kubectl"},
		{name: "a manager that is not UTF-8", writes: bench, applied: config("", `{"applied":"1"}`), manager: "kube\xffctl"},
		{name: "a list in the configuration", kind: "deduced", writes: []string{thing(`{"s":2}`)}, applied: thing(`{"list":["a"]}`), manager: "a"},
		{name: "a list in live", kind: "deduced", writes: []string{thing(`{"s":2,"list":["a"]}`)}, applied: thing(`{"m":{"y":"2"}}`), manager: "a"},
		{name: "a scalar of live's becomes a map", kind: "deduced", writes: []string{thing(`{"s":"x"}`)}, applied: thing(`{"s":{"a":"b"}}`), manager: "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			if c.defaulted {
				m = managerFor(t, cmp.Or(c.kind, "ConfigMap"))
				m.Default = func(map[string]any) {}
			}
			m.clock = func() time.Time { return storedNow }
			past := pastOf.of(t, c.kind)
			past.clock = func() time.Time { return storedPast }
			var live map[string]any
			for _, s := range c.writes {
				next := decode(t, s, true)
				if live != nil { // the registry hands live's managedFields on
					next = withManagedFields(next, live["metadata"].(map[string]any)["managedFields"])
				}
				var err error
				if live, err = past.Update(live, next, cmp.Or(c.writer, "w")); err != nil {
					t.Fatal(err)
				}
			}
			if c.appliedBefore != "" {
				var err error
				if live, err = past.Apply(live, decode(t, c.appliedBefore, true), c.manager, false); err != nil {
					t.Fatal(err)
				}
			}
			if c.liveFloats {
				live = decode(t, dump(live), false)
			}
			live, liveMF := asStored(t, live)
			if c.stored != nil {
				liveMF = c.stored(t, liveMF)
			}
			got := storedVsApply(t, m, live, liveMF, decode(t, c.applied, true), c.manager)
			if got.answered != c.answers {
				t.Fatalf("ApplyStored answered %v, want %v (Apply's first-apply walk answered: %v)\nmanagedFields: %s", got.answered, c.answers, got.firstApply, liveMF)
			}
			if !got.answered {
				return
			}
			// The applier's entry first, then the stored entry's bytes.
			var list []map[string]any
			if err := json.Unmarshal(got.outMF, &list); err != nil || len(list) != 2 {
				t.Fatalf("managedFields %s (%v): want the applier's entry and the stored one", got.outMF, err)
			}
			own := list[0]
			if own["manager"] != cmp.Or(c.manager, "unknown") || own["operation"] != "Apply" {
				t.Fatalf("the first entry is %v, want %q's Apply entry", own, cmp.Or(c.manager, "unknown"))
			}
			if stamp, stamped := own["time"]; stamped != c.stamped || stamped && stamp != storedNowStamp {
				t.Fatalf("the applier's entry has time %v, want stamped %v (at %s)", stamp, c.stamped, storedNowStamp)
			}
			if !bytes.HasSuffix(got.outMF, liveMF[1:]) {
				t.Fatalf("the stored entry's bytes changed:\n%s\n%s", got.outMF, liveMF)
			}
		})
	}
}

// TestApplyStoredConcurrent: one Manager's ApplyStored from many
// goroutines (run with -race: the walks' buffers come from a pool) gives
// each the answer it gives alone, which is Apply's.
func TestApplyStoredConcurrent(t *testing.T) {
	m, live, liveMF := storedByW(t)
	const n = 8
	configs, wantMF := make([]map[string]any, n), make([][]byte, n)
	for i := range n {
		config := acm(fmt.Sprintf(`"labels":{"l%d":"1"}`, i), fmt.Sprintf(`{"c%d":"1"}`, i)) // fields of its own: stamped
		if i%2 == 0 {
			config = acm("", `{"a":"1"}`) // live's value: no time
		}
		configs[i] = decode(t, config, true)
		got := storedVsApply(t, m, live, liveMF, configs[i], fmt.Sprintf("a%d", i))
		if !got.answered {
			t.Fatalf("apply %d declined", i)
		}
		wantMF[i] = got.outMF
	}
	concurrently(t, n, func(i int) error {
		for range 50 {
			_, outMF, ok := m.ApplyStored(live, liveMF, configs[i], fmt.Sprintf("a%d", i))
			if !ok || !bytes.Equal(outMF, wantMF[i]) {
				return fmt.Errorf("apply %d: answered %v with %s, want %s", i, ok, outMF, wantMF[i])
			}
		}
		return nil
	})
}

// drawApplied draws an applier's configuration for live: a field of its
// own (which is what answers most), a copy of some of live's fields (which
// changes nothing: an entry without a time), or one of k's objects (which
// mostly changes a field the writer owns: a conflict); now and then with a
// label, without apiVersion and kind, uid or namespace, or with
// managedFields.
func drawApplied(in *fuzzBytes, k *fuzzKind, live map[string]any) map[string]any {
	var applied map[string]any
	switch in.pick(5) {
	case 0, 1:
		own := map[string]any{"applied": []string{"1", "2"}[in.pick(2)]}
		applied = map[string]any{"apiVersion": k.apiVersion, "kind": live["kind"], "metadata": map[string]any{"name": "c", "namespace": "d"}}
		if k.apiVersion == "v1" {
			applied["data"] = own
		} else {
			applied["spec"] = map[string]any{"labels": own}
		}
	case 2, 3:
		applied = typedCopy(live)
		for _, top := range []string{"data", "spec", "status"} {
			if in.pick(3) == 0 {
				delete(applied, top)
			}
		}
	default:
		applied = k.object(in)
	}
	md := applied["metadata"].(map[string]any)
	switch in.pick(10) {
	case 0:
		md["labels"] = map[string]any{"own": "1"}
	case 1:
		delete(applied, "apiVersion")
		delete(applied, "kind")
	case 2:
		delete(md, "uid")
		delete(md, "namespace")
	case 3:
		md["managedFields"] = []any{}
	}
	return applied
}

// drawStoredApply draws an apply as the registry will hand it to
// ApplyStored: live and its stored managedFields as drawStored draws them
// (its update left aside), drawApplied's configuration and an applier;
// now and then live's first entry is made one the rule turns on (the
// stored bytes still json.Marshal's), which nothing else draws often.
func drawStoredApply(t testing.TB, in *fuzzBytes, k *fuzzKind, past *Manager) (live map[string]any, liveMF []byte, applied map[string]any, manager string, ok bool) {
	if live, liveMF, _, _, ok = drawStored(t, in, k, past); !ok {
		return nil, nil, nil, "", false
	}
	applied = drawApplied(in, k, live)
	manager = []string{"a", "a", "apiconform-load", "w", ""}[in.pick(5)]
	change := in.pick(16) // 0, as when in is spent: none
	liveMF = reencode(t, liveMF, func(l []any) []any {
		if len(l) == 0 || change == 0 || change > 6 {
			return l
		}
		e := l[0].(map[string]any)
		switch change {
		case 1:
			delete(e, "manager")
		case 2:
			e["manager"] = ""
		case 3:
			e["operation"] = "Apply"
		case 4:
			e["subresource"] = "status"
		case 5:
			delete(e, "time")
		case 6: // another writer owning the same fields
			other := maps.Clone(e)
			other["manager"] = "z"
			l = append(l, other)
		}
		return l
	})
	return live, liveMF, applied, manager, true
}

// TestApplyStoredGenerated: 2,000 applies of generated configurations to
// generated objects stored with their managedFields as json.Marshal writes
// them: ApplyStored meets its contract, and answers exactly where Apply is
// answered by plainApply's first apply onto the one Update entry of a named
// writer owning live's fields, keeping it and listing the applier's; over
// 400 of them, stamped and not (so it cannot pass by declining).
func TestApplyStoredGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	past := pastManagers(t, kinds)
	answered, stamped, first := 0, 0, 0
	eachDraw(kinds, 59, 2000, 128, func(i int, in *fuzzBytes, k *fuzzKind) {
		live, liveMF, applied, manager, ok := drawStoredApply(t, in, k, past[k.m])
		if !ok {
			return
		}
		got := storedVsApply(t, k.m, live, liveMF, applied, manager)
		if got.firstApply {
			first++
		}
		if got.answered != got.due() {
			t.Fatalf("draw %d: ApplyStored answered %v; first apply %v, one writer's entry %v, %d entries listed\nlive: %s\nmanagedFields: %s\napplied: %s\nmanager %q",
				i, got.answered, got.firstApply, got.soleUpdate, got.listed, dump(live), liveMF, dump(applied), manager)
		}
		if got.answered {
			answered++
			if bytes.Contains(got.outMF, []byte(storedNowStamp)) {
				stamped++
			}
		}
	})
	t.Logf("ApplyStored answered %d of 2,000 applies (%d stamped now, %d not); plainApply's first apply answered %d", answered, stamped, answered-stamped, first)
	if answered < 400 || stamped < 150 || answered-stamped < 50 {
		t.Fatalf("ApplyStored answered %d of 2,000 applies (%d stamped); want over 400 (150 stamped, 50 not)", answered, stamped)
	}
}

// mangleStored is mf as the registry might hold bytes that are not
// json.Marshal's: unchanged when in is spent (so a draw's own bytes, as a
// seed, keep them), else one byte changed, dropped or added, indented, or
// its entries' keys in another order.
func mangleStored(in *fuzzBytes, mf []byte) []byte {
	if len(mf) == 0 {
		return mf
	}
	at := func() int { return (in.pick(256)<<8 | in.pick(256)) % len(mf) }
	switch in.pick(6) {
	case 1:
		out := bytes.Clone(mf)
		out[at()] = byte(in.pick(256))
		return out
	case 2:
		i := at()
		return slices.Concat(mf[:i], mf[i+1:])
	case 3:
		i := at()
		return slices.Concat(mf[:i], []byte{" ,:{}[]\"\\x0"[in.pick(11)]}, mf[i:])
	case 4:
		var b bytes.Buffer
		if json.Indent(&b, mf, "", " ") == nil {
			return b.Bytes()
		}
	case 5:
		return bytes.ReplaceAll(mf, []byte(`"apiVersion":"v1","fieldsType":"FieldsV1"`), []byte(`"fieldsType":"FieldsV1","apiVersion":"v1"`))
	}
	return mf
}

// canonicalList reports whether mf is json.Marshal's bytes of what it
// decodes to.
func canonicalList(mf []byte) bool {
	var list any
	if json.Unmarshal(mf, &list) != nil {
		return false
	}
	again, err := json.Marshal(list)
	return err == nil && bytes.Equal(again, mf)
}

// answeredApplySeeds are draws of fuzzStoredApply that ApplyStored
// answers, stamped and not, one of each kind (found by the generated
// test's draws, cut where the draw ends): FuzzApplyStored's seeds, so that
// the seeds alone check some answers.
var answeredApplySeeds = []string{
	"\x00<1a\x0fc\xd8\xf5\xe62/~B\b\xcb~\x7fc\v\x9dD\x87N\xb1Y\xbe\x15%F\xd1",
	"\x00\xb2O\x13\x95\x89v\x15\x80\x95\r\x9c\xa8Zmx\x92\xbb\xb6\xfa3M\xe4",
	"\x01Cj\x9a\x86%`\x01\xb0\xf4\x0f\x8c\xe9\x1a\xe5ud\xbe\x8f\x037/\xb43\"J\x96",
	"\x01U\x16\xae\xa5\x12\x1c<$\xe5#\x18|\x84\xd3w\xec\xa1\xee\v\x91\x93\x81d:\x98!\xf3\xdac\xc4\xb1M\xbez\xfa\x0fb\xf2\xc2O/\xf0\xe0",
	"\x02_\xa2\x14n\x94\xc6\x86\xe2\xa1\xc9l9\xd3\x03\xf7X\xa4\x8d\xa5",
	"\x029B\x94#hJ\xf6\xb6r\xdfHb\xf5\xc9\x84!\x92\xdf\xc1\xe54'\xf5\x99e\xf1",
}

// fuzzStoredApply is one case of FuzzApplyStored, drawn from b: an apply
// (drawStoredApply's), its stored managedFields as json.Marshal writes
// them or mangled. ApplyStored meets its contract wherever it answers,
// answers exactly where the rule says for json.Marshal's bytes (a changed
// byte may give other such bytes), and never for other bytes.
func fuzzStoredApply(t *testing.T, kinds []fuzzKind, past map[*Manager]*Manager, b []byte) storedApply {
	in := &fuzzBytes{b: b}
	k := &kinds[in.pick(len(kinds))]
	live, liveMF, applied, manager, ok := drawStoredApply(t, in, k, past[k.m])
	if !ok {
		return storedApply{}
	}
	liveMF = mangleStored(in, liveMF)
	got := storedVsApply(t, k.m, live, liveMF, applied, manager)
	if canonical := canonicalList(liveMF); canonical && got.answered != got.due() || !canonical && got.answered {
		t.Fatalf("ApplyStored answered %v (managedFields as json.Marshal writes them: %v; first apply %v, one writer's entry %v, %d entries listed)\nlive: %s\nmanagedFields: %s\napplied: %s\nmanager %q",
			got.answered, canonical, got.firstApply, got.soleUpdate, got.listed, dump(live), liveMF, dump(applied), manager)
	}
	return got
}

// FuzzApplyStored: fuzzStoredApply's applies, from seeds some of which
// ApplyStored answers.
func FuzzApplyStored(f *testing.F) {
	for _, seed := range append([]string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09",
		"\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"},
		answeredApplySeeds...) {
		f.Add([]byte(seed))
	}
	kinds := fuzzKinds(f)
	past := pastManagers(f, kinds)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzStoredApply(t, kinds, past, b) })
}

// TestApplyStoredSeeds: the seeds said to be answered are, stamped and not
// (a change to the draws would otherwise leave the fuzzer's seeds
// answering nothing, unnoticed).
func TestApplyStoredSeeds(t *testing.T) {
	kinds := fuzzKinds(t)
	past := pastManagers(t, kinds)
	stamped := 0
	for i, seed := range answeredApplySeeds {
		got := fuzzStoredApply(t, kinds, past, []byte(seed))
		if !got.answered {
			t.Fatalf("seed %d: ApplyStored declined", i)
		}
		if bytes.Contains(got.outMF, []byte(storedNowStamp)) {
			stamped++
		}
	}
	if stamped != len(answeredApplySeeds)/2 {
		t.Fatalf("%d of the %d seeds stamped, want half", stamped, len(answeredApplySeeds))
	}
}
