package reports

import (
	"strings"
	"testing"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

func TestParseFailOn(t *testing.T) {
	for in, want := range map[string]catalog.Level{"none": "", "NONE": "", "must": catalog.Must, "Should": catalog.Should, "may": catalog.May} {
		if got, err := ParseFailOn(in); err != nil || got != want {
			t.Errorf("ParseFailOn(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFailOn("sometimes"); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("ParseFailOn(sometimes) = %v, want an error naming the value", err)
	}
}

func TestGate(t *testing.T) {
	cat := Catalogue{Requirements: []catalog.Requirement{
		{ID: "R-MUST", Level: catalog.Must},
		{ID: "R-SHOULD", Level: catalog.Should},
		{ID: "R-MAY", Level: catalog.May},
		{ID: "R-DEV", Level: catalog.Must, Deviation: &catalog.Deviation{Observed: "404"}},
	}}
	failed := func(ids ...string) result.SpecResult {
		return result.SpecResult{Name: "spec " + strings.Join(ids, "+"), Outcome: result.Failed, Requirements: ids}
	}
	mixed := result.Result{Specs: []result.SpecResult{
		failed("R-SHOULD"),
		failed("R-MAY"),
		{Name: "passed", Outcome: result.Passed, Requirements: []string{"R-MUST"}},
	}}
	broken := result.Result{Specs: []result.SpecResult{{Name: "BeforeSuite", Outcome: result.Failed}}}
	deviating := result.Result{Specs: []result.SpecResult{failed("R-DEV")}}
	partly := result.Result{Specs: []result.SpecResult{failed("R-DEV", "R-MAY")}}
	tests := []struct {
		name     string
		res      result.Result
		min      catalog.Level
		allowDev bool
		want     string // "" passes; else the error names this many failures and the first
	}{
		{"none gates nothing", mixed, "", false, ""},
		{"must: only weaker failures", mixed, catalog.Must, false, ""},
		{"should", mixed, catalog.Should, false, "1 failed spec(s) at or above should, first: spec R-SHOULD"},
		{"may", mixed, catalog.May, false, "2 failed spec(s) at or above may, first: spec R-SHOULD"},
		{"no requirement always fails", broken, catalog.Must, false, "1 failed spec(s) at or above must, first: BeforeSuite"},
		{"deviation counts by default", deviating, catalog.May, false, "1 failed"},
		{"deviation forgiven", deviating, catalog.May, true, ""},
		{"a spec with a non-deviating requirement is not forgiven", partly, catalog.Must, true, "1 failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Gate(cat, tt.res, tt.min, tt.allowDev)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Gate = %v, want pass", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Gate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
