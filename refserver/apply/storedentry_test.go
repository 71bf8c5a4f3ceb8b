package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// The times the stored-entry tests tell apart: the entry's (written by a
// Manager whose clock is in 2020) and the writer's now.
var (
	storedPast = time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	storedNow  = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

const (
	storedPastStamp = "2020-05-06T07:08:09Z"
	storedNowStamp  = "2030-01-02T03:04:05Z"
)

// storedVsUpdate checks UpdateStored against its contract: where it
// answers, liveMF decodes, and Update, given live and updated each with
// metadata.managedFields set to that one decoded list, succeeds with out
// plus outMF's list: the same values of the same Go types, the same JSON,
// and outMF byte for byte json.Marshal's of Update's list (nil for none).
// No input may change. It reports UpdateStored's outMF, whether it
// answered, and whether Update was answered by the sole-owner walk (false
// when liveMF does not decode).
func storedVsUpdate(t testing.TB, m *Manager, live map[string]any, liveMF []byte, updated map[string]any, manager string) (outMF []byte, answered, sole bool) {
	t.Helper()
	liveBefore, updBefore, mfBefore := typedCopy(live), typedCopy(updated), bytes.Clone(liveMF)
	out, outMF, ok := m.UpdateStored(live, liveMF, updated, manager)
	if !reflect.DeepEqual(live, liveBefore) || !reflect.DeepEqual(updated, updBefore) || !bytes.Equal(liveMF, mfBefore) {
		t.Fatalf("UpdateStored changed its inputs")
	}
	var list any
	if err := json.Unmarshal(liveMF, &list); err != nil {
		if ok {
			t.Fatalf("UpdateStored answered for managedFields that do not decode (%v): %q", err, liveMF)
		}
		return nil, false, false
	}
	heard := ""
	m.walked = func(which string) { heard = which }
	defer func() { m.walked = nil }()
	want, err := m.Update(withManagedFields(live, list), withManagedFields(updated, list), manager)
	sole = heard == "sole owner"
	if !ok {
		return nil, false, sole
	}
	if err != nil {
		t.Fatalf("UpdateStored answered where Update fails: %v", err)
	}
	wantMeta := want["metadata"].(map[string]any)
	wantList, listed := wantMeta["managedFields"]
	wantOut := withManagedFields(want, nil)
	delete(wantOut["metadata"].(map[string]any), "managedFields")
	gotJSON, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("UpdateStored's answer does not encode: %v", err)
	}
	wantJSON, _ := json.Marshal(wantOut)
	if !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("UpdateStored's object differs from Update's\nstored: %s\nupdate: %s", gotJSON, wantJSON)
	}
	if !reflect.DeepEqual(out, wantOut) {
		t.Fatalf("UpdateStored's object has Go types other than Update's\nstored: %#v\nupdate: %#v", out, wantOut)
	}
	if !listed {
		if outMF != nil {
			t.Fatalf("UpdateStored gives managedFields %s where Update gives none", outMF)
		}
		return nil, true, sole
	}
	wantMF, _ := json.Marshal(wantList)
	if !bytes.Equal(outMF, wantMF) {
		t.Fatalf("UpdateStored's managedFields differ from Update's\nstored: %s\nupdate: %s", outMF, wantMF)
	}
	return outMF, true, sole
}

// withManagedFields is obj with a copy of its metadata whose managedFields
// are list (the registry hands live's list to both objects).
func withManagedFields(obj map[string]any, list any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	md, _ := obj["metadata"].(map[string]any)
	mdc := make(map[string]any, len(md)+1)
	for k, v := range md {
		mdc[k] = v
	}
	mdc["managedFields"] = list
	out["metadata"] = mdc
	return out
}

// typedCopy deep-copies a JSON-shaped value keeping every Go type (jsonCopy
// would turn float64 integers into int64s and hide a change of type).
func typedCopy[T any](v T) T {
	var c func(any) any
	c = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			if t == nil {
				return t
			}
			o := make(map[string]any, len(t))
			for k, e := range t {
				o[k] = c(e)
			}
			return o
		case []any:
			if t == nil {
				return t
			}
			o := make([]any, len(t))
			for i, e := range t {
				o[i] = c(e)
			}
			return o
		}
		return v
	}
	out, _ := c(v).(T)
	return out
}

// asStored splits an object as Update left it into what the registry will
// hand UpdateStored: the object without managedFields and their bytes.
func asStored(t testing.TB, obj map[string]any) (map[string]any, []byte) {
	t.Helper()
	list := obj["metadata"].(map[string]any)["managedFields"]
	mf, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	out := withManagedFields(obj, nil)
	delete(out["metadata"].(map[string]any), "managedFields")
	return out, mf
}

// firstEntry is the first entry of a decoded managedFields list.
func firstEntry(list []any) map[string]any { return list[0].(map[string]any) }

// rewritten is a stored-bytes rewrite for the tables: the list in the
// bytes changed by change, as json.Marshal writes it (reencode).
func rewritten(change func(l []any) []any) func(t testing.TB, mf []byte) []byte {
	return func(t testing.TB, mf []byte) []byte { return reencode(t, mf, change) }
}

// reencode is the list in mf changed by change, as json.Marshal writes it.
func reencode(t testing.TB, mf []byte, change func(list []any) []any) []byte {
	t.Helper()
	var list []any
	if err := json.Unmarshal(mf, &list); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(change(list))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestUpdateStored(t *testing.T) {
	ms, pastOf := managerSet{}, managerSet{}
	bench := func(meta, data string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00003","namespace":"bench","uid":"u-1","resourceVersion":"7",` +
			`"creationTimestamp":"2026-01-02T03:04:05Z","labels":{"load":"apiconform","shard":"3"}` + meta + `},"data":` + data + `}`
	}
	benchData := `{"index":"3","payload":"0123456789abcdef0123456789abcdef"}`
	thing := func(meta, spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d","uid":"u-1"` + meta + `},"spec":` + spec + `}`
	}
	widget := func(spec string) string {
		return `{"apiVersion":"fc.example.com/v1","kind":"Widget","metadata":{"name":"w","namespace":"d","uid":"u-1"},"spec":` + spec + `}`
	}
	cases := []struct {
		name, kind    string
		before, after string // the object "w" created in 2020, the one written
		creator       string // "" is "w"
		manager       string
		liveFloats    bool // live as the registry decodes it: numbers float64
		afterFloats   bool // the written object's numbers float64 too
		// stored changes the bytes of live's list (nil: as json.Marshal
		// writes them).
		stored  func(t testing.TB, mf []byte) []byte
		answers bool
		stamp   string // the answer's entry: "kept" (its old time), "now", "none"
	}{
		{name: "bench configmap, a value changed", before: bench("", benchData), after: bench("", `{"index":"3","payload":"updated-3"}`),
			manager: "w", answers: true, stamp: "now"},
		{name: "bench configmap unchanged", before: bench("", benchData), after: bench("", benchData), manager: "w", answers: true, stamp: "kept"},
		{name: "values of every key changed", before: bench("", benchData), after: bench(`,"resourceVersion":"8"`, `{"index":"4","payload":"p"}`),
			manager: "w", answers: true, stamp: "now"},
		{name: "a key added", before: bench("", benchData), after: bench("", `{"index":"3","payload":"p","patched":"1"}`), manager: "w", answers: true, stamp: "now"},
		{name: "a key removed", before: bench("", benchData), after: bench("", `{"index":"3"}`), manager: "w", answers: true, stamp: "kept"},
		{name: "labels changed only", before: bench("", benchData), after: strings.Replace(bench("", benchData), `"shard":"3"`, `"shard":"4"`, 1),
			manager: "w", answers: true, stamp: "now"},
		{name: "a label removed only", before: bench("", benchData), after: strings.Replace(bench("", benchData), `,"shard":"3"`, ``, 1),
			manager: "w", answers: true, stamp: "kept"},
		{name: "server metadata changed only", before: bench(`,"generation":1`, benchData), after: bench(`,"generation":2,"resourceVersion":"9"`, benchData),
			manager: "w", answers: true, stamp: "kept"},
		{name: "no fields besides stripped metadata", before: bench("", benchData),
			after:   `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-00003","namespace":"bench","uid":"u-1","resourceVersion":"8"}}`,
			manager: "w", answers: true, stamp: "none"},
		{name: "no manager name: unknown's entry", before: bench("", benchData), after: bench("", `{"index":"9"}`), creator: "", manager: "", answers: true, stamp: "now"},
		{name: "names needing escapes", before: cm("", `{"a\"b\\c<&>é":"1"}`), after: cm("", `{"a\"b\\c<&>é":"2","\u2028x":"y"}`),
			creator: "w<\"é>", manager: "w<\"é>", answers: true, stamp: "now"},
		{name: "an entry without a time", before: bench("", benchData), after: bench("", benchData), manager: "w", answers: true, stamp: "none-time",
			stored: rewritten(func(l []any) []any { delete(firstEntry(l), "time"); return l })},
		{name: "an entry without a time, a value changed", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w", answers: true, stamp: "now",
			stored: rewritten(func(l []any) []any { delete(firstEntry(l), "time"); return l })},
		{name: "custom resource, live's integers float64", kind: "deduced", before: thing(`,"generation":4`, `{"s":2,"m":{"x":"1"}}`),
			after: thing(`,"generation":4`, `{"s":3,"m":{"x":"1"}}`), manager: "w", liveFloats: true, answers: true, stamp: "now"},
		{name: "custom resource, live's integers float64, unchanged", kind: "deduced", before: thing(`,"generation":4`, `{"s":2,"m":{"x":"1"}}`),
			after: thing(`,"generation":4`, `{"s":2,"m":{"x":"1"}}`), manager: "w", liveFloats: true, answers: true, stamp: "kept"},
		{name: "the written generation a float64", kind: "deduced", before: thing(`,"generation":4`, `{"s":2}`),
			after: thing(`,"generation":4.0,"labels":{"x":"1"}`, `{"s":2}`), manager: "w", liveFloats: true, answers: true, stamp: "now"},
		{name: "widget with a schema", kind: "widget", before: widget(`{"size":1,"name":"n","labels":{"l":"1"},"nested":{"inner":{"x":"1"}}}`),
			after: widget(`{"size":2,"name":"n","labels":{"l":"1","m":"2"},"nested":{"inner":{"x":"1"}},"free":{"n":{"d":2.5}}}`), manager: "w", answers: true, stamp: "now"},
		{name: "an empty map stays empty", kind: "deduced", before: thing("", `{"s":{}}`), after: thing("", `{"s":{}}`), manager: "w", answers: true, stamp: "kept"},
		// The entry owns the written object's fields but not live's: live's
		// payload was nobody's, and the write removes it.
		{name: "an unowned field removed", before: bench("", benchData), after: bench("", `{"index":"3"}`), manager: "w", answers: true, stamp: "kept",
			stored: rewritten(func(l []any) []any {
				delete(firstEntry(l)["fieldsV1"].(map[string]any)["f:data"].(map[string]any), "f:payload")
				return l
			})},
		{name: "an unowned field removed, a value changed", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w", answers: true, stamp: "now",
			stored: rewritten(func(l []any) []any {
				delete(firstEntry(l)["fieldsV1"].(map[string]any)["f:data"].(map[string]any), "f:payload")
				return l
			})},

		{name: "another manager's update", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "editor"},
		{name: "an Apply entry", before: bench("", benchData), after: bench("", benchData), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["operation"] = "Apply"; return l })},
		{name: "two entries", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any {
				return append(l, map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{}, "manager": "z", "operation": "Update"})
			})},
		{name: "an entry of a subresource", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["subresource"] = "status"; return l })},
		{name: "an entry of another apiVersion", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["apiVersion"] = "v2"; return l })},
		{name: "a fractional time", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["time"] = "2020-05-06T07:08:09.5Z"; return l })},
		{name: "a time of the right length but no time", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["time"] = "2020-05-06T07:08:60Z"; return l })},
		{name: "the zero time", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any { firstEntry(l)["time"] = "0001-01-01T00:00:00Z"; return l })},
		{name: "fieldsV1 other than live's fields", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: rewritten(func(l []any) []any {
				delete(firstEntry(l)["fieldsV1"].(map[string]any)["f:data"].(map[string]any), "f:index")
				return l
			})},
		{name: "whitespace", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: func(t testing.TB, mf []byte) []byte {
				var b bytes.Buffer
				if err := json.Indent(&b, mf, "", " "); err != nil {
					t.Fatal(err)
				}
				return b.Bytes()
			}},
		{name: "keys out of order", before: bench("", benchData), after: bench("", `{"index":"4"}`), manager: "w",
			stored: func(t testing.TB, mf []byte) []byte {
				s := strings.Replace(string(mf), `"apiVersion":"v1","fieldsType":"FieldsV1",`, `"fieldsType":"FieldsV1","apiVersion":"v1",`, 1)
				if s == string(mf) {
					t.Fatal("no change")
				}
				return []byte(s)
			}},
		// The entry owns the written object's fields, and live holds what
		// only the library reads: live is still checked.
		{name: "an unowned list removed", kind: "deduced", before: thing("", `{"list":[1,2],"s":"x"}`), after: thing("", `{"s":"x"}`), manager: "w",
			stored: rewritten(func(l []any) []any {
				delete(firstEntry(l)["fieldsV1"].(map[string]any)["f:spec"].(map[string]any), "f:list")
				return l
			})},
		{name: "a list in live", kind: "deduced", before: thing("", `{"list":[1,2],"s":"x"}`), after: thing("", `{"list":[1,2],"s":"y"}`), manager: "w"},
		{name: "kubectl's last-applied annotation", before: bench(`,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, benchData),
			after: bench(`,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"}`, `{"index":"4"}`), manager: "w"},
		{name: "the written integer a float64", kind: "deduced", before: thing("", `{"s":2}`), after: thing("", `{"s":3}`), manager: "w", afterFloats: true},
		{name: "live's 2^53", kind: "deduced", before: thing("", `{"s":9007199254740992}`), after: thing("", `{"s":3}`), manager: "w", liveFloats: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			m.clock = func() time.Time { return storedNow }
			past := pastOf.of(t, c.kind)
			past.clock = func() time.Time { return storedPast }
			creator := c.creator
			if creator == "" && c.manager != "" {
				creator = "w"
			}
			created, err := past.Update(nil, decode(t, c.before, true), creator)
			if err != nil {
				t.Fatal(err)
			}
			if c.liveFloats {
				created = decode(t, dump(created), false) // numbers float64, as stored objects decode
			}
			live, liveMF := asStored(t, created)
			if c.stored != nil {
				liveMF = c.stored(t, liveMF)
			}
			outMF, answered, sole := storedVsUpdate(t, m, live, liveMF, decode(t, c.after, !c.afterFloats), c.manager)
			if answered != c.answers {
				t.Fatalf("UpdateStored answered %v, want %v (the sole-owner walk answered Update: %v)", answered, c.answers, sole)
			}
			if !answered {
				return
			}
			var got string
			switch {
			case outMF == nil:
				got = "none"
			case bytes.Contains(outMF, []byte(storedPastStamp)):
				got = "kept"
			case bytes.Contains(outMF, []byte(storedNowStamp)):
				got = "now"
			case !bytes.Contains(outMF, []byte(`"time"`)):
				got = "none-time"
			}
			if got != c.stamp {
				t.Fatalf("the entry's time is %q, want %q: %s", got, c.stamp, outMF)
			}
			if (c.stamp == "kept" || c.stamp == "none-time") && c.after == c.before && (!bytes.Equal(outMF, liveMF) || cap(outMF) != len(outMF)) {
				t.Fatalf("an unchanged object's entry changed, or may be appended to in place:\n%s\n%s", outMF, liveMF)
			}
		})
	}
}

// TestUpdateStoredGenerated: 2,000 updates of generated objects written
// before by a Manager whose clock is in 2020, their managedFields stored as
// json.Marshal writes them, by the same writer or another, to a new object,
// the same one, or the same one less a field, live sometimes as the
// registry decodes it (numbers float64): UpdateStored meets its contract,
// and answers exactly where Update is answered by the sole-owner walk, or
// where the one entry owns exactly the written object's fields, which is
// over 600 of them (so it cannot pass by declining).
func TestUpdateStoredGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	past := pastManagers(t, kinds)
	answered, kept, beyond := 0, 0, 0
	eachDraw(kinds, 41, 2000, 96, func(i int, in *fuzzBytes, k *fuzzKind) {
		live, liveMF, updated, manager, ok := drawStored(t, in, k, past[k.m])
		if !ok {
			return
		}
		outMF, got, sole := storedVsUpdate(t, k.m, live, liveMF, updated, manager)
		if got != sole && !(got && entryOwnsWritten(k.m, liveMF, updated)) {
			t.Fatalf("draw %d: UpdateStored answered %v, the sole-owner walk %v\nlive: %s\nmanagedFields: %s\nupdated: %s\nmanager %q",
				i, got, sole, dump(live), liveMF, dump(updated), manager)
		}
		if got && !sole {
			beyond++
		}
		if got {
			answered++
			if bytes.Contains(outMF, []byte(storedPastStamp)) {
				kept++
			}
		}
	})
	t.Logf("UpdateStored answered %d of 2,000 updates (%d keeping the entry's time, %d where the entry owns the written object's fields and not live's)", answered, kept, beyond)
	if answered < 600 || kept < 100 {
		t.Fatalf("UpdateStored answered %d of 2,000 updates (%d keeping the entry's time); want over 600 (100)", answered, kept)
	}
}

// pastManagers are managers of the kinds' schemas whose clock is in 2020,
// for writing live objects; the kinds' own Managers get a fixed clock in
// 2030, so that UpdateStored and Update stamp the same second.
func pastManagers(t testing.TB, kinds []fuzzKind) map[*Manager]*Manager {
	past := map[*Manager]*Manager{}
	for i := range kinds {
		p := managerFor(t, map[string]string{"v1": "ConfigMap", "fc.example.com/v1": "widget", "x.example.com/v1": "deduced"}[kinds[i].apiVersion])
		p.clock = func() time.Time { return storedPast }
		past[kinds[i].m] = p
		kinds[i].m.clock = func() time.Time { return storedNow }
	}
	return past
}

// drawStored draws an update as the registry will hand it to UpdateStored:
// live written by "w" or "" (or, one time in eight, with drawn
// managedFields), stored and read back, its numbers float64 half the time;
// the written object a new one, live again or live less a field; the
// writer, live's three times in four. ok false: the schema refuses the
// object.
func drawStored(t testing.TB, in *fuzzBytes, k *fuzzKind, past *Manager) (live map[string]any, liveMF []byte, updated map[string]any, manager string, ok bool) {
	var created map[string]any
	writer := []string{"w", "w", "w", ""}[in.pick(4)]
	if in.pick(8) == 0 {
		created = k.object(in)
		created["metadata"].(map[string]any)["managedFields"] = in.managedFields(k)
	} else {
		var err error
		if created, err = past.Update(nil, k.object(in), writer); err != nil {
			return nil, nil, nil, "", false
		}
		if _, tracked := created["metadata"].(map[string]any)["managedFields"]; !tracked {
			created["metadata"].(map[string]any)["managedFields"] = []any{}
		}
	}
	created["metadata"].(map[string]any)["uid"] = "u-1"
	if in.pick(2) == 0 {
		created = decode(t, dump(created), false)
	}
	live, liveMF = asStored(t, created)
	updated = drawWritten(in, k, live)
	updated["metadata"].(map[string]any)["uid"] = "u-1"
	manager = writer
	if in.pick(4) == 0 {
		manager = []string{"w", "", "other"}[in.pick(3)]
	}
	return live, liveMF, updated, manager, true
}

// FuzzUpdateStored: random updates (drawStored's), their stored
// managedFields as json.Marshal writes them or with one byte changed, one
// byte taken out, or whitespace added: UpdateStored meets its contract
// wherever it answers, and for json.Marshal's bytes answers exactly where
// the sole-owner walk answers Update.
func FuzzUpdateStored(f *testing.F) {
	for _, seed := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x03\x01\x01\x02\x02\x01\x01\x00\x01\x04\x01\x01\x01\x01\x00\x02\x01\x01\x01\x02\x01",
		"\x01\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02",
		"\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01",
		// Answered, one of each kind: the seeds alone check some answers.
		"\x00\x04\x04\x03\x01\x00\x01\x00\x00\x01\x04\x03\x04\x00\x04\x03\x04\x00\x05\x03\x02\x02\x04\x02\x04\x01\x05\x05\x03\x00\x04\x00\x04\x05\x02\x03\x04\x01\x00\x04",
		"\x05\x05\x03\x02\x03\x02\x03\x04\x02\x02\x01\x00\x04\x03\x05\x04\x05\x02\x01\x02\x04\x05\x05\x05\x01\x00\x00\x01\x01\x02\x01\x03\x00\x00\x01\x02\x02\x02\x04\x04",
		"\x01\x04\x02\x02\x04\x02\x04\x01\x05\x04\x00\x01\x00\x04\x00\x02\x03\x04\x04\x04\x03\x05\x00\x02\x05\x03\x01\x03\x00\x01\x02\x01\x03\x01\x00\x02\x04\x01\x03\x01"} {
		f.Add([]byte(seed))
	}
	kinds := fuzzKinds(f)
	past := pastManagers(f, kinds)
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &fuzzBytes{b: b}
		k := &kinds[in.pick(len(kinds))]
		live, liveMF, updated, manager, ok := drawStored(t, in, k, past[k.m])
		if !ok {
			return
		}
		canonical := true
		switch in.pick(6) {
		case 0: // one byte changed
			i := (in.pick(256) << 8) | in.pick(256)
			liveMF = bytes.Clone(liveMF)
			liveMF[i%len(liveMF)] = byte(in.pick(256))
			canonical = false
		case 1: // one byte taken out
			i := ((in.pick(256) << 8) | in.pick(256)) % len(liveMF)
			liveMF = append(bytes.Clone(liveMF[:i]), liveMF[i+1:]...)
			canonical = false
		case 2: // whitespace, where JSON allows it
			var buf bytes.Buffer
			if json.Indent(&buf, liveMF, "", " ") == nil && !bytes.Equal(buf.Bytes(), liveMF) {
				liveMF = buf.Bytes()
				canonical = false
			}
		}
		_, got, sole := storedVsUpdate(t, k.m, live, liveMF, updated, manager)
		if canonical && got != sole && !(got && entryOwnsWritten(k.m, liveMF, updated)) {
			t.Fatalf("UpdateStored answered %v, the sole-owner walk %v\nlive: %s\nmanagedFields: %s\nupdated: %s\nmanager %q",
				got, sole, dump(live), liveMF, dump(updated), manager)
		}
		if !canonical && got && !sole && !entryOwnsWritten(k.m, liveMF, updated) {
			t.Fatalf("UpdateStored answered for changed bytes the sole-owner walk declines: %s", liveMF)
		}
	})
}

// TestAppendFields: the JSON appendFields writes is json.Marshal's of
// mapFields' map in each mode that lists fields, for 2,000 generated objects
// (live's rule too: an object with a JSON copy may be listed from it), and
// it declines exactly where mapFields does.
func TestAppendFields(t *testing.T) {
	kinds := fuzzKinds(t)
	listed := 0
	eachDraw(kinds, 43, 2000, 64, func(i int, in *fuzzBytes, k *fuzzKind) {
		obj := k.object(in)
		root, ok := k.m.walkRoot()
		if !ok {
			t.Fatal("no walk type")
		}
		for _, mode := range []fieldsMode{everyField, fieldSetFields} {
			for _, copied := range []bool{false, true} {
				want, wantOK := mapFields(root, obj, updateStrip, mode)
				if copied {
					if c, ok := jsonCopy(obj).(map[string]any); ok {
						want, wantOK = mapFields(root, c, updateStrip, mode)
					}
				}
				w := fieldsWalk{mode: mode, copied: copied, buf: []byte("x")}
				gotOK := w.appendFields(root, obj, updateStrip)
				if gotOK != wantOK {
					t.Fatalf("object %d (mode %d, copied %v): appendFields answered %v, mapFields %v: %s", i, mode, copied, gotOK, wantOK, dump(obj))
				}
				if !gotOK {
					continue
				}
				listed++
				wantJSON, _ := json.Marshal(want)
				if got := w.buf[1:]; !bytes.Equal(got, wantJSON) || w.buf[0] != 'x' {
					t.Fatalf("object %d (mode %d, copied %v): appendFields wrote %s, want %s", i, mode, copied, w.buf, wantJSON)
				}
				if len(w.members) != 0 {
					t.Fatalf("object %d: the scratch stack was left with %d members", i, len(w.members))
				}
			}
		}
	})
	if listed < 4000 {
		t.Fatalf("appendFields listed %d of 8,000; want over 4,000", listed)
	}
}

// TestAppendFieldsOrder: keys are written in json.Marshal's order, which
// is the order of the field names' bytes, not of their escaped forms, and
// "." comes first.
func TestAppendFieldsOrder(t *testing.T) {
	m := managerFor(t, "deduced")
	root, ok := m.walkRoot()
	if !ok {
		t.Fatal("no walk type")
	}
	obj := map[string]any{"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": map[string]any{"name": "t"},
		"spec": map[string]any{"b": "1", "a\"": "1", "a": map[string]any{"z": "1", "\u2028": "1", "<": "1"}, "A": "1", "é": "1", "-": map[string]any{}, "a<": "1"}}
	w := fieldsWalk{}
	if !w.appendFields(root, obj, updateStrip) {
		t.Fatal("declined")
	}
	fields, _ := mapFields(root, obj, updateStrip, everyField)
	want, _ := json.Marshal(fields)
	if !bytes.Equal(w.buf, want) {
		t.Fatalf("appendFields wrote\n%s\nwant\n%s", w.buf, want)
	}
}

// storedByW is the concurrency tests' configmap: written by "w" with a
// Manager whose clock is fixed, as the registry hands it on (live and its
// managedFields' bytes).
func storedByW(t *testing.T) (m *Manager, live map[string]any, liveMF []byte) {
	t.Helper()
	m = managerFor(t, "ConfigMap")
	m.clock = func() time.Time { return storedNow }
	created, err := m.Update(nil, decode(t, cm(`"labels":{"x":"1"}`, `{"a":"1","b":"2"}`), true), "w")
	if err != nil {
		t.Fatal(err)
	}
	live, liveMF = asStored(t, created)
	return m, live, liveMF
}

// TestUpdateStoredConcurrent: one Manager's UpdateStored from many
// goroutines (run with -race: the walks' buffers come from a pool) gives
// each the answer it gives alone, which is Update's.
func TestUpdateStoredConcurrent(t *testing.T) {
	m, live, liveMF := storedByW(t)
	const n = 8
	updates, wantMF := make([]map[string]any, n), make([][]byte, n)
	for i := range n {
		data := fmt.Sprintf(`{"a":"1","b":"%d"}`, i)
		if i%2 == 0 {
			data = fmt.Sprintf(`{"a":"1","b":"2","c%d":"3"}`, i) // fields listed anew
		}
		updates[i] = decode(t, cm(`"labels":{"x":"1"}`, data), true)
		var ok bool
		if wantMF[i], ok, _ = storedVsUpdate(t, m, live, liveMF, updates[i], "w"); !ok {
			t.Fatalf("update %d declined", i)
		}
	}
	concurrently(t, n, func(i int) error {
		for range 50 {
			_, outMF, ok := m.UpdateStored(live, liveMF, updates[i], "w")
			if !ok || !bytes.Equal(outMF, wantMF[i]) {
				return fmt.Errorf("update %d: answered %v with %s, want %s", i, ok, outMF, wantMF[i])
			}
		}
		return nil
	})
}

// TestCreateStoredGenerated: CreateStored answers a create where Update's
// create walk does on the object as it comes (createUpdate: an object that
// is its own JSON copy; the walk also answers others once normalise has
// copied them), with Update's object and the bytes json.Marshal gives its
// managedFields; inputs unchanged.
func TestCreateStoredGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	for i := range kinds {
		kinds[i].m.clock = func() time.Time { return storedNow }
	}
	answered, listed := 0, 0
	eachDraw(kinds, 43, 2000, 96, func(i int, in *fuzzBytes, k *fuzzKind) {
		obj := k.object(in)
		manager := []string{"w", "", "w\u2028<&>"}[in.pick(3)]
		if in.pick(8) == 0 {
			obj["metadata"].(map[string]any)["managedFields"] = in.managedFields(k)
		}
		before := typedCopy(obj)
		out, outMF, ok := k.m.CreateStored(obj, manager)
		if !reflect.DeepEqual(obj, before) {
			t.Fatalf("draw %d: CreateStored changed its input", i)
		}
		heard := ""
		k.m.walked = func(which string) { heard = which }
		want, err := k.m.Update(nil, obj, manager)
		k.m.walked = nil
		if ok && heard != "create" || !ok && heard == "create" && jsonvalue.Stable(obj, jsonvalue.PreserveInts) {
			t.Fatalf("draw %d: CreateStored answered %v, the create walk %q\n%s", i, ok, heard, dump(obj))
		}
		if !ok {
			return
		}
		answered++
		if err != nil {
			t.Fatalf("draw %d: CreateStored answered where Update fails: %v", i, err)
		}
		wantMeta := want["metadata"].(map[string]any)
		wantList, hasList := wantMeta["managedFields"]
		wantOut := withManagedFields(want, nil)
		delete(wantOut["metadata"].(map[string]any), "managedFields")
		if !reflect.DeepEqual(out, wantOut) {
			t.Fatalf("draw %d: object\n%#v\nUpdate's\n%#v", i, out, wantOut)
		}
		if !hasList {
			if outMF != nil {
				t.Fatalf("draw %d: managedFields %s where Update gives none", i, outMF)
			}
			return
		}
		listed++
		if wantMF, _ := json.Marshal(wantList); !bytes.Equal(outMF, wantMF) {
			t.Fatalf("draw %d: managedFields\n%s\nUpdate's\n%s", i, outMF, wantMF)
		}
	})
	t.Logf("CreateStored answered %d of 2,000 creates (%d with an entry)", answered, listed)
	if answered < 600 || listed < 300 {
		t.Fatalf("CreateStored answered %d of 2,000 creates (%d with an entry); want over 600 (300)", answered, listed)
	}
}

// entryOwnsWritten reports whether liveMF is a list of one entry whose
// fieldsV1 is exactly the fields of the object UpdateStored would write for
// updated: the case where it answers without the sole-owner walk (the
// update takes from the entry only fields the written object lacks and
// gives it only fields that object has).
func entryOwnsWritten(m *Manager, liveMF []byte, updated map[string]any) bool {
	var list []any
	if json.Unmarshal(liveMF, &list) != nil || len(list) != 1 {
		return false
	}
	entry, _ := list[0].(map[string]any)
	root, ok := m.walkRoot()
	if entry == nil || !ok {
		return false
	}
	out := updated
	if md, _ := updated["metadata"].(map[string]any); hasWholeFloats(md) {
		var outMeta map[string]any
		out, outMeta = withMetadataCopy(updated, md)
		integersInt64(outMeta)
	}
	fields, ok := mapFields(root, out, updateStrip, everyField)
	return ok && reflect.DeepEqual(entry["fieldsV1"], fields)
}
