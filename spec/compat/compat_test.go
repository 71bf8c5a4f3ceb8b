package compat

import (
	"fmt"
	"github.com/apiconform/apiconform/spec/catalog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/openapi"
)

// realDir holds OpenAPI documents of real Kubernetes releases in the shared
// tree ("" when there is none: the tests that need them skip).
var realDir = func() string {
	if d := catalog.SharedDir(); d != "" {
		return filepath.Join(d, "testdata", "openapi")
	}
	return ""
}()

func load(t testing.TB, path string) *openapi.Document {
	t.Helper()
	d, err := openapi.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return d
}

func loadReal(t testing.TB, name string) *openapi.Document {
	t.Helper()
	path := filepath.Join(realDir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real Kubernetes OpenAPI document %s not available: %v", path, err)
	}
	return load(t, path)
}

func findings(r *openapi.Report, rule, location string) []openapi.Finding {
	var out []openapi.Finding
	for _, f := range r.Findings {
		if f.Rule == rule && (location == "" || f.Location() == location) {
			out = append(out, f)
		}
	}
	return out
}

func dump(r *openapi.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n  %s %s %s: %s", f.Level, f.Rule, f.Location(), f.Message)
	}
	return b.String()
}

type expect struct {
	rule, location string
	level          openapi.Level
}

func checkExpectations(t *testing.T, r *openapi.Report, want []expect) {
	t.Helper()
	for _, w := range want {
		got := findings(r, w.rule, w.location)
		if len(got) != 1 {
			t.Errorf("want one %s at %s, got %d; findings:%s", w.rule, w.location, len(got), dump(r))
			continue
		}
		if got[0].Level != w.level {
			t.Errorf("%s at %s: level %s, want %s", w.rule, w.location, got[0].Level, w.level)
		}
	}
	if len(r.Findings) != len(want) {
		t.Errorf("got %d findings, want %d:%s", len(r.Findings), len(want), dump(r))
	}
}

func TestPlantedCRDChanges(t *testing.T) {
	r := Compare(load(t, "testdata/widgets-old.yaml"), load(t, "testdata/widgets-new.yaml"))
	const spec = "example.com/v1beta1/Widget#/properties/spec/properties/"
	checkExpectations(t, r, []expect{
		{DefaultChanged, spec + "size", openapi.Breaking},
		{ListTypeChanged, spec + "ports", openapi.Breaking},
		{FieldBecameImmutable, spec + "class", openapi.Breaking},
		{ValidationTightened, "example.com/v1beta1/Widget#/properties/status/properties/phase", openapi.Info},
		{NewVersionPreferred, "example.com/v1/Widget", openapi.Breaking},
		{NewVersionStorage, "example.com/v1/Widget", openapi.Breaking},
		{VersionRemoved, "example.com/v1alpha1/Gadget", openapi.Info},
	})
}

func TestPlantedSwaggerChanges(t *testing.T) {
	r := Compare(load(t, "testdata/swagger-old.json"), load(t, "testdata/swagger-new.json"))
	checkExpectations(t, r, []expect{
		{EnumValueAdded, "com.example.v1.FrobberSpec#/properties/restartPolicy", openapi.Breaking},
		{PatchStrategyChanged, "com.example.v1.FrobberSpec#/properties/containers", openapi.Breaking},
		{PatchStrategyChanged, "com.example.v1.FrobberSpec#/properties/strategy", openapi.Breaking},
		{FormatChanged, "com.example.v1.SchemaProps#/properties/maxLength", openapi.Breaking},
		{FieldRemoved, "com.example.v1.Unreached#/properties/dropped", openapi.Breaking},
		{DefinitionRemoved, "com.example.v1.Helper", openapi.Breaking},
		{RequiredAdded, "com.example.v1.FrobberStatus#/properties/phase", openapi.Info},
		{VersionRemoved, "example.com/v1beta1", openapi.Warning}, // example.com/v1 serves Frobber in both
	})
	// Reported once per location, with what reaches it.
	f := findings(r, EnumValueAdded, "")[0]
	if strings.Join(f.Operations, ",") != "readExampleV1NamespacedFrobber,patchExampleV1NamespacedFrobber" {
		t.Errorf("operations reaching FrobberSpec: %v", f.Operations)
	}
	if strings.Join(f.Kinds, ",") != "example.com/v1, Kind=Frobber" {
		t.Errorf("kinds reaching FrobberSpec: %v", f.Kinds)
	}
}

// TestCatchesWhatGeneralDiffToolsMiss: one case per gap the issue names.
func TestCatchesWhatGeneralDiffToolsMiss(t *testing.T) {
	crd := Compare(load(t, "testdata/widgets-old.yaml"), load(t, "testdata/widgets-new.yaml"))
	sw := Compare(load(t, "testdata/swagger-old.json"), load(t, "testdata/swagger-new.json"))
	cases := []struct {
		name     string
		r        *openapi.Report
		rule     string
		location string
	}{
		{"changed default", crd, DefaultChanged, "example.com/v1beta1/Widget#/properties/spec/properties/size"},
		{"list-type change", crd, ListTypeChanged, "example.com/v1beta1/Widget#/properties/spec/properties/ports"},
		{"added immutability rule", crd, FieldBecameImmutable, "example.com/v1beta1/Widget#/properties/spec/properties/class"},
		{"schema reachable from no path (CRD)", crd, DefaultChanged, "example.com/v1beta1/Widget#/properties/spec/properties/size"},
		{"schema reachable from no path (Swagger definition)", sw, FieldRemoved, "com.example.v1.Unreached#/properties/dropped"},
		{"Swagger 2.0 definitions", sw, PatchStrategyChanged, "com.example.v1.FrobberSpec#/properties/containers"},
		{"Swagger 2.0 extension beside a $ref", sw, PatchStrategyChanged, "com.example.v1.FrobberSpec#/properties/strategy"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(findings(c.r, c.rule, c.location)) != 1 {
				t.Fatalf("missing %s at %s:%s", c.rule, c.location, dump(c.r))
			}
		})
	}
}

// crdVersion is one version of the generated test CRD; spec and status are JSON schemas.
type crdVersion struct {
	name                string
	storage, deprecated bool
	spec, status        string
}

func crdDoc(t *testing.T, versions ...crdVersion) *openapi.Document {
	t.Helper()
	var vs []string
	for _, v := range versions {
		spec, status := v.spec, v.status
		if spec == "" {
			spec = `{"type":"object"}`
		}
		if status == "" {
			status = `{"type":"object"}`
		}
		vs = append(vs, fmt.Sprintf(`{"name":%q,"served":true,"storage":%t,"deprecated":%t,"schema":{"openAPIV3Schema":{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},"spec":%s,"status":%s}}}}`,
			v.name, v.storage, v.deprecated, spec, status))
	}
	doc := fmt.Sprintf(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"kind":"Widget","listKind":"WidgetList","plural":"widgets"},"scope":"Namespaced","versions":[%s]}}`, strings.Join(vs, ","))
	d, err := openapi.LoadBytes([]byte(doc), t.Name())
	if err != nil {
		t.Fatalf("load generated CRD: %v\n%s", err, doc)
	}
	return d
}

func field(schema string) string {
	return `{"type":"object","properties":{"f":` + schema + `}}`
}

const fieldLoc = "example.com/v1/Widget#/properties/spec/properties/f"

// TestRules: every rule with a positive case (reported) and a negative case (not reported).
func TestRules(t *testing.T) {
	v1 := func(spec string) crdVersion { return crdVersion{name: "v1", storage: true, spec: spec} }
	cases := []struct {
		rule     string
		name     string
		old, new []crdVersion
		want     bool
		level    openapi.Level
	}{
		{FieldRemoved, "removed", []crdVersion{v1(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`)}, []crdVersion{v1(`{"type":"object","properties":{"a":{"type":"string"}}}`)}, true, openapi.Breaking},
		{FieldRemoved, "added is fine", []crdVersion{v1(`{"type":"object","properties":{"a":{"type":"string"}}}`)}, []crdVersion{v1(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`)}, false, 0},
		{TypeChanged, "string to integer", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"integer"}`))}, true, openapi.Breaking},
		{TypeChanged, "same type", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","description":"x"}`))}, false, 0},
		{FormatChanged, "int32 to int64", []crdVersion{v1(field(`{"type":"integer","format":"int32"}`))}, []crdVersion{v1(field(`{"type":"integer","format":"int64"}`))}, true, openapi.Breaking},
		{FormatChanged, "same format", []crdVersion{v1(field(`{"type":"integer","format":"int32"}`))}, []crdVersion{v1(field(`{"type":"integer","format":"int32"}`))}, false, 0},
		{RequiredAdded, "optional became required", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(`{"type":"object","required":["f"],"properties":{"f":{"type":"string"}}}`)}, true, openapi.Breaking},
		{RequiredAdded, "still optional", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string"}`))}, false, 0},
		{RequiredAdded, "a CRD enforces its schema, whatever the description said", []crdVersion{v1(field(`{"type":"string","description":"f names the thing. Required."}`))}, []crdVersion{v1(`{"type":"object","required":["f"],"properties":{"f":{"type":"string","description":"f names the thing. Required."}}}`)}, true, openapi.Breaking},
		{RequiredAdded, "alpha field", []crdVersion{v1(field(`{"type":"string","description":"This field is alpha-level and is only honored by servers that enable the Frob feature."}`))}, []crdVersion{v1(`{"type":"object","required":["f"],"properties":{"f":{"type":"string","description":"This field is alpha-level and is only honored by servers that enable the Frob feature."}}}`)}, true, openapi.Warning},
		{ValidationRelaxed, "required dropped", []crdVersion{v1(`{"type":"object","required":["f"],"properties":{"f":{"type":"string"}}}`)}, []crdVersion{v1(field(`{"type":"string"}`))}, true, openapi.Breaking},
		{EnumValueAdded, "value added", []crdVersion{v1(field(`{"type":"string","enum":["A"]}`))}, []crdVersion{v1(field(`{"type":"string","enum":["A","B"]}`))}, true, openapi.Breaking},
		{EnumValueAdded, "same values reordered", []crdVersion{v1(field(`{"type":"string","enum":["A","B"]}`))}, []crdVersion{v1(field(`{"type":"string","enum":["B","A"]}`))}, false, 0},
		{EnumValueRemoved, "value removed", []crdVersion{v1(field(`{"type":"string","enum":["A","B"]}`))}, []crdVersion{v1(field(`{"type":"string","enum":["A"]}`))}, true, openapi.Warning},
		{EnumValueRemoved, "value added only", []crdVersion{v1(field(`{"type":"string","enum":["A"]}`))}, []crdVersion{v1(field(`{"type":"string","enum":["A","B"]}`))}, false, 0},
		{ValidationTightened, "maxLength lowered", []crdVersion{v1(field(`{"type":"string","maxLength":10}`))}, []crdVersion{v1(field(`{"type":"string","maxLength":5}`))}, true, openapi.Breaking},
		{ValidationTightened, "maxItems lowered", []crdVersion{v1(field(`{"type":"array","maxItems":10,"items":{"type":"string"}}`))}, []crdVersion{v1(field(`{"type":"array","maxItems":3,"items":{"type":"string"}}`))}, true, openapi.Breaking},
		{ValidationTightened, "maxProperties lowered", []crdVersion{v1(field(`{"type":"object","maxProperties":10}`))}, []crdVersion{v1(field(`{"type":"object","maxProperties":3}`))}, true, openapi.Breaking},
		{ValidationTightened, "minProperties raised", []crdVersion{v1(field(`{"type":"object"}`))}, []crdVersion{v1(field(`{"type":"object","minProperties":1}`))}, true, openapi.Breaking},
		{ValidationTightened, "minimum raised", []crdVersion{v1(field(`{"type":"integer","minimum":0}`))}, []crdVersion{v1(field(`{"type":"integer","minimum":1}`))}, true, openapi.Breaking},
		{ValidationTightened, "maximum lowered", []crdVersion{v1(field(`{"type":"integer","maximum":10}`))}, []crdVersion{v1(field(`{"type":"integer","maximum":9}`))}, true, openapi.Breaking},
		{ValidationTightened, "minLength raised", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","minLength":1}`))}, true, openapi.Breaking},
		{ValidationTightened, "minItems raised", []crdVersion{v1(field(`{"type":"array","items":{"type":"string"}}`))}, []crdVersion{v1(field(`{"type":"array","minItems":1,"items":{"type":"string"}}`))}, true, openapi.Breaking},
		{ValidationTightened, "pattern added", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","pattern":"^[a-z]+$"}`))}, true, openapi.Breaking},
		{ValidationTightened, "pattern changed", []crdVersion{v1(field(`{"type":"string","pattern":"^[a-z]+$"}`))}, []crdVersion{v1(field(`{"type":"string","pattern":"^[a-z0-9]+$"}`))}, true, openapi.Breaking},
		{ValidationTightened, "CEL rule added", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","x-kubernetes-validations":[{"rule":"self.size() < 10"}]}`))}, true, openapi.Breaking},
		{ValidationTightened, "unchanged bounds", []crdVersion{v1(field(`{"type":"string","maxLength":5,"pattern":"^a$"}`))}, []crdVersion{v1(field(`{"type":"string","maxLength":5,"pattern":"^a$"}`))}, false, 0},
		{ValidationTightened, "status tightening is allowed", []crdVersion{{name: "v1", storage: true, status: field(`{"type":"string"}`)}}, []crdVersion{{name: "v1", storage: true, status: field(`{"type":"string","maxLength":5}`)}}, true, openapi.Info},
		{ValidationRelaxed, "maxLength raised", []crdVersion{v1(field(`{"type":"string","maxLength":5}`))}, []crdVersion{v1(field(`{"type":"string","maxLength":10}`))}, true, openapi.Breaking},
		{ValidationRelaxed, "pattern removed", []crdVersion{v1(field(`{"type":"string","pattern":"^a$"}`))}, []crdVersion{v1(field(`{"type":"string"}`))}, true, openapi.Breaking},
		{ValidationRelaxed, "tightening is not relaxing", []crdVersion{v1(field(`{"type":"string","maxLength":10}`))}, []crdVersion{v1(field(`{"type":"string","maxLength":5}`))}, false, 0},
		{FieldBecameImmutable, "self == oldSelf added", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"immutable"}]}`))}, true, openapi.Breaking},
		{FieldBecameImmutable, "rule on the parent names the field", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(`{"type":"object","x-kubernetes-validations":[{"rule":"self.f == oldSelf.f"}],"properties":{"f":{"type":"string"}}}`)}, true, openapi.Breaking},
		{FieldBecameImmutable, "other CEL rule", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","x-kubernetes-validations":[{"rule":"self.startsWith('a')"}]}`))}, false, 0},
		{DefaultChanged, "default changed", []crdVersion{v1(field(`{"type":"string","default":"a"}`))}, []crdVersion{v1(field(`{"type":"string","default":"b"}`))}, true, openapi.Breaking},
		{DefaultChanged, "default removed", []crdVersion{v1(field(`{"type":"string","default":"a"}`))}, []crdVersion{v1(field(`{"type":"string"}`))}, true, openapi.Breaking},
		{DefaultChanged, "default kept", []crdVersion{v1(field(`{"type":"string","default":"a"}`))}, []crdVersion{v1(field(`{"type":"string","default":"a"}`))}, false, 0},
		{DefaultAdded, "default added", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","default":"a"}`))}, true, openapi.Warning},
		{DefaultAdded, "no default", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string"}`))}, false, 0},
		{DefaultNotAllVersions, "default only in v1",
			[]crdVersion{v1(field(`{"type":"string"}`)), {name: "v1beta1", spec: field(`{"type":"string"}`)}},
			[]crdVersion{v1(field(`{"type":"string","default":"a"}`)), {name: "v1beta1", spec: field(`{"type":"string"}`)}}, true, openapi.Breaking},
		{DefaultNotAllVersions, "default in every version",
			[]crdVersion{v1(field(`{"type":"string"}`)), {name: "v1beta1", spec: field(`{"type":"string"}`)}},
			[]crdVersion{v1(field(`{"type":"string","default":"a"}`)), {name: "v1beta1", spec: field(`{"type":"string","default":"a"}`)}}, false, 0},
		{ListTypeChanged, "atomic to map", []crdVersion{v1(field(`{"type":"array","items":{"type":"object"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object"}}`))}, true, openapi.Breaking},
		{ListTypeChanged, "unset equals atomic", []crdVersion{v1(field(`{"type":"array","items":{"type":"string"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}}`))}, false, 0},
		{ListMapKeysChanged, "keys changed", []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","protocol"],"items":{"type":"object"}}`))}, true, openapi.Breaking},
		{ListMapKeysChanged, "keys kept", []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object"}}`))}, false, 0},
		{MapTypeChanged, "granular to atomic", []crdVersion{v1(field(`{"type":"object"}`))}, []crdVersion{v1(field(`{"type":"object","x-kubernetes-map-type":"atomic"}`))}, true, openapi.Breaking},
		{MapTypeChanged, "unset equals granular", []crdVersion{v1(field(`{"type":"object"}`))}, []crdVersion{v1(field(`{"type":"object","x-kubernetes-map-type":"granular"}`))}, false, 0},
		{PatchStrategyChanged, "merge added", []crdVersion{v1(field(`{"type":"array","items":{"type":"string"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-strategy":"merge","items":{"type":"string"}}`))}, true, openapi.Breaking},
		{PatchStrategyChanged, "kept", []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-strategy":"merge","items":{"type":"string"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-strategy":"merge","items":{"type":"string"}}`))}, false, 0},
		{PatchMergeKeyChanged, "key changed", []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-merge-key":"name","items":{"type":"object"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-merge-key":"id","items":{"type":"object"}}`))}, true, openapi.Breaking},
		{PatchMergeKeyChanged, "kept", []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-merge-key":"name","items":{"type":"object"}}`))}, []crdVersion{v1(field(`{"type":"array","x-kubernetes-patch-merge-key":"name","items":{"type":"object"}}`))}, false, 0},
		{ExtensionChanged, "int-or-string added", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"x-kubernetes-int-or-string":true}`))}, true, openapi.Warning},
		{ExtensionChanged, "non-kubernetes extension ignored", []crdVersion{v1(field(`{"type":"string"}`))}, []crdVersion{v1(field(`{"type":"string","x-doc-note":"hello"}`))}, false, 0},
		{VersionRemoved, "served version gone", []crdVersion{v1(""), {name: "v1beta1"}}, []crdVersion{v1("")}, true, openapi.Breaking},
		{VersionRemoved, "deprecated first", []crdVersion{v1(""), {name: "v1beta1", deprecated: true}}, []crdVersion{v1("")}, true, openapi.Info},
		{VersionRemoved, "all kept", []crdVersion{v1(""), {name: "v1beta1"}}, []crdVersion{v1(""), {name: "v1beta1"}}, false, 0},
		{NewVersionPreferred, "new v2 preferred", []crdVersion{v1("")}, []crdVersion{v1(""), {name: "v2"}}, true, openapi.Breaking},
		{NewVersionPreferred, "new alpha not preferred", []crdVersion{v1("")}, []crdVersion{v1(""), {name: "v2alpha1"}}, false, 0},
		{NewVersionStorage, "new version is storage", []crdVersion{v1("")}, []crdVersion{{name: "v1"}, {name: "v2alpha1", storage: true}}, true, openapi.Breaking},
		{NewVersionStorage, "storage stays", []crdVersion{v1("")}, []crdVersion{v1(""), {name: "v2alpha1"}}, false, 0},
	}
	covered := map[string][2]bool{}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			r := Compare(crdDoc(t, c.old...), crdDoc(t, c.new...))
			got := findings(r, c.rule, "")
			if !c.want {
				if len(got) != 0 {
					t.Fatalf("unexpected %s:%s", c.rule, dump(r))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one %s, got %d:%s", c.rule, len(got), dump(r))
			}
			if c.rule == FieldBecameImmutable && got[0].Location() != fieldLoc {
				t.Errorf("immutability reported at %s, want %s", got[0].Location(), fieldLoc)
			}
			if got[0].Level != c.level {
				t.Errorf("level %s, want %s (%s)", got[0].Level, c.level, got[0].Note)
			}
		})
		cv := covered[c.rule]
		if c.want {
			cv[0] = true
		} else {
			cv[1] = true
		}
		covered[c.rule] = cv
	}
	// Swagger-only rules are covered by TestPlantedSwaggerChanges and TestRefChangeAndCycles,
	// operation rules by TestOperationRules, CRD upgrade rules by TestCRDUpgradeRules.
	swaggerOnly := map[string]bool{DefinitionRemoved: true, RefChanged: true}
	for _, rule := range append(operationRules, crdUpgradeRules...) {
		swaggerOnly[rule] = true
	}
	for _, rule := range Rules() {
		if !swaggerOnly[rule.ID] && covered[rule.ID] != [2]bool{true, true} {
			t.Errorf("rule %s lacks a positive or negative case (have %v)", rule.ID, covered[rule.ID])
		}
	}
}

// TestRefChangeAndCycles: a field that now names another definition, where both
// definitions refer to themselves (like JSONSchemaProps): compared once, no overflow.
func TestRefChangeAndCycles(t *testing.T) {
	mk := func(name string, extra string) string {
		return fmt.Sprintf(`{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{
		  "io.example.v1.Holder":{"type":"object","properties":{"schema":{"$ref":"#/definitions/io.example.v1.%[1]s"}}},
		  "io.example.v1.%[1]s":{"type":"object","properties":{"not":{"$ref":"#/definitions/io.example.v1.%[1]s"},
		     "props":{"type":"object","additionalProperties":{"$ref":"#/definitions/io.example.v1.%[1]s"}}%[2]s}}}}`, name, extra)
	}
	oldDoc, err := openapi.LoadBytes([]byte(mk("Props", `,"title":{"type":"string"}`)), "old")
	if err != nil {
		t.Fatal(err)
	}
	newDoc, err := openapi.LoadBytes([]byte(mk("PropsV2", "")), "new")
	if err != nil {
		t.Fatal(err)
	}
	r := Compare(oldDoc, newDoc)
	if len(findings(r, RefChanged, "io.example.v1.Holder#/properties/schema")) != 1 {
		t.Errorf("missing ref-changed:%s", dump(r))
	}
	removed := findings(r, FieldRemoved, "io.example.v1.PropsV2#/properties/title")
	if len(removed) != 1 || !strings.Contains(removed[0].Note, "io.example.v1.Props") {
		t.Errorf("want title removed once, compared with old Props:%s", dump(r))
	}
	// Negative: the same document has no findings.
	if r := Compare(oldDoc, oldDoc); len(r.Findings) != 0 {
		t.Errorf("self comparison:%s", dump(r))
	}
}

func TestSwaggerIsConvertedNotHalfRead(t *testing.T) {
	d := load(t, "testdata/swagger-old.json")
	if d.Format != openapi.FormatSwagger2 {
		t.Fatalf("format %s", d.Format)
	}
	for _, name := range []string{"com.example.v1.Frobber", "com.example.v1.Unreached", "com.example.v1.SchemaProps"} {
		s := d.Schemas[name]
		if s == nil || s.Value == nil || len(s.Value.Properties) == 0 {
			t.Errorf("definition %s not converted", name)
		}
	}
	// $refs are resolved to the converted components.
	items := d.Schemas["com.example.v1.FrobberSpec"].Value.Properties["containers"].Value.Items
	if items.Ref != "#/components/schemas/com.example.v1.Container" || items.Value == nil || items.Value.Properties["image"] == nil {
		t.Errorf("ref not converted and resolved: %q", items.Ref)
	}
	// x- fields written beside a $ref survive the conversion.
	if got := d.Schemas["com.example.v1.FrobberSpec"].Value.Properties["strategy"].Extensions["x-kubernetes-patch-strategy"]; got != "retainKeys" {
		t.Errorf("patch strategy beside $ref lost in conversion: %v", got)
	}
	if _, err := openapi.LoadBytes([]byte(`{"swagger":"1.2"}`), "old-swagger"); err == nil {
		t.Error("Swagger 1.2 accepted")
	}
}

func TestRealKubernetesReleases(t *testing.T) {
	oldDoc := loadReal(t, "k8s-v1.35.4-swagger.json")
	newDoc := loadReal(t, "k8s-v1.36.3-swagger.json")
	r := Compare(oldDoc, newDoc)
	// Facts of these releases: scheduling.k8s.io/v1alpha1 went (replaced by v1alpha2),
	// and the alpha PodSpec.workloadRef field was removed from core/v1.
	if f := findings(r, VersionRemoved, "scheduling.k8s.io/v1alpha1"); len(f) != 1 || f[0].Level != openapi.Warning {
		t.Errorf("scheduling.k8s.io/v1alpha1 removal:%s", dump(r))
	}
	if f := findings(r, FieldRemoved, "io.k8s.api.core.v1.PodSpec#/properties/workloadRef"); len(f) != 1 || len(f[0].Operations) < 10 {
		t.Errorf("PodSpec.workloadRef removal (reported once, with its operations):%s", dump(r))
	}
	// Its helper type WorkloadReference went with the field: reported once, at the field.
	if f := findings(r, DefinitionRemoved, "io.k8s.api.core.v1.WorkloadReference"); len(f) != 0 {
		t.Errorf("WorkloadReference reported again as definition-removed:%s", dump(r))
	}
	seen := map[string]bool{}
	for _, f := range r.Findings {
		key := f.Rule + " " + f.Location() + " " + f.Message
		if seen[key] {
			t.Errorf("reported twice: %s", key)
		}
		seen[key] = true
	}
	if self := Compare(newDoc, newDoc); len(self.Findings) != 0 {
		t.Errorf("v1.36.3 against itself:%s", dump(self))
	}
	t.Logf("v1.35.4 -> v1.36.3: %d findings%s", len(r.Findings), dump(r))
}

func TestRealKubernetesV3Documents(t *testing.T) {
	if _, err := os.Stat(filepath.Join(realDir, "v3-v1.35.4")); err != nil {
		t.Skipf("v3 documents not available: %v", err)
	}
	r := Compare(load(t, filepath.Join(realDir, "v3-v1.35.4")), load(t, filepath.Join(realDir, "v3-v1.36.3")))
	if len(findings(r, FieldRemoved, "io.k8s.api.core.v1.PodSpec#/properties/workloadRef")) != 1 {
		t.Errorf("v3 documents: PodSpec.workloadRef removal missing:%s", dump(r))
	}
}

// BenchmarkCompatKubernetesSwagger compares the whole API of two consecutive releases.
// Loading (JSON decoding and Swagger 2.0 conversion) is included: that is what a CI gate pays.
func BenchmarkCompatKubernetesSwagger(b *testing.B) {
	for _, name := range []string{"k8s-v1.35.4-swagger.json", "k8s-v1.36.3-swagger.json"} {
		if _, err := os.Stat(filepath.Join(realDir, name)); err != nil {
			b.Skipf("%s not available: %v", name, err)
		}
	}
	oldData, err := os.ReadFile(filepath.Join(realDir, "k8s-v1.35.4-swagger.json"))
	if err != nil {
		b.Fatal(err)
	}
	newData, err := os.ReadFile(filepath.Join(realDir, "k8s-v1.36.3-swagger.json"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("load+compare", func(b *testing.B) {
		var n int
		for b.Loop() {
			o, err := openapi.LoadBytes(oldData, "old")
			if err != nil {
				b.Fatal(err)
			}
			nw, err := openapi.LoadBytes(newData, "new")
			if err != nil {
				b.Fatal(err)
			}
			n = len(Compare(o, nw).Findings)
		}
		b.ReportMetric(float64(n), "findings")
	})
	b.Run("compare", func(b *testing.B) {
		o, err := openapi.LoadBytes(oldData, "old")
		if err != nil {
			b.Fatal(err)
		}
		nw, err := openapi.LoadBytes(newData, "new")
		if err != nil {
			b.Fatal(err)
		}
		var n int
		for b.Loop() {
			// Compare's memo and visited sets are per call; the documents' reachability
			// index is built on first use and reused.
			n = len(Compare(o, nw).Findings)
		}
		b.ReportMetric(float64(n), "findings")
	})
}
