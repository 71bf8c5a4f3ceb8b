package registry

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/validation"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// nameRuleCases are the strings every rule is tried on: the edges of each
// rule (lengths 63/64 and 253/254, dots, dashes, slashes, case) and
// generated strings over the characters that matter.
func nameRuleCases() []string {
	cases := []string{"", "a", "A", "0", "-", ".", "..", "...", "_", "/", "a/", "/a", "a/b", "a/b/c", "a.b", "a..b", "a.-b",
		"a-.b", "-a", "a-", ".a", "a.", "..a", "a_b", "A/b", "example.com/x", "Example.com/x", "ex_ample.com/x", "a b",
		"é", "a\n", "ß/x", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253),
		strings.Repeat("a", 254), strings.Repeat("a", 253) + "/b", strings.Repeat("a", 254) + "/b",
		"x/" + strings.Repeat("b", 63), "x/" + strings.Repeat("b", 64), strings.Repeat("a.", 126) + "a"}
	rng := rand.New(rand.NewPCG(41, 9))
	const chars = "aZ09-._/.-aaA"
	for range 20000 {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			b[i] = chars[rng.IntN(len(chars))]
		}
		cases = append(cases, string(b))
	}
	return cases
}

// TestNameRules: each hand-written rule accepts exactly what apimachinery's
// check finds nothing in.
func TestNameRules(t *testing.T) {
	p := field.NewPath("x")
	for _, s := range nameRuleCases() {
		checkNameRules(t, s)
	}
	big := map[string]string{"k": strings.Repeat("v", validation.TotalAnnotationSizeLimitB)}
	if got, want := validateAnnotations(map[string]any{"k": big["k"]}, p), validation.ValidateAnnotations(big, p); len(got) != 1 || got.ToAggregate().Error() != want.ToAggregate().Error() {
		t.Fatalf("annotations over the size limit: %v, want %v", got, want)
	}
}

func FuzzNameRules(f *testing.F) {
	for _, s := range nameRuleCases()[:60] {
		f.Add(s)
	}
	f.Fuzz(checkNameRules)
}

func checkNameRules(t *testing.T, s string) {
	p := field.NewPath("x")
	for _, r := range []struct {
		name      string
		hand, lib bool
	}{
		{"dns1123Subdomain", dns1123Subdomain(s, false), len(utilvalidation.IsDNS1123Subdomain(s)) == 0},
		{"qualifiedName", qualifiedName(s, false), len(utilvalidation.IsQualifiedName(s)) == 0},
		{"qualifiedName folded", qualifiedName(s, true), len(utilvalidation.IsQualifiedName(strings.ToLower(s))) == 0},
		{"labelValue", labelValue(s), len(utilvalidation.IsValidLabelValue(s)) == 0},
		{"configMapKey", configMapKey(s), len(utilvalidation.IsConfigMapKey(s)) == 0},
		{"validateLabels (key)", len(validateLabels(map[string]any{s: "v"}, p)) == 0, len(metavalidation.ValidateLabels(map[string]string{s: "v"}, p)) == 0},
		{"validateLabels (value)", len(validateLabels(map[string]any{"k": s}, p)) == 0, len(metavalidation.ValidateLabels(map[string]string{"k": s}, p)) == 0},
		{"validateAnnotations", len(validateAnnotations(map[string]any{s: "v"}, p)) == 0, len(validation.ValidateAnnotations(map[string]string{s: "v"}, p)) == 0},
	} {
		if r.hand != r.lib {
			t.Fatalf("%s(%q): hand-written %v, apimachinery %v", r.name, s, r.hand, r.lib)
		}
	}
}

// TestValidateLabelsAnnotations: the checks read metadata's maps as decoded
// and give what the library gives for their strings, plus an error for each
// value that is not a string (stringMap's).
func TestValidateLabelsAnnotations(t *testing.T) {
	p := field.NewPath("metadata", "labels")
	library := func(m map[string]any, lib func(map[string]string, *field.Path) field.ErrorList) field.ErrorList {
		ss, errs := stringMap(m, p)
		return append(errs, lib(ss, p)...)
	}
	annotationsLib := func(m map[string]string, p *field.Path) field.ErrorList { return validation.ValidateAnnotations(m, p) }
	for _, tc := range []struct {
		name   string
		m      map[string]any
		errors int
	}{
		{"valid", map[string]any{"app": "a", "example.com/tier": "web", "empty": ""}, 0},
		{"a bad key", map[string]any{"app": "a", "bad key": "v"}, 1},
		{"a bad value", map[string]any{"app": "not valid!"}, 1},
		{"a number", map[string]any{"app": "a", "n": float64(1)}, 1},
		{"a number and a bad key", map[string]any{"n": float64(1), "-x": "v"}, 2},
		{"over the annotations' size", map[string]any{"k": strings.Repeat("v", validation.TotalAnnotationSizeLimitB)}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := validateLabels(tc.m, p), library(tc.m, metavalidation.ValidateLabels)
			if tc.errors >= 0 && len(want) != tc.errors {
				t.Fatalf("the library's errors %v, the case expects %d", want, tc.errors)
			}
			if errorsText(got) != errorsText(want) {
				t.Errorf("labels: %v, want %v", got, want)
			}
			got, want = validateAnnotations(tc.m, p), library(tc.m, annotationsLib)
			if errorsText(got) != errorsText(want) {
				t.Errorf("annotations: %v, want %v", got, want)
			}
		})
	}
}

func errorsText(el field.ErrorList) string {
	if len(el) == 0 {
		return ""
	}
	return el.ToAggregate().Error()
}
