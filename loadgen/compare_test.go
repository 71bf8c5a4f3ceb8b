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

// render is the report as text and as Markdown.
func render(t *testing.T, rep *Report) (text, md string) {
	t.Helper()
	var tb, mb bytes.Buffer
	if err := rep.WriteText(&tb); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteMarkdown(&mb); err != nil {
		t.Fatal(err)
	}
	return tb.String(), mb.String()
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

	text, md := render(t, rep)
	for _, want := range []string{"refserver ops/s", "ceiling ops/s", "ref ÷ kube", "ref ÷ ceiling", "400 ±50%", "2.00×", "0.25", "2ms / 2ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	for _, want := range []string{"| create | 10 | 400 ±50% | 200 ±50% | 1600 ±50% | 2.00× | 0.25 |", "| get | 10 | 1000 ±0% | - | 4000 ±0% | - | 0.25 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
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
	text, _ := render(t, rep)
	if strings.Contains(text, "ref ÷ kube") || !strings.Contains(text, "0.50") {
		t.Errorf("text without an oracle:\n%s", text)
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

// TestReportCPU: the CPU per op is each round's CPU over its ops, the
// median over the rounds; a target whose processes were not measured shows
// none, and a report without any shows no CPU table.
func TestReportCPU(t *testing.T) {
	rep := &Report{Targets: []TargetInfo{
		{Name: "refserver", Role: RoleRefserver}, {Name: "kube-apiserver", Role: RoleOracle}, {Name: "ceiling", Role: RoleCeiling},
	}}
	us := time.Microsecond
	for round, f := range []time.Duration{1, 3, 2} {
		rep.Runs = append(rep.Runs,
			run("refserver", round+1, Phase{Name: PhaseCreate, Ops: 100, OpsPerSec: 1,
				ServerCPU: 100 * f * 100 * us, ClientCPU: 100 * 90 * us, ServerMinorFaults: 2 * int64(f)}),
			run("kube-apiserver", round+1, Phase{Name: PhaseCreate, Ops: 100, OpsPerSec: 1}),
			run("ceiling", round+1, Phase{Name: PhaseCreate, Ops: 100, OpsPerSec: 1, ServerCPU: 100 * 60 * us, ClientCPU: 100 * 80 * us}))
	}
	rep.Summarize()
	c := rep.Summary[0]
	ref, _ := c.figure("refserver")
	if ref.CPUPerOp != 200*us || ref.ClientCPUPerOp != 90*us || ref.MinorFaultsPerOp != 0.04 {
		t.Fatalf("refserver CPU = %v / %v, %v faults per op; want 200µs / 90µs, 0.04", ref.CPUPerOp, ref.ClientCPUPerOp, ref.MinorFaultsPerOp)
	}
	if kube, _ := c.figure("kube-apiserver"); kube.CPUPerOp != 0 {
		t.Fatalf("kube-apiserver, not measured: CPU per op %v", kube.CPUPerOp)
	}
	// Rounds: the ceiling's 60µs over 100, 300 and 200µs.
	if c.CPUVsCeiling != 0.3 || c.CPUVsOracle != 0 {
		t.Fatalf("CPU ratios: ceiling ÷ ref %v, kube ÷ ref %v; want 0.3 and none", c.CPUVsCeiling, c.CPUVsOracle)
	}
	text, md := render(t, rep)
	for _, want := range []string{cpuHead, "200µs / 90µs; 0.04", "60µs / 80µs; 0.00", "CPU: ceiling ÷ ref"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "CPU: kube ÷ ref") {
		t.Errorf("a kube-apiserver CPU ratio without its CPU:\n%s", text)
	}
	if want := "| create | 200µs / 90µs; 0.04 | - | 60µs / 80µs; 0.00 | 0.30 |\n"; !strings.Contains(md, want) {
		t.Errorf("markdown lacks %q:\n%s", want, md)
	}

	// Without measured processes, no CPU table.
	for i := range rep.Runs {
		for j := range rep.Runs[i].Phases {
			rep.Runs[i].Phases[j].ServerCPU = 0
		}
	}
	rep.Summarize()
	text, md = render(t, rep)
	if strings.Contains(text, cpuHead) || strings.Contains(md, cpuHead) {
		t.Errorf("a CPU table without measured processes:\n%s\n%s", text, md)
	}
}

// TestCPURatioVsOracle: kube-apiserver's CPU per op over the reference
// server's, round by round (a server 5× cheaper per op reads 5.00×).
func TestCPURatioVsOracle(t *testing.T) {
	rep := &Report{Targets: []TargetInfo{{Name: "refserver", Role: RoleRefserver}, {Name: "kube-apiserver", Role: RoleOracle}}}
	for round, cpu := range [][2]time.Duration{{100, 1000}, {300, 1000}, {200, 1000}} {
		rep.Runs = append(rep.Runs,
			run("refserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 1, ServerCPU: 10 * cpu[0] * time.Microsecond}),
			run("kube-apiserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 1, ServerCPU: 10 * cpu[1] * time.Microsecond}))
	}
	rep.Summarize()
	if got := rep.Summary[0].CPUVsOracle; got != 5 { // rounds: 10, 3.33, 5
		t.Fatalf("kube ÷ ref CPU = %v, want 5", got)
	}
	text, _ := render(t, rep)
	if !strings.Contains(text, "CPU: kube ÷ ref") || !strings.Contains(text, "5.00×") {
		t.Errorf("text:\n%s", text)
	}
}

// TestRatioHeadsNameTheTarget: the ratio columns call the target what
// --target-name called it, in both renderings, and "kube" only by default.
func TestRatioHeadsNameTheTarget(t *testing.T) {
	for _, c := range []struct {
		target     string
		want, lack []string
	}{
		{"kube-apiserver", []string{"ref ÷ kube", "CPU: kube ÷ ref", "ref ÷ ceiling", "CPU: ceiling ÷ ref"}, nil},
		{"k3s", []string{"ref ÷ k3s", "CPU: k3s ÷ ref", "ref ÷ ceiling", "CPU: ceiling ÷ ref"}, []string{"kube ÷", "÷ kube"}},
	} {
		t.Run(c.target, func(t *testing.T) {
			rep := &Report{Targets: []TargetInfo{{Name: "refserver", Role: RoleRefserver}, {Name: c.target, Role: RoleOracle},
				{Name: "ceiling", Role: RoleCeiling}}}
			for _, target := range []string{"refserver", c.target, "ceiling"} {
				rep.Runs = append(rep.Runs, run(target, 1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 100, ServerCPU: time.Millisecond}))
			}
			rep.Summarize()
			text, md := render(t, rep)
			for _, out := range []string{text, md} {
				for _, want := range c.want {
					if !strings.Contains(out, want) {
						t.Errorf("lacks %q:\n%s", want, out)
					}
				}
				for _, lack := range c.lack {
					if strings.Contains(out, lack) {
						t.Errorf("has %q:\n%s", lack, out)
					}
				}
			}
		})
	}
}

// TestJudgeGoal: a phase is held to the lower of 10× the target and 0.80 of
// the ceiling, and meets it by reaching either; each ratio judged as the
// tables print it.
func TestJudgeGoal(t *testing.T) {
	for _, tc := range []struct {
		name                                 string
		vsTarget, vsCeiling, ceilingVsTarget float64
		want                                 *Goal
	}{
		{"10× below 0.80 of the ceiling, reached", 32, 0.55, 47, &Goal{Rule: GoalRuleMultiple, Met: true}},
		{"10× below 0.80 of the ceiling, not reached", 9, 0.2, 45, &Goal{Rule: GoalRuleMultiple}},
		{"10× beyond the ceiling, under 0.80 of it", 6, 0.68, 8.8, &Goal{Rule: GoalRuleCeiling}},
		{"10× beyond the ceiling, above 0.80 of it", 6.35, 1.09, 5.8, &Goal{Rule: GoalRuleCeiling, Met: true}},
		{"10× within the ceiling but above 0.80 of it: held to 0.80", 6, 0.6, 10.5, &Goal{Rule: GoalRuleCeiling}},
		{"the same, 0.80 reached short of 10×", 8.5, 0.81, 10.5, &Goal{Rule: GoalRuleCeiling, Met: true}},
		{"10× exactly 0.80 of the ceiling: held to 10×", 9.9, 0.79, 12.5, &Goal{Rule: GoalRuleMultiple}},
		{"9.996× prints as 10.00×", 9.996, 0.5, 20, &Goal{Rule: GoalRuleMultiple, Met: true}},
		{"0.7951 prints as 0.80", 6, 0.7951, 7.5, &Goal{Rule: GoalRuleCeiling, Met: true}},
		{"0.7949 prints as 0.79", 6, 0.7949, 7.5, &Goal{Rule: GoalRuleCeiling}},
		{"12.496 for the ceiling prints as 12.50: held to 10×", 8, 0.64, 12.496, &Goal{Rule: GoalRuleMultiple}},
		{"no target", 0, 0.9, 0, nil},
		{"no ceiling", 12, 0, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judgeGoal(tc.vsTarget, tc.vsCeiling, tc.ceilingVsTarget)
			if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
				t.Fatalf("judgeGoal(%v, %v, %v) = %+v, want %+v", tc.vsTarget, tc.vsCeiling, tc.ceilingVsTarget, got, tc.want)
			}
		})
	}
}

// TestReportGoal: the summary judges each phase from the rounds' paired
// ratios, and both renderings show the verdict and the count; a report
// without the target shows no goal.
func TestReportGoal(t *testing.T) {
	rep := &Report{Targets: []TargetInfo{{Name: "refserver", Role: RoleRefserver}, {Name: "kube-apiserver", Role: RoleOracle}, {Name: "ceiling", Role: RoleCeiling}}}
	for round := range 3 {
		rep.Runs = append(rep.Runs,
			run("refserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 680}, Phase{Name: PhaseGet, Ops: 10, OpsPerSec: 900},
				Phase{Name: PhaseCRCreate, Ops: 10, OpsPerSec: 3900}),
			run("kube-apiserver", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 100}, Phase{Name: PhaseGet, Ops: 10, OpsPerSec: 150},
				Phase{Name: PhaseCRCreate, Ops: 10, OpsPerSec: 120}),
			run("ceiling", round+1, Phase{Name: PhaseCreate, Ops: 10, OpsPerSec: 900}, Phase{Name: PhaseGet, Ops: 10, OpsPerSec: 1000},
				Phase{Name: PhaseCRCreate, Ops: 10, OpsPerSec: 5600}))
	}
	rep.Summarize()
	want := map[string]Goal{
		PhaseCreate:   {Rule: GoalRuleCeiling},             // 6.8× kube; 10× kube (1,000) is above 0.80 of the ceiling (720), of which it is 0.76
		PhaseGet:      {Rule: GoalRuleCeiling, Met: true},  // 6× kube; 10× kube (1,500) is beyond the ceiling (1,000), of which it is 0.90
		PhaseCRCreate: {Rule: GoalRuleMultiple, Met: true}, // 32.5× kube; 10× kube (1,200) is below 0.80 of the ceiling (4,480)
	}
	for _, s := range rep.Summary {
		if s.Goal == nil || *s.Goal != want[s.Phase] {
			t.Errorf("%s: goal %+v, want %+v", s.Phase, s.Goal, want[s.Phase])
		}
	}
	text, md := render(t, rep)
	for _, want := range []string{"goal", "not met (0.80 of ceiling)", "met (0.80 of ceiling)", "met (10× kube)",
		"goal: each phase ≥10× kube or, where that is above 0.80 of the ceiling, ≥0.80 of the ceiling; met by 2 of 3 phases"} {
		if !strings.Contains(text, want) || !strings.Contains(md, want) {
			t.Errorf("text or markdown lacks %q:\n%s\n%s", want, text, md)
		}
	}

	rep.Targets = rep.Targets[:1:1]
	rep.Targets = append(rep.Targets, TargetInfo{Name: "ceiling", Role: RoleCeiling})
	rep.Summarize()
	if text, md := render(t, rep); strings.Contains(text, "goal") || strings.Contains(md, "goal") {
		t.Errorf("a report without the target shows a goal:\n%s\n%s", text, md)
	}
}
