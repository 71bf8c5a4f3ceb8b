package apply

import "testing"

// TestFirstApply: first applies to objects another writer created, each
// answered by the first-apply walk and equal to the library, or left to the
// typed path where the case says (a conflict, a type change, a list).
func TestFirstApply(t *testing.T) {
	ms := managerSet{}
	thing := func(spec string) string {
		return `{"apiVersion":"x.example.com/v1","kind":"Thing","metadata":{"name":"t","namespace":"d"},"spec":` + spec + `}`
	}
	cases := []struct {
		name, kind, live, applied string
		walked, stamped           bool
		other                     string // fieldsV1 of another Update entry live has, "" for none
	}{
		{"a field of its own", "", acm("", `{"a":"1"}`), acm("", `{"applied":"1"}`), true, true, ""},
		{"a label of its own", "", acm(`"labels":{"x":"1"}`, `{"a":"1"}`), acm(`"labels":{"y":"2"}`, ""), true, true, ""},
		{"the same value as live: shared, nothing changes", "", acm("", `{"a":"1"}`), acm("", `{"a":"1"}`), true, false, ""},
		{"name only", "", acm("", `{"a":"1"}`), acm("", ""), true, false, ""},
		{"an empty map where live has one", "", acm("", `{"a":"1"}`), acm("", `{}`), true, false, ""},
		{"an empty map where live has none", "", acm(`"labels":{"x":"1"}`, ""), acm("", `{}`), true, true, ""},
		{"a new map of maps", "deduced", thing(`{"s":"x"}`), thing(`{"m":{"a":{"b":1}}}`), true, true, ""},
		{"a number for the same number", "deduced", thing(`{"s":2}`), thing(`{"s":2}`), true, false, ""},
		{"an entry owning nothing is dropped", "", acm("", `{"a":"1"}`), acm("", `{"applied":"1"}`), true, true, "{}"},

		{"a field another writer owns, though live has none: a conflict", "deduced", thing(`{"s":"x"}`), thing(`{"m":{"a":"1"}}`), false, false, `{"f:spec":{"f:m":{"f:a":{}}}}`},
		{"another writer's field changed: a conflict", "", acm("", `{"a":"1"}`), acm("", `{"a":"2"}`), false, false, ""},
		{"a scalar becomes a map", "deduced", thing(`{"s":"x"}`), thing(`{"s":{"a":"b"}}`), false, false, ""},
		{"a list", "deduced", thing(`{"s":"x"}`), thing(`{"l":["a"]}`), false, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, c.kind)
			live, err := m.libraryUpdate(nil, decode(t, c.live, true), "w")
			if err != nil {
				t.Fatal(err)
			}
			if c.other != "" {
				md := live["metadata"].(map[string]any)
				md["managedFields"] = append(md["managedFields"].([]any), map[string]any{"manager": "o", "operation": "Update",
					"apiVersion": live["apiVersion"], "time": "2021-01-01T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": decode(t, c.other, true)})
			}
			walked := false
			m.walked = func(which string) { walked = which == "first apply" }
			defer func() { m.walked = nil }()
			got := differApply(t, m, live, decode(t, c.applied, true), "a", false)
			if walked != c.walked {
				t.Fatalf("the first-apply walk answered %v, want %v (outcome %+v)", walked, c.walked, got)
			}
			if !walked {
				return
			}
			var own map[string]any
			for _, e := range got.lib["metadata"].(map[string]any)["managedFields"].([]any) {
				if e.(map[string]any)["manager"] == "a" {
					own = e.(map[string]any)
				}
			}
			if _, stamped := own["time"]; own != nil && stamped != c.stamped {
				t.Fatalf("the applier's entry stamped %v, want %v: %s", stamped, c.stamped, dump(got.lib))
			}
		})
	}
}

// TestFirstApplyGenerated: 2,000 first applies of generated configurations
// (a field of the applier's own, a subset of live, a random object) to
// generated objects another writer created, each then applied again: the
// fast path equals the library wherever it answers, and the walks answer
// for over 600 of the first applies and of the repeats.
func TestFirstApplyGenerated(t *testing.T) {
	kinds := fuzzKinds(t)
	walkedN, reapplied := 0, 0
	var heard string
	hearWalks(t, kinds, &heard)
	eachDraw(kinds, 31, 2000, 96, func(i int, in *fuzzBytes, k *fuzzKind) {
		live, err := k.m.libraryUpdate(nil, k.object(in), []string{"w", "m1"}[in.pick(2)])
		if err != nil {
			return
		}
		var applied map[string]any
		switch in.pick(3) {
		case 0: // a field of its own
			applied = map[string]any{"apiVersion": live["apiVersion"], "kind": live["kind"],
				"metadata": map[string]any{"name": "c", "namespace": "d"}}
			if k.apiVersion == "v1" {
				applied["data"] = map[string]any{"applied": "1"}
			} else {
				applied["spec"] = map[string]any{"labels": map[string]any{"own": "1"}}
			}
		case 1: // a subset of live
			applied = jsonCopy(live).(map[string]any)
			md := applied["metadata"].(map[string]any)
			delete(md, "managedFields")
			delete(md, "creationTimestamp")
			for key := range applied {
				if key != "apiVersion" && key != "kind" && key != "metadata" && in.pick(2) == 0 {
					delete(applied, key)
				}
			}
		default:
			applied = k.object(in)
			delete(applied["metadata"].(map[string]any), "uid")
		}
		heard = ""
		manager := []string{"a", "a", "w"}[in.pick(3)]
		got := differApply(t, k.m, live, applied, manager, in.pick(4) == 0)
		if !got.answered || got.err != nil {
			return
		}
		if heard == "first apply" {
			walkedN++
		}
		// The same configuration again, on what the library stored.
		heard = ""
		if differApply(t, k.m, got.lib, applied, manager, false).answered && heard == "unchanged re-apply" {
			reapplied++
		}
	})
	if walkedN < 600 || reapplied < 600 {
		t.Fatalf("of 2,000 applies and their repeats, the first-apply walk answered %d, the re-apply %d; want over 600 each", walkedN, reapplied)
	}
}

// TestUnchangedReApply: an applier applies a configuration to an object
// another writer created, the object may change, and the applier applies
// again: the walk answers only when that configuration is the one it
// applied and the merge changes nothing; the result is the library's.
func TestUnchangedReApply(t *testing.T) {
	ms := managerSet{}
	cases := []struct {
		name, live, first, between, again string
		walked                            bool
	}{
		{"the same configuration", acm("", `{"a":"1"}`), acm("", `{"b":"2"}`), "", acm("", `{"b":"2"}`), true},
		{"the same labels", acm(`"labels":{"x":"1"}`, `{"a":"1"}`), acm(`"labels":{"y":"2"}`, ""), "", acm(`"labels":{"y":"2"}`, ""), true},
		{"the same configuration, after another writer added a field", acm("", `{"a":"1"}`), acm("", `{"b":"2"}`), `{"a":"1","b":"2","c":"3"}`, acm("", `{"b":"2"}`), true},
		{"a value changed", acm("", `{"a":"1"}`), acm("", `{"b":"2"}`), "", acm("", `{"b":"3"}`), false},
		{"a field dropped", acm("", `{"a":"1"}`), acm("", `{"b":"2","c":"3"}`), "", acm("", `{"b":"2"}`), false},
		{"a field added", acm("", `{"a":"1"}`), acm("", `{"b":"2"}`), "", acm("", `{"b":"2","c":"3"}`), false},
		{"another writer changed the applier's field since", acm("", `{"a":"1"}`), acm("", `{"b":"2"}`), `{"a":"1","b":"9"}`, acm("", `{"b":"2"}`), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := ms.of(t, "")
			live, err := m.libraryUpdate(nil, decode(t, c.live, true), "w")
			if err != nil {
				t.Fatal(err)
			}
			if live, err = m.libraryApply(live, decode(t, c.first, true), "a", false); err != nil {
				t.Fatal(err)
			}
			if c.between != "" {
				next := jsonCopy(live).(map[string]any)
				next["data"] = decode(t, c.between, true)
				if live, err = m.libraryUpdate(live, next, "w"); err != nil {
					t.Fatal(err)
				}
			}
			walked := false
			m.walked = func(which string) { walked = which == "unchanged re-apply" }
			defer func() { m.walked = nil }()
			differApply(t, m, live, decode(t, c.again, true), "a", false)
			if walked != c.walked {
				t.Fatalf("the re-apply walk answered %v, want %v", walked, c.walked)
			}
		})
	}
}
