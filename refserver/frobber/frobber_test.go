package frobber

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/fieldcheck"
)

// server is the registry's write and read paths for Frobbers in miniature:
// one stored object in the storage version.
type server struct {
	t      *testing.T
	stored map[string]any
}

func parse(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func frob(t *testing.T, version, fields string) map[string]any {
	t.Helper()
	obj := parse(t, fields)
	obj["apiVersion"] = Group + "/" + version
	obj["kind"] = Kind
	obj["metadata"] = map[string]any{"name": "fr", "namespace": "ns"}
	return obj
}

// write runs Default, Normalize, Validate on obj (a create when nothing is
// stored, else an update) and stores it; the result is obj read back in its
// version.
func (s *server) write(obj map[string]any) (map[string]any, field.ErrorList) {
	s.t.Helper()
	version, err := versionOf(obj)
	if err != nil {
		s.t.Fatal(err)
	}
	var old map[string]any
	if s.stored != nil {
		if old, err = Convert(s.stored, version); err != nil {
			s.t.Fatal(err)
		}
	}
	if err := Default(obj, version); err != nil {
		s.t.Fatal(err)
	}
	if err := Normalize(obj, old, version); err != nil {
		s.t.Fatal(err)
	}
	if errs := Validate(obj, old); len(errs) > 0 {
		return nil, errs
	}
	if s.stored, err = Convert(obj, StorageVersion); err != nil {
		s.t.Fatal(err)
	}
	return s.read(version), nil
}

func (s *server) read(version string) map[string]any {
	s.t.Helper()
	out, err := Convert(s.stored, version)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

// mergePatch applies an RFC 7386 merge patch to the stored object read in
// version, then writes the result.
func (s *server) mergePatch(version, patch string) (map[string]any, field.ErrorList) {
	s.t.Helper()
	return s.write(merge(s.read(version), parse(s.t, patch)).(map[string]any))
}

func merge(doc any, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := doc.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
		} else {
			dm[k] = merge(dm[k], v)
		}
	}
	return dm
}

// fields is an object's Frobber fields as JSON, without metadata and apiVersion.
func fields(obj map[string]any) string {
	c := map[string]any{}
	for k, v := range obj {
		if k != "metadata" && k != "apiVersion" && k != "kind" {
			c[k] = v
		}
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func errPaths(errs field.ErrorList) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field+": "+string(e.Type))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

type step struct {
	version string
	body    string // full object fields (update) or merge patch (patch)
	patch   bool
	want    string // the fields read back in the step's version, or
	errs    string // the validation errors (Field: Type)
}

func TestFrobberCompatibilityRules(t *testing.T) {
	cases := []struct {
		name  string
		steps []step
		reads map[string]string // after the last step: version → fields read
	}{
		{"old client creates with only param (v6)", []step{
			{version: V6, body: `{"height":42,"width":3,"param":"super"}`, want: `{"height":42,"param":"super","params":["super"],"width":3}`},
		}, map[string]string{V7beta1: `{"height":42,"params":["super"],"width":3}`}},
		{"new client creates with params (v7beta1); v6 reads param = params[0]", []step{
			{version: V7beta1, body: `{"height":3,"width":42,"params":["x","y"]}`, want: `{"height":3,"params":["x","y"],"width":42}`},
		}, map[string]string{V6: `{"height":3,"param":"x","params":["x","y"],"width":42}`}},
		{"new client on v6 sets both, matching", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
		}, map[string]string{V7beta1: `{"height":0,"params":["a","b"],"width":1}`}},
		{"v6 create with disagreeing fields is refused", []step{
			{version: V6, body: `{"param":"a","params":["b","a"]}`, errs: "params[0]: FieldValueInvalid"},
		}, nil},
		{"v6 create with params but no param is refused", []step{
			{version: V6, body: `{"height":1,"params":["super"]}`, errs: "param: FieldValueRequired"},
		}, nil},
		{"merge patch clearing param clears params (the singular/plural ambiguity)", []step{
			{version: V6, body: `{"height":42,"width":3,"param":"super"}`, want: `{"height":42,"param":"super","params":["super"],"width":3}`},
			{version: V6, patch: true, body: `{"param":""}`, want: `{"height":42,"width":3}`},
		}, map[string]string{V7beta1: `{"height":42,"width":3}`}},
		{"merge patch removing param (null) clears params", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, patch: true, body: `{"param":null}`, want: `{"height":0,"width":1}`},
		}, nil},
		{"update clearing param with params unchanged clears both", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"param":"","params":["a","b"]}`, want: `{"height":0,"width":1}`},
		}, nil},
		{"update changing only the plural (new client keeps params[0] = param)", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"param":"a","params":["a","c","d"]}`, want: `{"height":0,"param":"a","params":["a","c","d"],"width":1}`},
		}, map[string]string{V7beta1: `{"height":0,"params":["a","c","d"],"width":1}`}},
		{"update changing only the plural so params[0] disagrees is refused", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"param":"a","params":["b"]}`, errs: "params[0]: FieldValueInvalid"},
		}, map[string]string{V6: `{"height":0,"param":"a","params":["a","b"],"width":1}`}},
		{"update changing param with params unchanged sets params = [param]", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"param":"c","params":["a","b"]}`, want: `{"height":0,"param":"c","params":["c"],"width":1}`},
		}, nil},
		{"old client's update omits params and keeps param: params kept", []step{
			{version: V6, body: `{"height":1,"param":"a","params":["a","b"]}`, want: `{"height":1,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"height":2,"param":"a"}`, want: `{"height":2,"param":"a","params":["a","b"],"width":1}`},
		}, nil},
		{"old client's merge patch of another field keeps params", []step{
			{version: V7beta1, body: `{"params":["x","y"]}`, want: `{"height":0,"params":["x","y"],"width":1}`},
			{version: V6, patch: true, body: `{"height":7}`, want: `{"height":7,"param":"x","params":["x","y"],"width":1}`},
		}, nil},
		{"old client's update changing param without params reads as [param]", []step{
			{version: V6, body: `{"param":"a","params":["a","b"]}`, want: `{"height":0,"param":"a","params":["a","b"],"width":1}`},
			{version: V6, body: `{"param":"c"}`, want: `{"height":0,"param":"c","params":["c"],"width":1}`},
		}, nil},
		{"update clearing param and changing params is refused", []step{
			{version: V6, body: `{"param":"a","params":["a"]}`, want: `{"height":0,"param":"a","params":["a"],"width":1}`},
			{version: V6, body: `{"params":["x"]}`, errs: "param: FieldValueRequired"},
		}, nil},
		{"v7beta1 update replaces params; v6 follows", []step{
			{version: V6, body: `{"param":"a"}`, want: `{"height":0,"param":"a","params":["a"],"width":1}`},
			{version: V7beta1, body: `{"params":["p","q"]}`, want: `{"height":0,"params":["p","q"],"width":1}`},
		}, map[string]string{V6: `{"height":0,"param":"p","params":["p","q"],"width":1}`}},
		{"v7beta1 empty param in the list is refused", []step{
			{version: V7beta1, body: `{"params":["p",""]}`, errs: "params[1]: FieldValueRequired"},
		}, nil},
		{"negative height is refused in both versions", []step{
			{version: V6, body: `{"height":-1}`, errs: "height: FieldValueInvalid"},
			{version: V7beta1, body: `{"height":-1}`, errs: "height: FieldValueInvalid"},
		}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &server{t: t}
			for i, st := range tc.steps {
				var got map[string]any
				var errs field.ErrorList
				if st.patch {
					got, errs = s.mergePatch(st.version, st.body)
				} else {
					got, errs = s.write(frob(t, st.version, st.body))
				}
				if st.errs != "" {
					if errPaths(errs) != st.errs {
						t.Fatalf("step %d: errors %q, want %q (%v)", i, errPaths(errs), st.errs, errs)
					}
					continue
				}
				if len(errs) > 0 {
					t.Fatalf("step %d: %v", i, errs)
				}
				if f := fields(got); f != st.want {
					t.Fatalf("step %d: read back %s\n want %s", i, f, st.want)
				}
			}
			for v, want := range tc.reads {
				if f := fields(s.read(v)); f != want {
					t.Errorf("read in %s: %s\n want %s", v, f, want)
				}
			}
		})
	}
}

func TestRoundTrips(t *testing.T) {
	objects := []struct{ version, fields string }{
		{V6, `{"height":42,"param":"super","params":["super"],"width":3}`},
		{V6, `{"height":1,"param":"a","params":["a","b","c"],"width":9}`},
		{V6, `{"height":0,"width":1}`},
		{V7beta1, `{"height":3,"params":["x","y"],"width":42}`},
		{V7beta1, `{"height":0,"params":["only"],"width":1}`},
		{V7beta1, `{"height":5,"width":2}`},
	}
	for _, o := range objects {
		other := V7beta1
		if o.version == V7beta1 {
			other = V6
		}
		in := frob(t, o.version, o.fields)
		in["metadata"].(map[string]any)["labels"] = map[string]any{"a": "b"}
		there, err := Convert(in, other)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Convert(there, o.version)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalized(back), normalized(in)) {
			t.Errorf("%s → %s → %s:\n got %v\nwant %v", o.version, other, o.version, back, in)
		}
		if there["apiVersion"] != Group+"/"+other || back["apiVersion"] != Group+"/"+o.version || there["kind"] != Kind {
			t.Errorf("apiVersion/kind: %v %v", there["apiVersion"], back["apiVersion"])
		}
		if _, has := there["param"]; has != (other == V6 && there["params"] != nil) {
			t.Errorf("%s has param %v", other, there["param"])
		}
	}
}

// normalized is obj through JSON, so numbers compare equal whatever their Go type.
func normalized(obj map[string]any) any {
	b, _ := json.Marshal(obj)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func TestReadFillsPluralFromSingular(t *testing.T) {
	// An object stored before params existed has only param.
	stored := frob(t, V6, `{"height":1,"width":2,"param":"legacy"}`)
	for v, want := range map[string]string{
		V6:      `{"height":1,"param":"legacy","params":["legacy"],"width":2}`,
		V7beta1: `{"height":1,"params":["legacy"],"width":2}`,
	} {
		got, err := Convert(stored, v)
		if err != nil {
			t.Fatal(err)
		}
		if fields(got) != want {
			t.Errorf("%s: %s, want %s", v, fields(got), want)
		}
	}
}

func TestDefaults(t *testing.T) {
	for _, v := range Versions {
		for _, tc := range []struct{ in, want string }{
			{`{}`, `{"width":1}`},
			{`{"width":0}`, `{"width":1}`},
			{`{"width":5}`, `{"width":5}`},
			{`{"height":2}`, `{"height":2,"width":1}`},
		} {
			obj := frob(t, v, tc.in)
			if err := Default(obj, v); err != nil {
				t.Fatal(err)
			}
			if fields(obj) != tc.want {
				t.Errorf("%s: Default(%s) = %s, want %s", v, tc.in, fields(obj), tc.want)
			}
			// Reads are defaulted too, the same in both versions.
			for _, to := range Versions {
				got, err := Convert(frob(t, v, tc.in), to)
				if err != nil {
					t.Fatal(err)
				}
				if w, _ := intField(got, "width"); w != mustInt(t, parse(t, tc.want)["width"]) {
					t.Errorf("%s → %s: width %d", v, to, w)
				}
			}
		}
		if err := Default(frob(t, v, `{"width":"wide"}`), v); err == nil {
			t.Errorf("%s: Default accepted a string width", v)
		}
	}
	if err := Default(map[string]any{}, "v8"); err == nil {
		t.Error("Default accepted version v8")
	}
}

func mustInt(t *testing.T, v any) int64 {
	n, err := intField(map[string]any{"n": v}, "n")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestConvertRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		obj map[string]any
		to  string
	}{
		{map[string]any{"apiVersion": "v1", "kind": "Frobber"}, V6},
		{map[string]any{"apiVersion": Group + "/v8", "kind": "Frobber"}, V6},
		{frob(t, V6, `{}`), "v8"},
		{frob(t, V6, `{"params":"a"}`), V7beta1},
		{frob(t, V6, `{"params":[1]}`), V7beta1},
		{frob(t, V6, `{"param":1}`), V7beta1},
		{frob(t, V6, `{"height":1.5}`), V7beta1},
	} {
		if _, err := Convert(tc.obj, tc.to); err == nil {
			t.Errorf("Convert(%v, %s) succeeded", tc.obj, tc.to)
		}
	}
}

// The Go types decode with field validation: v7beta1 does not know param.
func TestTypedDecoding(t *testing.T) {
	d7 := fieldcheck.Decoder{GVK: GVK(V7beta1), Schema: fieldcheck.Typed(NewTyped(V7beta1))}
	obj, warnings, err := d7.Decode([]byte(`{"apiVersion":"compat.apiconform.io/v7beta1","kind":"Frobber","metadata":{"name":"f"},"param":"a","params":["a"]}`), fieldcheck.JSON, fieldcheck.Warn)
	if err != nil || !reflect.DeepEqual(warnings, []string{`unknown field "param"`}) {
		t.Fatalf("warnings %q, error %v", warnings, err)
	}
	if _, has := obj["param"]; has {
		t.Errorf("param kept in v7beta1: %v", obj)
	}
	d6 := fieldcheck.Decoder{GVK: GVK(V6), Schema: fieldcheck.Typed(NewTyped(V6))}
	_, _, err = d6.Decode([]byte(`{"apiVersion":"compat.apiconform.io/v6","kind":"Frobber","metadata":{"name":"f"},"height":"tall"}`), fieldcheck.JSON, fieldcheck.Ignore)
	if err == nil || err.Error() != `Frobber in version "v6" cannot be handled as a Frobber: json: cannot unmarshal string into Go struct field Frobber.height of type int32` {
		t.Errorf("type error: %v", err)
	}
	if NewTyped("v8") != nil {
		t.Error("NewTyped(v8) is not nil")
	}
}

// The published schemas match the Go types and work for apply.
func TestOpenAPISchemas(t *testing.T) {
	for _, v := range Versions {
		props := Schema(v)["properties"].(map[string]any)
		var names []string
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		var tags []string
		typ := reflect.TypeOf(NewTyped(v)()).Elem()
		for i := 0; i < typ.NumField(); i++ {
			tag := strings.Split(typ.Field(i).Tag.Get("json"), ",")[0]
			switch tag {
			case "":
				tags = append(tags, "apiVersion", "kind")
			default:
				tags = append(tags, tag)
			}
		}
		sort.Strings(tags)
		if !reflect.DeepEqual(names, tags) {
			t.Errorf("%s: schema properties %v, Go fields %v", v, names, tags)
		}
		comps := OpenAPIComponents(v)
		if comps[ComponentName(v, Kind)] == nil || comps[ComponentName(v, ListKind)] == nil {
			t.Errorf("%s: components %v", v, comps)
		}
		m, err := apply.ForSchema(GVK(v), Schema(v))
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		obj, err := m.Apply(nil, frob(t, v, `{"height":1,"params":["a"]}`), "kubectl", false)
		if err != nil {
			t.Fatalf("%s: apply: %v", v, err)
		}
		if obj["metadata"].(map[string]any)["managedFields"] == nil {
			t.Errorf("%s: no managedFields", v)
		}
	}
	if Schema("v8") != nil || ListSchema("v8") != nil || OpenAPIComponents("v8") != nil {
		t.Error("schemas for v8")
	}
}
