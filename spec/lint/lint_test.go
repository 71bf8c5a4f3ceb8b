package lint

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

func lintFile(t *testing.T, path string) *openapi.Report {
	t.Helper()
	d, err := openapi.Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return Lint(d)
}

func at(r *openapi.Report, rule, location string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Rule == rule && f.Location() == location {
			n++
		}
	}
	return n
}

// under counts findings of rule whose definition starts with prefix.
func under(r *openapi.Report, rule, prefix string) int {
	n := 0
	for _, f := range r.Findings {
		if (rule == "*" || f.Rule == rule) && strings.HasPrefix(f.Definition, prefix) {
			n++
		}
	}
	return n
}

func dump(r *openapi.Report) string {
	var b strings.Builder
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "\n  %s %s %s: %s", f.Level, f.Rule, f.Location(), f.Message)
	}
	return b.String()
}

// TestRules: each rule fires at its planted violation (positive) and not on the
// definition that follows the convention (negative).
func TestRules(t *testing.T) {
	crds := lintFile(t, "testdata/conventions.yaml")
	kinds := lintFile(t, "testdata/kinds.json")
	const gizmo = "example.com/v1/Gizmo#/properties/"
	const tidy = "example.com/v1/Tidy"
	cases := []struct {
		rule     string
		r        *openapi.Report
		positive string // location of the planted violation
		clean    string // definition prefix that must have no finding of the rule
	}{
		{FieldNameCamelCase, crds, gizmo + "spec/properties/max_size", tidy},
		{NoFloatInSpec, crds, gizmo + "spec/properties/ratio", tidy},
		{IntegerFormat, crds, gizmo + "spec/properties/count", tidy},
		{DurationSeconds, crds, gizmo + "spec/properties/timeout", tidy},
		{ReferenceNaming, crds, gizmo + "spec/properties/owner", tidy},
		{NoMapOfSubobjects, crds, gizmo + "spec/properties/backends", tidy},
		{BoolPolicy, crds, gizmo + "spec/properties/restartPolicy", tidy},
		{TimeRFC3339, crds, gizmo + "spec/properties/startTime", tidy},
		{TimeFieldName, crds, gizmo + "status/properties/lastProbeTimestamp", tidy},
		{ConditionFields, crds, gizmo + "status/properties/conditions", tidy},
		{SpecStatusSplit, crds, gizmo + "extra", tidy},
		{ConditionsShape, crds, gizmo + "status/properties/conditions", tidy},
		{ListType, crds, gizmo + "spec/properties/volumes", tidy},       // named subobjects without a list type
		{ListType, crds, gizmo + "spec/properties/ports", tidy},         // a set of objects
		{ListType, crds, gizmo + "spec/properties/endpoints", tidy},     // a map list without keys
		{CRDBounds, crds, gizmo + "extra", tidy},                        // string without maxLength
		{CRDBounds, crds, gizmo + "status/properties/conditions", tidy}, // array without maxItems
		{CRDNumericBounds, crds, gizmo + "spec/properties/max_size", tidy},
		{PhaseField, crds, gizmo + "status/properties/phase", tidy},
		{NameReference, crds, gizmo + "spec/properties/secret", tidy},
		{EnumCamelCase, crds, gizmo + "spec/properties/pullPolicy", tidy},
		{RequiredDefault, crds, gizmo + "spec/properties/mode", tidy},
		{StatusSubresource, crds, gizmo + "status", tidy},
		{Nullable, crds, gizmo + "spec/properties/comment", tidy},
		{FreeFormObject, crds, gizmo + "spec/properties/settings", tidy},
		{Quantity, crds, gizmo + "spec/properties/memory", tidy},
		{UnionDiscriminator, crds, gizmo + "spec/properties/source", tidy},
		{ListKind, kinds, "io.example.v1.BadList", "io.example.v1.Good"},
		{ListKind, kinds, "io.example.v1.Bundle#/properties/items", "io.example.v1.GoodList"},
		{ObjectTypeMeta, kinds, "io.example.v1.Bundle", "io.example.v1.Good"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.rule] = true
		t.Run(c.rule+"/"+c.positive, func(t *testing.T) {
			if at(c.r, c.rule, c.positive) != 1 {
				t.Errorf("want %s at %s:%s", c.rule, c.positive, dump(c.r))
			}
			if n := under(c.r, c.rule, c.clean); n != 0 {
				t.Errorf("%s reported %d times on conforming %s:%s", c.rule, n, c.clean, dump(c.r))
			}
		})
	}
	for _, rule := range Rules() {
		if !covered[rule.ID] {
			t.Errorf("rule %s has no test case", rule.ID)
		}
	}
	// Tidy follows every convention: no finding of any rule.
	if n := under(crds, "*", tidy); n != 0 {
		t.Errorf("%d findings on the conforming Tidy:%s", n, dump(crds))
	}
	// Floats in status are allowed: Gizmo.status.score and Tidy.status.score are not reported.
	for _, loc := range []string{gizmo + "status/properties/score", tidy + "#/properties/status/properties/score"} {
		if at(crds, NoFloatInSpec, loc) != 0 {
			t.Errorf("float in status reported at %s", loc)
		}
	}
}

func TestRealKubernetesSwagger(t *testing.T) {
	path := filepath.Join(realDir, "k8s-v1.36.3-swagger.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real Kubernetes OpenAPI document not available: %v", err)
	}
	r := lintFile(t, path)
	// Known, accepted exceptions in Kubernetes itself.
	known := []struct{ rule, location string }{
		{FieldNameCamelCase, "io.k8s.api.core.v1.DaemonEndpoint#/properties/Port"},
		{TimeFieldName, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta#/properties/creationTimestamp"},
		{ReferenceNaming, "io.k8s.api.core.v1.Event#/properties/involvedObject"},
		{PhaseField, "io.k8s.api.core.v1.PodStatus#/properties/phase"},
		{ConditionsShape, "io.k8s.api.batch.v1.JobStatus#/properties/conditions"},
	}
	for _, k := range known {
		if at(r, k.rule, k.location) != 1 {
			t.Errorf("want %s at %s", k.rule, k.location)
		}
	}
	// Not API objects: JSON Schema (JSONSchemaProps), discovery documents, option kinds, watch events.
	for _, def := range []string{
		"io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps",
		"io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup", "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
		"io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
		"io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
	} {
		if n := under(r, "*", def); n != 0 {
			t.Errorf("%d findings on %s, which is not an API object:%s", n, def, dump(r))
		}
	}
	// Conforming core types are clean; named subobjects (containers, ports, volumes) carry map list types.
	for _, rule := range []string{IntegerFormat, DurationSeconds, ConditionFields, ListType, NameReference} {
		if n := under(r, rule, "io.k8s.api.core.v1.Pod"); n != 0 {
			t.Errorf("%s on core/v1 Pod types: %d", rule, n)
		}
	}
	// A baseline of today's findings accepts them all.
	var ex []openapi.Exception
	for _, f := range r.Findings {
		e, err := openapi.ParseException(openapi.ExceptionLine(f))
		if err != nil {
			t.Fatal(err)
		}
		ex = append(ex, e)
	}
	total := len(r.Findings)
	r.Apply(ex)
	if len(r.Findings) != 0 || r.Ignored != total {
		t.Errorf("baseline left %d findings, ignored %d of %d", len(r.Findings), r.Ignored, total)
	}
}

// TestKubernetesExceptions: on the v1.36.3 swagger every finding is one of
// Kubernetes' accepted exceptions listed in the shipped file, and every line of
// the file still matches a finding.
func TestKubernetesExceptions(t *testing.T) {
	path := filepath.Join(realDir, "k8s-v1.36.3-swagger.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("real Kubernetes OpenAPI document not available: %v", err)
	}
	r := lintFile(t, path)
	exceptions, err := openapi.LoadExceptions("kubernetes-exceptions.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range exceptions {
		used := false
		for _, f := range r.Findings {
			used = used || e.Matches(f)
		}
		if !used {
			t.Errorf("exception %s:%s matches no finding", e.Rule, e.Path)
		}
	}
	total := len(r.Findings)
	r.Apply(exceptions)
	if len(r.Findings) != 0 {
		t.Errorf("%d of %d findings are not accepted exceptions:%s", len(r.Findings), total, dump(r))
	}
	t.Logf("v1.36.3: %d findings, all accepted exceptions", total)
}
