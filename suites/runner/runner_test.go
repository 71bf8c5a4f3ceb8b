package runner

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/reports/result"
)

func TestLabelFilter(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    string
		wantErr bool
	}{
		{name: "empty", cfg: Config{}, want: ""},
		{name: "areas", cfg: Config{Areas: []string{"dryrun", "apply"}}, want: "(area:dryrun || area:apply)"},
		{name: "requirements", cfg: Config{Requirements: []string{"FV-WARN"}}, want: "(req:FV-WARN)"},
		{name: "areas and requirements are a union", cfg: Config{Areas: []string{"watch"}, Requirements: []string{"PAGE-CONSTANT-RV"}},
			want: "((area:watch) || (req:PAGE-CONSTANT-RV))"},
		{name: "only is ANDed", cfg: Config{Areas: []string{"watch"}, Only: []string{"A-B", "C-D"}},
			want: "(area:watch) && (req:A-B || req:C-D)"},
		{name: "skip", cfg: Config{SkipAreas: []string{"watch"}, SkipRequirements: []string{"A-B"}},
			want: "!(area:watch) && !(req:A-B)"},
		{name: "combined with user filter", cfg: Config{Areas: []string{"apply"}, LabelFilter: "!slow"},
			want: "(area:apply) && (!slow)"},
		{name: "blank names ignored", cfg: Config{Areas: []string{" ", ""}}, want: ""},
		{name: "bad name", cfg: Config{Areas: []string{"a||b"}}, wantErr: true},
		{name: "bad user filter", cfg: Config{LabelFilter: "(("}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LabelFilter(tt.cfg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("filter = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLabelFilterSelects(t *testing.T) {
	filter, err := LabelFilter(Config{Areas: []string{"apply"}, SkipRequirements: []string{"APPLY-FORCE"}})
	if err != nil {
		t.Fatal(err)
	}
	match := types.MustParseLabelFilter(filter)
	cases := []struct {
		labels []string
		want   bool
	}{
		{[]string{"area:apply", "req:APPLY-CONFLICT"}, true},
		{[]string{"area:apply", "req:APPLY-FORCE"}, false},
		{[]string{"area:dryrun", "req:DRYRUN-CREATE"}, false},
	}
	for _, c := range cases {
		if got := match(c.labels); got != c.want {
			t.Errorf("labels %v: selected = %v, want %v", c.labels, got, c.want)
		}
	}
}

func TestBadFocusPattern(t *testing.T) {
	if _, _, err := ginkgoConfig(Config{Focus: []string{"("}}); err == nil {
		t.Fatal("want an error for a bad focus pattern")
	}
}

func TestNotSelected(t *testing.T) {
	tests := []struct {
		name string
		spec types.SpecReport
		want bool
	}{
		{"filtered out", types.SpecReport{State: types.SpecStateSkipped}, true},
		{"skipped at run time", types.SpecReport{State: types.SpecStateSkipped, NumAttempts: 1,
			Failure: types.Failure{Message: "target does not serve CRDs"}}, false},
		{"passed", types.SpecReport{State: types.SpecStatePassed, NumAttempts: 1}, false},
		{"failed", types.SpecReport{State: types.SpecStateFailed, NumAttempts: 1}, false},
	}
	for _, tt := range tests {
		if got := NotSelected(tt.spec); got != tt.want {
			t.Errorf("%s: NotSelected = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMarkNotRun(t *testing.T) {
	report := types.Report{SpecReports: types.SpecReports{
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "ran", LeafNodeLabels: []string{"area:watch"}, State: types.SpecStatePassed, NumAttempts: 1},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "never started", LeafNodeLabels: []string{"area:watch"}, State: types.SpecStateSkipped},
		{LeafNodeType: types.NodeTypeIt, LeafNodeText: "filtered out", LeafNodeLabels: []string{"area:apply"}, State: types.SpecStateSkipped},
	}}
	cfg := Config{Areas: []string{"watch"}}
	_, sc, _ := ginkgoConfigPair(cfg)
	markNotRun(&report, selector(cfg, sc), "not started: the run was interrupted")
	got := map[string]result.Outcome{}
	for _, s := range result.FromGinkgo(report, result.Target{}).Specs {
		got[s.Name] = s.Outcome
	}
	want := map[string]result.Outcome{"ran": result.Passed, "never started": result.NotRun}
	if len(got) != len(want) || got["ran"] != want["ran"] || got["never started"] != want["never started"] {
		t.Errorf("outcomes = %v, want %v (the filtered spec left out)", got, want)
	}
}

func ginkgoConfigPair(cfg Config) (Config, types.SuiteConfig, error) {
	sc, _, err := ginkgoConfig(cfg)
	return cfg, sc, err
}
