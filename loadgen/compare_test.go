package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(100-i) * time.Millisecond // reversed: summarize must sort
	}
	p := summarize("get", lat, 2*time.Second)
	if p.Ops != 100 || p.P50 != 51*time.Millisecond || p.P99 != 100*time.Millisecond || p.OpsPerSec != 50 {
		t.Fatalf("summarize = %+v", p)
	}
	if empty := summarize("none", nil, 0); empty.Ops != 0 || empty.OpsPerSec != 0 || empty.P50 != 0 {
		t.Fatalf("empty summarize = %+v", empty)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func run(target string, round int, phases ...Phase) Result {
	return Result{Target: target, Round: round, Phases: phases}
}

func TestReportSummary(t *testing.T) {
	rep := &Report{Rounds: 3, Targets: []TargetInfo{
		{Name: "refserver", Role: RoleRefserver}, {Name: "kube-apiserver", Role: RoleOracle}, {Name: "ceiling", Role: RoleCeiling},
	}}
	ms := time.Millisecond
	for round, f := range []float64{1, 3, 2} { // medians fall on the second value given
		rep.Runs = append(rep.Runs,
			run("refserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 200 * f, P50: time.Duration(f) * ms, P99: 2 * ms},
				Phase{Name: PhaseGet, Ops: 10, OpsPerSec: 1000}),
			run("kube-apiserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 100 * f, P50: 4 * ms, P99: 8 * ms}),
			run("ceiling", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 800 * f}, Phase{Name: PhaseGet, Ops: 10, OpsPerSec: 4000}))
	}
	rep.Summarize()
	if len(rep.Summary) != 2 || rep.Summary[0].Phase != PhaseCreate || rep.Summary[1].Phase != PhaseGet {
		t.Fatalf("summary phases = %+v", rep.Summary)
	}
	c := rep.Summary[0]
	ref, _ := c.figure("refserver")
	if ref.OpsPerSec != 400 || ref.MinOpsPerSec != 200 || ref.MaxOpsPerSec != 600 || ref.P50 != 2*ms || ref.Rounds != 3 {
		t.Fatalf("refserver create = %+v", ref)
	}
	if c.VsOracle != 2 || c.VsCeiling != 0.25 {
		t.Fatalf("create ratios = %v, %v; want 2, 0.25", c.VsOracle, c.VsCeiling)
	}
	if g := rep.Summary[1]; g.VsOracle != 0 || g.VsCeiling != 0.25 {
		t.Fatalf("get ratios = %v, %v; want none for the missing oracle phase, 0.25", g.VsOracle, g.VsCeiling)
	}

	var text, md bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refserver ops/s", "ceiling ops/s", "ref ÷ kube", "ref ÷ ceiling", "400 ±50%", "2.00×", "0.25", "2ms / 2ms"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	for _, want := range []string{"| create | 10 | 400 ±50% | 200 ±50% | 1600 ±50% | 2.00× | 0.25 |", "| get | 10 | 1000 ±0% | - | 4000 ±0% | - | 0.25 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
}

// TestRatioPairsRounds: a ratio pairs the two targets' figures of each
// round, which ran back to back, and takes the median of those; the ratio
// of the medians would pair figures from different rounds.
func TestRatioPairsRounds(t *testing.T) {
	rep := &Report{Targets: []TargetInfo{{Name: "refserver", Role: RoleRefserver}, {Name: "ceiling", Role: RoleCeiling}}}
	for round, ops := range [][2]float64{{100, 200}, {300, 250}, {200, 400}} {
		rep.Runs = append(rep.Runs, run("refserver", round+1, Phase{Name: PhaseCreate, Ops: 1, OpsPerSec: ops[0]}),
			run("ceiling", round+1, Phase{Name: PhaseCreate, Ops: 1, OpsPerSec: ops[1]}))
	}
	// A round the ceiling did not finish pairs with nothing.
	rep.Runs = append(rep.Runs, run("refserver", 4, Phase{Name: PhaseCreate, Ops: 1, OpsPerSec: 1000}))
	rep.Summarize()
	if got := rep.Summary[0].VsCeiling; got != 0.5 { // rounds: 0.5, 1.2, 0.5; the medians' ratio would be 250/250
		t.Fatalf("ref ÷ ceiling = %v, want 0.5", got)
	}
}

func TestReportWithoutOracle(t *testing.T) {
	rep := &Report{Targets: []TargetInfo{{Name: "refserver", Role: RoleRefserver}, {Name: "ceiling", Role: RoleCeiling}},
		Runs: []Result{run("refserver", 1, Phase{Name: PhaseGet, Ops: 1, OpsPerSec: 10}), run("ceiling", 1, Phase{Name: PhaseGet, Ops: 1, OpsPerSec: 20})}}
	rep.Summarize()
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "ref ÷ kube") || !strings.Contains(text.String(), "0.50") {
		t.Errorf("text without an oracle:\n%s", text.String())
	}
}

func TestPlan(t *testing.T) {
	p := Plan{Objects: 50}.WithDefaults()
	if p.Objects != 50 || p.PageSize != DefaultPlan.PageSize || p.Watchers != DefaultPlan.Watchers || p.PhaseTimeout != DefaultPlan.PhaseTimeout {
		t.Fatalf("WithDefaults = %+v", p)
	}
	for _, tc := range []struct {
		plan Plan
		bad  string
	}{
		{Plan{}, ""},
		{Plan{Phases: []string{PhaseWatch, PhaseCRGet}}, ""},
		{Plan{Objects: 5}, "at least 10"},
		{Plan{Objects: 100000}, "at most 99999"},
		{Plan{Phases: []string{"gets"}}, `unknown phase "gets"`},
	} {
		err := tc.plan.Validate()
		if (err == nil) != (tc.bad == "") || (err != nil && !strings.Contains(err.Error(), tc.bad)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.plan, err, tc.bad)
		}
	}
}
