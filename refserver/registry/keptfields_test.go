package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// runVaries matches what differs between two runs of the same writes: the
// times the registry and the field manager stamp from the wall clock (a
// second may pass between the runs), and the uid.
var runVaries = regexp.MustCompile(`"(time|creationTimestamp|deletionTimestamp|uid)":"[^"]*"`)

func sameButTimes(a, b []byte) bool {
	return runVaries.ReplaceAllString(string(a), `"$1":"-"`) == runVaries.ReplaceAllString(string(b), `"$1":"-"`)
}

// TestKeptFieldsWrites: a write that keeps the stored managedFields as
// bytes (an update or merge patch answered from the stored bytes) stores,
// answers and returns what the same write does with them decoded, on each
// of updated's outcomes: a put by the entry's writer or by another, one
// that lists new fields, no change, a finalizer's removal that removes the
// object, and a stored object without managedFields.
func TestKeptFieldsWrites(t *testing.T) {
	ctx := context.Background()
	cm := func(data map[string]any, extra map[string]any) Object {
		md := map[string]any{"name": "cm", "labels": map[string]any{"app": "a"}}
		for k, v := range extra {
			md[k] = v
		}
		return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
	}
	put := func(obj Object) func(Object) (Object, error) {
		return func(Object) (Object, error) { return deepCopy(obj), nil }
	}
	merge := func(key, value string) func(Object) (Object, error) {
		return func(cur Object) (Object, error) {
			out := deepCopy(cur)
			mapOf(out["data"])[key] = value
			delete(meta(out), "resourceVersion")
			return out, nil
		}
	}
	start := cm(map[string]any{"k": "v"}, nil)
	for _, tc := range []struct {
		name     string
		creator  string // "" creates without an entry
		setup    func(r *Registry, k *Kind) error
		manager  string
		fn       func(Object) (Object, error)
		wantGone bool // the write removes the object
	}{
		{"the writer changes a value", "w", nil, "w", put(cm(map[string]any{"k": "v2"}, nil)), false},
		{"the writer adds a key", "w", nil, "w", put(cm(map[string]any{"k": "v", "k2": "x"}, nil)), false},
		{"the writer changes a label only", "w", nil, "w", put(cm(map[string]any{"k": "v"}, map[string]any{"labels": map[string]any{"app": "b"}})), false},
		{"the writer merges a key", "w", nil, "w", merge("k3", "y"), false},
		{"another writer", "w", nil, "other", put(cm(map[string]any{"k": "v2"}, nil)), false},
		{"no change", "w", nil, "w", put(start), false},
		{"stored without managedFields", "", nil, "w", put(cm(map[string]any{"k": "v2"}, nil)), false},
		{"the last finalizer goes", "w", func(r *Registry, k *Kind) error {
			if _, err := r.Mutate(ctx, k, "v1", "default", "cm", WriteOptions{FieldManager: "w"}, func(cur Object) (Object, error) {
				meta(cur)["finalizers"] = []any{"example.com/hold"}
				return cur, nil
			}); err != nil {
				return err
			}
			_, err := r.Delete(ctx, k, "v1", "default", "cm", DeleteOptions{})
			return err
		}, "w", func(cur Object) (Object, error) {
			out := deepCopy(cur)
			delete(meta(out), "finalizers")
			return out, nil
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(answerFromBytes bool) keptOutcome {
				r, k := newTestRegistry(t)
				if _, err := r.Create(ctx, k, "v1", "default", deepCopy(start), WriteOptions{FieldManager: tc.creator}); err != nil {
					t.Fatal(err)
				}
				if tc.setup != nil {
					if err := tc.setup(r, k); err != nil {
						t.Fatal(err)
					}
				}
				o := WriteOptions{FieldManager: tc.manager}
				if answerFromBytes {
					o.Answer = new([]byte)
					if !keepsFields(k, "v1", o) {
						t.Fatal("the write does not keep the managedFields as bytes")
					}
				}
				got, err := r.mutate(ctx, k, "v1", "default", "cm", o, readsNoManagedFields, nil, tc.fn)
				if err != nil {
					t.Fatal(err)
				}
				var out keptOutcome
				kv, err := r.store.Get(ctx, keyOf(k, "default", "cm"), 0)
				if gone := err != nil; gone != tc.wantGone {
					t.Fatalf("gone %v (%v), want %v", gone, err, tc.wantGone)
				}
				out.stored = kv.Value
				out.answer = Answered(o.Answer)
				if out.answer == nil { // not answered from the bytes: the object answers
					if out.returned, err = json.Marshal(got); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			decoded, kept := run(false), run(true)
			if !tc.wantGone && !strings.Contains(string(decoded.stored), `"managedFields"`) && tc.creator != "" {
				t.Errorf("nothing recorded: %s", decoded.stored)
			}
			sameKeptOutcome(t, kept, decoded)
		})
	}
}

// keptOutcome is what a write stored, and answered: from the stored bytes
// (answer), or with the object it returned (returned, its JSON).
type keptOutcome struct{ stored, answer, returned []byte }

// sameKeptOutcome checks that a write with the managedFields kept as bytes
// stored and answered what the same write did with them decoded (whose
// object answered), the wall-clock times and uid aside.
func sameKeptOutcome(t *testing.T, kept, decoded keptOutcome) {
	t.Helper()
	if !sameButTimes(kept.stored, decoded.stored) {
		t.Errorf("stored\n%s\nwant\n%s", kept.stored, decoded.stored)
	}
	answer := kept.answer
	if answer == nil {
		answer = kept.returned
	}
	var a, b any
	if err := json.Unmarshal(answer, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(decoded.returned, &b); err != nil {
		t.Fatal(err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if !sameButTimes(ja, jb) {
		t.Errorf("answered\n%s\nwant\n%s", ja, jb)
	}
}

// TestKeepsFields: which writes keep the stored managedFields as bytes.
func TestKeepsFields(t *testing.T) {
	r, k := newTestRegistry(t)
	crd := r.Lookup("apiextensions.k8s.io", "customresourcedefinitions")
	answer := new([]byte)
	base := WriteOptions{FieldManager: "w", Answer: answer}
	with := func(f func(*WriteOptions)) WriteOptions { o := base; f(&o); return o }
	for _, tc := range []struct {
		name    string
		k       *Kind
		version string
		o       WriteOptions
		want    bool
	}{
		{"a write answered from the bytes", k, "v1", base, true},
		{"the object answers", k, "v1", with(func(o *WriteOptions) { o.Answer = nil }), false},
		{"dry run", k, "v1", with(func(o *WriteOptions) { o.DryRun = true }), false},
		{"status", k, "v1", with(func(o *WriteOptions) { o.Subresource = "status" }), false},
		{"an apply (its KeptApply decides)", k, "v1", with(func(o *WriteOptions) { o.Applied = true }), true},
		{"no manager", k, "v1", with(func(o *WriteOptions) { o.FieldManager = "" }), false},
		{"another version", k, "v2", base, false},
		{"a kind with a hook", crd, "v1", base, false},
	} {
		if got := keepsFields(tc.k, tc.version, tc.o); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestAppendMetadataWith: metadata with managedFields given as bytes
// encodes as it does with them in the map.
func TestAppendMetadataWith(t *testing.T) {
	mf := []any{map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{}}, "manager": "m", "operation": "Update"}}
	mfJSON, err := MarshalJSON(mf)
	if err != nil {
		t.Fatal(err)
	}
	for _, md := range []map[string]any{
		{},
		{"name": "a", "resourceVersion": "5"},
		{"annotations": map[string]any{"a": "b"}, "name": "a", "uid": "u", "labels": map[string]any{}},
		{"managedFields": "replaced", "zzz": 1.5, "aaa": true},
	} {
		with := map[string]any{}
		for k, v := range md {
			with[k] = v
		}
		with["managedFields"] = mf
		want, err := appendMapWithout(nil, with, "resourceVersion", 1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendStoredMetadata(nil, md, mfJSON, 0, nil)
		if err != nil || string(got) != string(want) {
			t.Errorf("%v: %s (%v), want %s", md, got, err, want)
		}
	}
}

// TestKeptFieldsCreate: a create answered from the stored bytes, whose
// entry the field manager writes as bytes, stores and answers what it does
// with the entry as maps, and the object it returns unanswered has it.
func TestKeptFieldsCreate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		obj  Object
	}{
		{"data and labels", Object{"metadata": map[string]any{"name": "cm", "labels": map[string]any{"a": "b"}}, "data": map[string]any{"k": "v"}}},
		{"a generated name", Object{"metadata": map[string]any{"generateName": "cm-"}, "data": map[string]any{"k": "v"}}},
		{"no field to own", Object{"metadata": map[string]any{"name": "cm"}}},
		{"annotations and binary data", Object{"metadata": map[string]any{"name": "cm", "annotations": map[string]any{"example.com/a": "<&>\u2028"}}, "binaryData": map[string]any{"b.bin": "AAE="}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(answerFromBytes bool) (stored, answer []byte) {
				r, k := newTestRegistry(t)
				o := WriteOptions{FieldManager: "w"}
				if answerFromBytes {
					o.Answer = new([]byte)
				}
				got, err := r.Create(ctx, k, "v1", "default", deepCopy(tc.obj), o)
				if err != nil {
					t.Fatal(err)
				}
				kv, err := r.store.Get(ctx, keyOf(k, "default", str(meta(got)["name"])), 0)
				if err != nil {
					t.Fatal(err)
				}
				if answer = Answered(o.Answer); answer == nil {
					answer, _ = json.Marshal(got)
				}
				return kv.Value, answer
			}
			decodedStored, decodedAnswer := run(false)
			keptStored, keptAnswer := run(true)
			generated := regexp.MustCompile(`cm-[a-z0-9]{5}`)
			norm := func(b []byte) []byte { return generated.ReplaceAll(b, []byte("cm-xxxxx")) }
			if !sameButTimes(norm(keptStored), norm(decodedStored)) {
				t.Errorf("stored\n%s\nwant\n%s", keptStored, decodedStored)
			}
			var a, b any
			_ = json.Unmarshal(keptAnswer, &a)
			_ = json.Unmarshal(decodedAnswer, &b)
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !sameButTimes(norm(ja), norm(jb)) {
				t.Errorf("answered\n%s\nwant\n%s", ja, jb)
			}
		})
	}
}

// TestAnswerKept: the object a write returns gets its kept managedFields
// back unless the answer came from the stored bytes.
func TestAnswerKept(t *testing.T) {
	r, _ := newTestRegistry(t)
	mf := []byte(`[{"manager":"w","operation":"Update"}]`)
	for _, tc := range []struct {
		name   string
		answer *[]byte
		want   bool
	}{
		{"no answer asked for", nil, true},
		{"asked for, not given", new([]byte), true},
		{"answered", &[]byte{'{', '}'}, false},
	} {
		c := change{obj: Object{"metadata": map[string]any{"name": "a"}}, mf: mf}
		if err := r.answerKept(&c, WriteOptions{Answer: tc.answer}); err != nil {
			t.Fatal(err)
		}
		_, got := meta(c.obj)["managedFields"]
		if got != tc.want {
			t.Errorf("%s: managedFields put back %v, want %v", tc.name, got, tc.want)
		}
		if got {
			if b, _ := json.Marshal(meta(c.obj)["managedFields"]); string(b) != string(mf) {
				t.Errorf("%s: managedFields %s, want %s", tc.name, b, mf)
			}
		}
	}
}

// TestAnswerKeptUnspliced: where the stored bytes cannot be spliced into
// the answer, the object answers, with its kept managedFields.
func TestAnswerKeptUnspliced(t *testing.T) {
	r, k := newTestRegistry(t)
	mf := []byte(`[{"manager":"w","operation":"Update"}]`)
	c := change{op: opPut, key: keyOf(k, "default", "a"), mf: mf,
		obj:    Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a", "resourceVersion": "7"}},
		stored: []byte(`{ "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"} }`)} // not canonical: no splice
	o := WriteOptions{Answer: new([]byte)}
	r.answer(k, "v1", &c, 7, o)
	if !strings.Contains(string(*o.Answer), `"managedFields":[{"manager":"w","operation":"Update"}]`) {
		t.Errorf("answered %s, want the kept managedFields in it", *o.Answer)
	}
}

// TestMutateHandsManagedFields: only an fn that leaves the managedFields
// alone (MutateMerging, UpdateFrom) may get the object without them; the
// others (a JSON patch can test or copy them) get them decoded.
func TestMutateHandsManagedFields(t *testing.T) {
	ctx := context.Background()
	r, k := newTestRegistry(t)
	if _, err := r.Create(ctx, k, "v1", "default", Object{"metadata": map[string]any{"name": "cm"}, "data": map[string]any{"k": "v"}}, WriteOptions{FieldManager: "w"}); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name   string
		mutate func(ctx context.Context, k *Kind, version, ns, name string, o WriteOptions, fn func(cur Object) (Object, error)) (Object, error)
		want   bool
	}{
		{"Mutate", r.Mutate, true},
		{"MutateReading", r.MutateReading, true},
		{"MutateMerging", r.MutateMerging, false},
	} {
		var got bool
		_, err := tc.mutate(ctx, k, "v1", "default", "cm", WriteOptions{FieldManager: "w", Answer: new([]byte)}, func(cur Object) (Object, error) {
			_, got = meta(cur)["managedFields"]
			out := deepCopy(cur)
			mapOf(out["data"])["k"] = fmt.Sprint(i)
			delete(meta(out), "resourceVersion")
			return out, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: fn got managedFields %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestKeptFieldsApply: an apply through MutateApplying stores, answers and
// returns what the same apply does from the decoded managedFields, whether
// the field manager answers from the bytes (an applier's first apply onto
// an object its creator tracks, one that changes ownership only) or
// declines to the whole object (a re-apply, a forced conflict, an object
// stored without managedFields), and a conflict fails both ways alike.
func TestKeptFieldsApply(t *testing.T) {
	ctx := context.Background()
	start := Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm", "labels": map[string]any{"app": "a"}},
		"data": map[string]any{"k": "v"}}
	config := func(data map[string]any) Object {
		return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cm"}, "data": data}
	}
	for _, tc := range []struct {
		name       string
		creator    string // "" creates without an entry
		before     Object // applied by "a" first, when set
		applied    Object
		force      bool
		fromBytes  bool   // the field manager answers from the bytes
		wantStatus string // a failed apply's reason
	}{
		{"a first apply adds a key", "w", nil, config(map[string]any{"applied": "1"}), false, true, ""},
		{"a first apply of live's own value", "w", nil, config(map[string]any{"k": "v"}), false, true, ""},
		{"a first apply that conflicts", "w", nil, config(map[string]any{"k": "v2"}), false, false, "Conflict"},
		{"a forced first apply that conflicts", "w", nil, config(map[string]any{"k": "v2"}), true, false, ""},
		{"a second apply", "w", config(map[string]any{"applied": "1"}), config(map[string]any{"applied": "2"}), false, false, ""},
		{"stored without managedFields", "", nil, config(map[string]any{"applied": "1"}), false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				keptOutcome
				reason    string
				fromBytes bool
			}
			run := func(answerFromBytes bool) outcome {
				r, k := newTestRegistry(t)
				fm := k.FieldManagers["v1"]
				if _, err := r.Create(ctx, k, "v1", "default", deepCopy(start), WriteOptions{FieldManager: tc.creator}); err != nil {
					t.Fatal(err)
				}
				apply := func(applied Object, force bool, o WriteOptions, out *outcome) (Object, error) {
					stored := func(cur Object, mf []byte) (Object, []byte, bool, error) {
						obj, written, ok := fm.ApplyStored(cur, mf, applied, "a")
						out.fromBytes = out.fromBytes || ok
						return obj, written, ok, nil
					}
					return r.MutateApplying(ctx, k, "v1", "default", "cm", o, stored, func(cur Object) (Object, error) {
						return fm.Apply(cur, applied, "a", force)
					})
				}
				var out outcome
				if tc.before != nil {
					if _, err := apply(tc.before, false, WriteOptions{FieldManager: "a", Applied: true}, &outcome{}); err != nil {
						t.Fatal(err)
					}
				}
				o := WriteOptions{FieldManager: "a", Applied: true}
				if answerFromBytes {
					o.Answer = new([]byte)
				}
				got, err := apply(tc.applied, tc.force, o, &out)
				if err != nil {
					out.reason = string(apierrors.ReasonForError(err))
					return out
				}
				kv, err := r.store.Get(ctx, keyOf(k, "default", "cm"), 0)
				if err != nil {
					t.Fatal(err)
				}
				out.stored = kv.Value
				out.answer = Answered(o.Answer)
				if out.answer == nil {
					if out.returned, err = json.Marshal(got); err != nil {
						t.Fatal(err)
					}
				}
				return out
			}
			decoded, kept := run(false), run(true)
			if kept.fromBytes != tc.fromBytes || decoded.fromBytes {
				t.Fatalf("answered from the bytes: %v (decoded run %v), want %v", kept.fromBytes, decoded.fromBytes, tc.fromBytes)
			}
			if kept.reason != tc.wantStatus || decoded.reason != tc.wantStatus {
				t.Fatalf("failed with %q (decoded run %q), want %q", kept.reason, decoded.reason, tc.wantStatus)
			}
			if tc.wantStatus != "" {
				return
			}
			sameKeptOutcome(t, kept.keptOutcome, decoded.keptOutcome)
		})
	}
}
