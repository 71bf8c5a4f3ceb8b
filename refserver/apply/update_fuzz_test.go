package apply

import (
	"sort"
	"testing"
)

// fuzzBytes hands out the fuzzer's bytes as small choices (0 when spent).
type fuzzBytes struct{ b []byte }

// live is the object written before, absent one time in absentOneIn: one
// of k's objects, with managedFields drawn for it, or (one time in four) as
// the library's create by one of the fuzzers' managers leaves it.
func (f *fuzzBytes) live(k *fuzzKind, absentOneIn int) map[string]any {
	if f.pick(absentOneIn) == 0 {
		return nil
	}
	live := k.object(f)
	if f.pick(4) == 0 {
		if created, err := k.m.libraryUpdate(nil, live, []string{"m1", "w", ""}[f.pick(3)]); err == nil {
			return created
		}
	}
	if mf := f.managedFields(k); len(mf) > 0 || f.pick(4) == 0 {
		live["metadata"].(map[string]any)["managedFields"] = mf
	}
	return live
}

func (f *fuzzBytes) pick(n int) int {
	if len(f.b) == 0 {
		return 0
	}
	c := int(f.b[0]) % n
	f.b = f.b[1:]
	return c
}

func (f *fuzzBytes) strMap(keys, values []string) map[string]any {
	m := map[string]any{}
	for _, k := range keys {
		if c := f.pick(len(values) + 1); c > 0 {
			m[k] = values[c-1]
		}
	}
	return m
}

// tree is the shape of the fieldsV1 a kind's entries are drawn from: a key
// with nil is a leaf.
type tree map[string]tree

// fields is a random fieldsV1 within t: a subset of its keys, each a member
// ({}) or its own random subset, now and then with "." (a member too).
func (f *fuzzBytes) fields(t tree) map[string]any {
	out := map[string]any{}
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same bytes make the same entry
	for _, k := range keys {
		sub := t[k]
		if f.pick(2) == 0 {
			continue
		}
		c := map[string]any{}
		if sub != nil {
			c = f.fields(sub)
		}
		if len(c) > 0 && f.pick(3) == 0 {
			c["."] = map[string]any{}
		}
		out[k] = c
	}
	return out
}

// fuzzKind is one kind the fuzzer writes: its Manager, entry apiVersion,
// fieldsV1 shape and random objects.
type fuzzKind struct {
	m          *Manager
	apiVersion string
	fields     tree
	object     func(f *fuzzBytes) map[string]any
}

func fuzzKinds(t testing.TB) []fuzzKind {
	labels := tree{"f:x": nil, "f:y": nil, "f:z": nil}
	// metadata.managedFields is what no writer owns, but an entry may say so.
	meta := tree{"f:labels": labels, "f:annotations": tree{"f:n": nil}, "f:managedFields": nil}
	metadata := func(f *fuzzBytes) map[string]any {
		md := map[string]any{"name": "c", "namespace": "d"}
		if f.pick(3) > 0 {
			md["uid"] = "u-1"
		}
		if l := f.strMap([]string{"x", "y", "z"}, []string{"1", "2"}); len(l) > 0 {
			md["labels"] = l
		}
		return md
	}
	number := func(f *fuzzBytes) any { return []any{int64(1), float64(2), 2.5, "x"}[f.pick(4)] }
	keyed := tree{"f:name": nil, "f:v": nil}
	return []fuzzKind{
		{managerFor(t, "ConfigMap"), "v1", tree{"f:data": tree{"f:a": nil, "f:b": nil, "f:c": nil, "f:d": nil, "f:e": nil}, "f:metadata": meta},
			func(f *fuzzBytes) map[string]any {
				o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata(f)}
				if f.pick(6) > 0 {
					o["data"] = f.strMap([]string{"a", "b", "c", "d", "e"}, []string{"1", "2"})
				}
				return o
			}},
		{managerFor(t, "widget"), "fc.example.com/v1", tree{"f:metadata": meta, "f:status": tree{"f:ready": nil}, "f:spec": tree{
			"f:size": nil, "f:name": nil, "f:tags": nil, "f:items": nil, "f:labels": tree{"f:l": nil, "f:m": nil},
			"f:keyed":  tree{`k:{"name":"a"}`: keyed, `k:{"name":"b"}`: keyed, `k:{"name":"c"}`: keyed},
			"f:free":   tree{"f:n": tree{"f:d": nil}, "f:o": nil},
			"f:nested": tree{"f:inner": tree{"f:x": nil}}}},
			func(f *fuzzBytes) map[string]any {
				spec := map[string]any{}
				if f.pick(3) > 0 {
					spec["size"] = number(f)
				}
				if f.pick(2) > 0 {
					spec["name"] = "w"
				}
				if f.pick(2) > 0 {
					spec["tags"] = []any{"x", "y"}[:f.pick(3)]
				}
				if l := f.strMap([]string{"l", "m"}, []string{"1", "2"}); len(l) > 0 {
					spec["labels"] = l
				}
				if n := f.pick(4); n > 0 {
					var items []any
					for i := 0; i < n; i++ {
						it := map[string]any{"name": []string{"a", "b", "c"}[f.pick(3)]}
						if v := f.pick(3); v > 0 {
							it["v"] = []string{"1", "2"}[v-1]
						}
						items = append(items, it)
					}
					spec["keyed"] = items
				}
				if f.pick(2) > 0 {
					spec["free"] = map[string]any{"n": map[string]any{"d": number(f)}}
				}
				if f.pick(3) == 0 {
					spec["nested"] = map[string]any{"inner": map[string]any{"x": "1"}}
				}
				o := map[string]any{"apiVersion": "fc.example.com/v1", "kind": "Widget", "metadata": metadata(f), "spec": spec}
				if f.pick(4) == 0 {
					o["status"] = map[string]any{"ready": f.pick(2) == 0}
				}
				return o
			}},
		{managerFor(t, "deduced"), "x.example.com/v1", tree{"f:metadata": meta, "f:spec": tree{"f:list": nil, "f:m": tree{"f:x": nil, "f:y": nil}, "f:s": nil}},
			func(f *fuzzBytes) map[string]any {
				spec := map[string]any{}
				if f.pick(2) > 0 {
					spec["list"] = []any{int64(1), "2", 3.5}[:f.pick(4)]
				}
				if m := f.strMap([]string{"x", "y"}, []string{"1", "2"}); len(m) > 0 {
					spec["m"] = m
				}
				if f.pick(2) > 0 {
					spec["s"] = number(f)
				}
				return map[string]any{"apiVersion": "x.example.com/v1", "kind": "Thing", "metadata": metadata(f), "spec": spec}
			}},
	}
}

func (f *fuzzBytes) managedFields(k *fuzzKind) []any {
	managers := []string{"m1", "m2", "m3", "", "w"}
	times := []string{"2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z", "2021-06-01T12:00:00Z", ""}
	n := f.pick(5)
	list := make([]any, 0, n)
	for i := 0; i < n; i++ {
		e := map[string]any{"operation": []string{"Update", "Update", "Apply"}[f.pick(3)], "apiVersion": k.apiVersion, "fieldsType": "FieldsV1", "fieldsV1": f.fields(k.fields)}
		if m := managers[f.pick(len(managers))]; m != "" || f.pick(2) == 0 {
			e["manager"] = m
		}
		if t := times[f.pick(len(times))]; t != "" {
			e["time"] = t
		}
		if f.pick(4) == 0 {
			e["subresource"] = "status"
		}
		if f.pick(16) == 0 {
			e["apiVersion"] = "v2"
		}
		list = append(list, e)
	}
	return list
}

// FuzzUpdateFastPath: for random pairs of ConfigMaps, custom resources with
// a schema and without, with managedFields from a few managers, whenever
// the fast path answers it equals the library.
func FuzzUpdateFastPath(f *testing.F) {
	for _, seed := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x03\x01\x01\x02\x02\x01\x01\x00\x01\x04\x01\x01\x01\x01\x00\x02\x01\x01\x01\x02\x01",
		"\x01\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02",
		"\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"} {
		f.Add([]byte(seed))
	}
	kinds := fuzzKinds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		in := &fuzzBytes{b: b}
		k := &kinds[in.pick(len(kinds))]
		live := in.live(k, 5)
		updated := k.object(in)
		md := updated["metadata"].(map[string]any)
		switch in.pick(4) {
		case 0: // as the registry sends it
			if live != nil {
				if mf, ok := live["metadata"].(map[string]any)["managedFields"]; ok {
					md["managedFields"] = mf
				}
			}
		case 1:
			md["managedFields"] = in.managedFields(k)
		}
		manager := []string{"m1", "m2", "m3", "", "w"}[in.pick(5)]
		differ(t, k.m, live, updated, manager)
	})
}
