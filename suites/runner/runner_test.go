package runner

import (
	"testing"

	"github.com/onsi/ginkgo/v2/types"
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
