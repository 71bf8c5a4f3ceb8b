package apply

import (
	"encoding/json"
	"testing"

	sigsjson "sigs.k8s.io/json"
)

// FuzzApplyFastPath: random small ConfigMaps and custom resources (with a
// schema and without) with managedFields from a few managers, applied to by
// a few managers with and without force, twice in a row; whenever the fast
// path answers it equals the library (which must not have failed).
func FuzzApplyFastPath(f *testing.F) {
	for _, seed := range []string{"", "\x01\x02\x03\x04\x05\x06\x07\x08\x09", "\x00\x01\x01\x02\x02\x01\x01\x00\x01\x04\x01\x01\x01\x01\x00\x02\x01\x01\x01\x02\x01",
		"\x01\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02",
		"\x02\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01",
		"\x00\x03\x01\x02\x01\x01\x02\x03\x04\x01\x00\x02\x01\x01\x02\x01\x02\x01\x00\x01\x03\x01\x01\x02\x02\x01\x01\x00\x02\x01"} {
		f.Add([]byte(seed))
	}
	kinds := fuzzKinds(f)
	f.Fuzz(func(t *testing.T, b []byte) { fuzzApplyBody(t, kinds, b) })
}

// fuzzApplyBody is one case of FuzzApplyFastPath, drawn from b.
func fuzzApplyBody(t *testing.T, kinds []fuzzKind, b []byte) {
	in := &fuzzBytes{b: b}
	k := &kinds[in.pick(len(kinds))]
	live := in.live(k, 4)
	for step := 0; step < 2; step++ {
		applied := k.object(in)
		md := applied["metadata"].(map[string]any)
		if in.pick(2) == 0 {
			delete(md, "uid")
		}
		if in.pick(2) == 0 { // no metadata of the applier's own: pruning may be skipped
			delete(md, "labels")
		}
		if in.pick(32) == 0 {
			md["managedFields"] = in.managedFields(k)
		}
		manager := []string{"m1", "m2", "m3", "", "w"}[in.pick(5)]
		got := differApply(t, k.m, live, applied, manager, in.pick(3) == 0)
		if got.err != nil {
			return
		}
		// The result as the registry stores it, integers float64 or int64.
		js, err := json.Marshal(got.lib)
		if err != nil {
			t.Fatal(err)
		}
		live = nil
		if in.pick(2) == 0 {
			err = json.Unmarshal(js, &live)
		} else {
			err = sigsjson.UnmarshalCaseSensitivePreserveInts(js, &live)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
