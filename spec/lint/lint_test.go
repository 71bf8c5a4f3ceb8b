package lint

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/spec/openapi"
)

const realDir = "../../../shared/testdata/openapi"

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
		if f.Rule == rule && strings.HasPrefix(f.Definition, prefix) {
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
		{FieldNameCamelCase, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps#/properties/x-kubernetes-list-type"},
		{NoFloatInSpec, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps#/properties/maximum"},
		{TimeFieldName, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta#/properties/creationTimestamp"},
		{ReferenceNaming, "io.k8s.api.core.v1.Event#/properties/involvedObject"},
	}
	for _, k := range known {
		if at(r, k.rule, k.location) != 1 {
			t.Errorf("want %s at %s", k.rule, k.location)
		}
	}
	// Conforming core types are clean.
	for _, rule := range []string{IntegerFormat, DurationSeconds, ConditionFields} {
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
