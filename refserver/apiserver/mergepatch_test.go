package apiserver

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"

	"github.com/apiconform/apiconform/refserver/registry"
)

// mergeCur is the object the merge tests patch: nested objects, arrays with
// nulls and objects, a null member, numbers.
const mergeCur = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"x":"1","y":"2"}},
 "data":{"k":"v","n":null},"spec":{"list":[1,null,{"a":null,"b":2}],"int":3,"float":1.5,"s":"t"}}`

// mergeDifferential applies patch to cur both ways and fails when the
// results differ; ok is false when the fast path does not take the patch.
func mergeDifferential(t *testing.T, cur, patch []byte) (ok bool) {
	t.Helper()
	var curObj map[string]any
	if err := json.Unmarshal(cur, &curObj); err != nil || curObj == nil {
		return false
	}
	doc, ok := decodeMergePatch(patch)
	if !ok {
		return false
	}
	before, _ := registry.MarshalJSON(curObj)
	curJSON, _ := registry.MarshalJSON(curObj)
	want, err := jsonpatch.MergePatch(curJSON, patch)
	if err != nil {
		t.Fatalf("the library refuses patch %s that the fast path takes: %v", patch, err)
	}
	got, err := registry.MarshalJSON(mergeObject(curObj, doc))
	if err != nil {
		t.Fatalf("encode %s: %v", patch, err)
	}
	if !reflect.DeepEqual(decodeNumbers(t, got), decodeNumbers(t, want)) {
		t.Fatalf("patch %s on %s:\n got %s\nwant %s", patch, cur, got, want)
	}
	if after, _ := registry.MarshalJSON(curObj); !bytes.Equal(before, after) {
		t.Fatalf("patch %s changed the current object: %s", patch, after)
	}
	return true
}

func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

func TestMergeObjectMatchesLibrary(t *testing.T) {
	for _, tc := range []struct {
		name, patch string
		fast        bool // the fast path takes it
	}{
		{"set a member", `{"data":{"k":"w"}}`, true},
		{"add a member", `{"data":{"new":"x"}}`, true},
		{"null removes", `{"data":{"k":null},"spec":null}`, true},
		{"null of an absent member", `{"nothing":null}`, true},
		{"new subtree loses its nulls", `{"status":{"a":null,"b":{"c":null,"d":1},"e":[null,{"f":null}]}}`, true},
		{"member held as null is replaced, pruned", `{"data":{"n":{"p":null,"q":1}}}`, true},
		{"object over a scalar is pruned", `{"spec":{"s":{"x":null,"y":2}}}`, true},
		{"array replaces, nulls kept", `{"spec":{"list":[null,{"a":null}]}}`, true},
		{"scalar over an object is kept as is", `{"metadata":{"labels":"none"}}`, true},
		{"numbers stay as written", `{"spec":{"int":1.0,"float":2e3,"big":12345678901234567890}}`, true},
		{"labels merged", `{"metadata":{"labels":{"x":null,"z":"3"}}}`, true},
		{"duplicate keys, the last wins", `{"data":{"k":"1","k":"2"}}`, true},
		{"escapes", `{"data":{"k":"\u003c\"\\/\u00e9"}}`, true},
		{"empty patch", `{}`, true},
		{"whitespace around", " \n{\"data\":{}}\n ", true},
		{"null patch", `null`, false},
		{"array patch", `[1]`, false},
		{"scalar patch", `"x"`, false},
		{"two values", `{} {}`, false},
		{"trailing garbage", `{}x`, false},
		{"not JSON", `{"a":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mergeDifferential(t, []byte(mergeCur), []byte(tc.patch)); got != tc.fast {
				t.Fatalf("fast path took it: %v, want %v", got, tc.fast)
			}
		})
	}
}

// A write retried after a conflict merges the same patch into a newer
// object: the first merge must not have pruned the patch.
func TestMergeObjectLeavesPatchAlone(t *testing.T) {
	doc, ok := decodeMergePatch([]byte(`{"spec":{"a":null,"b":1}}`))
	if !ok {
		t.Fatal("patch refused")
	}
	_ = mergeObject(map[string]any{}, doc) // spec absent: the patch's spec is pruned in the result
	got := mergeObject(map[string]any{"spec": map[string]any{"a": "old"}}, doc)
	if _, kept := got["spec"].(map[string]any)["a"]; kept {
		t.Fatalf("the second merge kept spec.a: %v", got)
	}
}

func FuzzMergePatch(f *testing.F) {
	f.Add([]byte(mergeCur), []byte(`{"data":{"k":null},"spec":{"list":[null]}}`))
	f.Add([]byte(`{"a":{"b":null}}`), []byte(`{"a":{"c":{"d":null}},"e":[{"f":null}]}`))
	f.Add([]byte(`{"a":1}`), []byte(`{"a":{"b":null}}`))
	f.Fuzz(func(t *testing.T, cur, patch []byte) {
		mergeDifferential(t, cur, patch)
	})
}
