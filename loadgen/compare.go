package loadgen

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Roles of the targets in a comparison.
const (
	RoleRefserver = "refserver"
	RoleOracle    = "kube-apiserver"
	RoleCeiling   = "ceiling"
)

// TargetInfo says what a target was and how it was reached.
type TargetInfo struct {
	Name    string `json:"name"`
	Role    string `json:"role"`
	Mode    string `json:"mode"` // e.g. "separate process, HTTPS"
	URL     string `json:"url"`
	Version string `json:"version,omitempty"`
	Proto   string `json:"proto,omitempty"`
	// Processes are the server's processes whose CPU the phases read.
	Processes []int `json:"processes,omitempty"`
}

// Machine describes where the figures were taken.
type Machine struct {
	OS            string `json:"os"`
	Arch          string `json:"arch"`
	CPUs          int    `json:"cpus"`
	CPUModel      string `json:"cpuModel,omitempty"`
	GoVersion     string `json:"goVersion"`
	LoadAvgBefore string `json:"loadAvgBefore,omitempty"`
	LoadAvgAfter  string `json:"loadAvgAfter,omitempty"`
}

// Figure is one target's phase over all rounds: medians, and the range of
// the throughput.
type Figure struct {
	Target       string        `json:"target"`
	Ops          int           `json:"ops"`
	Rounds       int           `json:"rounds"`
	OpsPerSec    float64       `json:"opsPerSec"` // median over rounds
	MinOpsPerSec float64       `json:"minOpsPerSec"`
	MaxOpsPerSec float64       `json:"maxOpsPerSec"`
	P50          time.Duration `json:"p50"` // median over rounds of each round's p50
	P99          time.Duration `json:"p99"`
	// Medians over the rounds of the CPU the server's processes and the
	// client used per op, and of the server's minor faults per op; zero
	// when the server's processes were not measured.
	CPUPerOp         time.Duration `json:"cpuPerOp,omitempty"`
	ClientCPUPerOp   time.Duration `json:"clientCPUPerOp,omitempty"`
	MinorFaultsPerOp float64       `json:"minorFaultsPerOp,omitempty"`
}

// PhaseSummary is one phase on every target, with the reference server's
// throughput as a multiple of the target's (RoleOracle: kube-apiserver unless
// --target-name named another) and a fraction of the ceiling's: the median
// over the rounds of each round's ratio. The JSON names keep kube-apiserver
// so that earlier reports still read.
type PhaseSummary struct {
	Phase     string   `json:"phase"`
	Figures   []Figure `json:"figures"` // in the report's target order
	VsOracle  float64  `json:"refserverOverKubeAPIServer,omitempty"`
	VsCeiling float64  `json:"refserverOverCeiling,omitempty"`
	// The server CPU per op of kube-apiserver (and etcd, when measured) and
	// of the ceiling over the reference server's, medians of the rounds'.
	CPUVsOracle  float64 `json:"kubeAPIServerCPUOverRefserver,omitempty"`
	CPUVsCeiling float64 `json:"ceilingCPUOverRefserver,omitempty"`
	// Goal is the phase judged against the throughput goal (nil without
	// both the target and the ceiling).
	Goal *Goal `json:"goal,omitempty"`
}

// The throughput goal a phase is judged against: at least GoalMultiple
// times the target's throughput or, where that is beyond what the transport
// allows (above GoalCeilingFraction of the ceiling), at least that fraction
// of the ceiling. The lower of the two bars, so that a phase is not held to
// 0.99 of the ceiling because the target happened to be a tenth of it.
const (
	GoalMultiple        = 10
	GoalCeilingFraction = 0.80
)

// Goal is one phase judged against the throughput goal.
type Goal struct {
	Rule string `json:"rule"` // GoalRuleMultiple or GoalRuleCeiling: the lower bar, the one the phase is held to
	Met  bool   `json:"met"`
}

const (
	GoalRuleMultiple = "multiple" // GoalMultiple× the target
	GoalRuleCeiling  = "ceiling"  // GoalCeilingFraction of the ceiling, below GoalMultiple× the target
)

// judgeGoal holds a phase to the goal from three paired ratios (medians of
// the rounds'): the reference server over the target and over the ceiling,
// and the ceiling over the target. Each is judged as the tables print it,
// to two decimals, so that a cell never reads 0.80 and "not met". nil when
// a ratio is missing.
func judgeGoal(vsTarget, vsCeiling, ceilingVsTarget float64) *Goal {
	if vsTarget == 0 || vsCeiling == 0 || ceilingVsTarget == 0 {
		return nil
	}
	shown := func(v float64) float64 { return math.Round(v*100) / 100 }
	g := &Goal{Rule: GoalRuleMultiple}
	if GoalCeilingFraction*shown(ceilingVsTarget) < GoalMultiple {
		g.Rule = GoalRuleCeiling
	}
	// Meeting either bar meets the lower one.
	g.Met = shown(vsTarget) >= GoalMultiple || shown(vsCeiling) >= GoalCeilingFraction
	return g
}

// Report is what `apiconform bench` measured: the machine, the method, every
// round of every target, and the summary the tables show.
type Report struct {
	Version  int           `json:"version"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	Command  string        `json:"command"`
	Method   string        `json:"method"`
	Machine  Machine       `json:"machine"`
	Plan     Plan          `json:"plan"`
	Rounds   int           `json:"rounds"`
	// Parts is how many parts the reference server and the ceiling took
	// each phase in, in turn (at most one per operation; 0 in reports from
	// before parts: one).
	Parts   int            `json:"parts,omitempty"`
	Targets []TargetInfo   `json:"targets"`
	Runs    []Result       `json:"runs"`
	Quiet   *QuietStats    `json:"quiet,omitempty"`
	Summary []PhaseSummary `json:"summary"`
}

// ReportVersion is the version of the JSON Report.
const ReportVersion = 1

// Summarize folds the runs into one row per phase, in run order.
func (r *Report) Summarize() {
	byRole := map[string]string{}
	for _, t := range r.Targets {
		byRole[t.Role] = t.Name
	}
	r.Summary = nil
	for _, phase := range PhaseNames {
		s := PhaseSummary{Phase: phase}
		for _, t := range r.Targets {
			var ops, faults []float64
			var p50, p99, cpu, client []time.Duration
			f := Figure{Target: t.Name}
			for _, run := range r.Runs {
				if run.Target != t.Name {
					continue
				}
				for _, p := range run.Phases {
					if p.Name == phase {
						ops = append(ops, p.OpsPerSec)
						p50 = append(p50, p.P50)
						p99 = append(p99, p.P99)
						f.Ops = p.Ops
						if p.ServerCPU > 0 && p.Ops > 0 {
							n := time.Duration(p.Ops)
							cpu = append(cpu, p.ServerCPU/n)
							client = append(client, p.ClientCPU/n)
							faults = append(faults, float64(p.ServerMinorFaults)/float64(p.Ops))
						}
					}
				}
			}
			if len(ops) == 0 {
				continue
			}
			f.Rounds = len(ops)
			f.OpsPerSec, f.MinOpsPerSec, f.MaxOpsPerSec = median(ops), slices.Min(ops), slices.Max(ops)
			f.P50, f.P99 = median(p50), median(p99)
			f.CPUPerOp, f.ClientCPUPerOp, f.MinorFaultsPerOp = median(cpu), median(client), median(faults)
			s.Figures = append(s.Figures, f)
		}
		if len(s.Figures) == 0 {
			continue
		}
		s.VsOracle = r.ratio(phase, byRole[RoleRefserver], byRole[RoleOracle])
		s.VsCeiling = r.ratio(phase, byRole[RoleRefserver], byRole[RoleCeiling])
		s.CPUVsOracle = r.cpuRatio(phase, byRole[RoleRefserver], byRole[RoleOracle])
		s.CPUVsCeiling = r.cpuRatio(phase, byRole[RoleRefserver], byRole[RoleCeiling])
		s.Goal = judgeGoal(s.VsOracle, s.VsCeiling, r.ratio(phase, byRole[RoleCeiling], byRole[RoleOracle]))
		r.Summary = append(r.Summary, s)
	}
}

// ratio is the median over the rounds of a's throughput in phase over b's
// in the same round: a round runs a phase on every target back to back, so
// each round's pair saw the same machine. 0 when no round has both.
func (r *Report) ratio(phase, a, b string) float64 {
	return r.paired(phase, a, b, func(pa, pb Phase) (float64, bool) {
		return pa.OpsPerSec / pb.OpsPerSec, pb.OpsPerSec > 0
	})
}

// cpuRatio is the median over the rounds of b's server CPU per op in phase
// over a's: how many times less a's server spends on an op (0 when no
// round measured both).
func (r *Report) cpuRatio(phase, a, b string) float64 {
	return r.paired(phase, a, b, func(pa, pb Phase) (float64, bool) {
		if pa.ServerCPU <= 0 || pb.ServerCPU <= 0 || pa.Ops == 0 || pb.Ops == 0 {
			return 0, false
		}
		return (float64(pb.ServerCPU) / float64(pb.Ops)) / (float64(pa.ServerCPU) / float64(pa.Ops)), true
	})
}

// paired is the median over the rounds that ran phase on both a and b of
// f of their two figures.
func (r *Report) paired(phase, a, b string, f func(pa, pb Phase) (float64, bool)) float64 {
	if a == "" || b == "" {
		return 0
	}
	byRound := map[int]map[string]Phase{}
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			if p.Name == phase && (run.Target == a || run.Target == b) {
				if byRound[run.Round] == nil {
					byRound[run.Round] = map[string]Phase{}
				}
				byRound[run.Round][run.Target] = p
			}
		}
	}
	var values []float64
	for _, ps := range byRound {
		pa, okA := ps[a]
		pb, okB := ps[b]
		if !okA || !okB {
			continue
		}
		if v, ok := f(pa, pb); ok {
			values = append(values, v)
		}
	}
	return median(values)
}

func (s PhaseSummary) figure(target string) (Figure, bool) {
	for _, f := range s.Figures {
		if f.Target == target && target != "" {
			return f, true
		}
	}
	return Figure{}, false
}

func median[T int64 | float64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func (r *Report) has(role string) bool {
	return slices.ContainsFunc(r.Targets, func(t TargetInfo) bool { return t.Role == role })
}

// WriteText prints the targets, then one row per phase with each target's
// median throughput (± half its range over the rounds) and the ratios, then
// the latencies.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "%d round(s); %s\n", r.Rounds, r.Method)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, t := range r.Targets {
		cpu := "CPU not measured"
		if len(t.Processes) > 0 {
			cpu = fmt.Sprintf("CPU of pid %s", strings.Trim(fmt.Sprint(t.Processes), "[]"))
		}
		fmt.Fprintf(tw, "  %s\t%s, %s\t%s\t%s\t%s\n", t.Name, t.Mode, t.Proto, t.URL, t.Version, cpu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "machine: %s/%s, %d CPUs %s, %s; load average before %s, after %s\n", r.Machine.OS, r.Machine.Arch,
		r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Machine.LoadAvgBefore, r.Machine.LoadAvgAfter)
	if r.Quiet != nil {
		fmt.Fprintf(w, "quiet: %s\n", r.Quiet)
	}
	fmt.Fprintln(w)
	head := []string{"phase", "ops"}
	for _, t := range r.Targets {
		head = append(head, t.Name+" ops/s")
	}
	head = append(head, r.ratioHeads(throughputRatios)...)
	if r.goalShown() {
		head = append(head, "goal")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, s := range r.Summary {
		row := []string{s.Phase, fmt.Sprint(s.ops())}
		for _, t := range r.Targets {
			f, ok := s.figure(t.Name)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%.0f ±%.0f%%", f.OpsPerSec, spread(f)))
		}
		row = append(row, r.ratioCells(throughputRatios, s)...)
		if r.goalShown() {
			row = append(row, r.goalCell(s))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.goalShown() {
		fmt.Fprintln(w, r.goalLine())
	}
	fmt.Fprintln(w)
	head = []string{"latency p50 / p99"}
	for _, t := range r.Targets {
		head = append(head, t.Name)
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, s := range r.Summary {
		row := []string{s.Phase}
		for _, t := range r.Targets {
			f, ok := s.figure(t.Name)
			if !ok {
				row = append(row, "-")
				continue
			}
			row = append(row, fmt.Sprintf("%s / %s", round(f.P50), round(f.P99)))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if !r.metered() {
		return nil
	}
	fmt.Fprintln(w)
	head = append([]string{cpuHead}, r.targetNames()...)
	fmt.Fprintln(tw, strings.Join(append(head, r.ratioHeads(cpuRatios)...), "\t"))
	for _, s := range r.Summary {
		row := []string{s.Phase}
		for _, t := range r.Targets {
			row = append(row, s.cpuCell(t.Name))
		}
		fmt.Fprintln(tw, strings.Join(append(row, r.ratioCells(cpuRatios, s)...), "\t"))
	}
	return tw.Flush()
}

// ratioColumn is one ratio the tables may show: num's figure over den's
// (targets named by role), per phase.
type ratioColumn struct {
	num, den string // roles
	unit     string
	of       func(PhaseSummary) float64
	// cpu: a CPU ratio, headed "CPU: …" and shown only when some phase has
	// it (a target's CPU is measured only when its processes are known); a
	// throughput ratio shows whenever the report has both targets.
	cpu bool
}

// throughputRatios and cpuRatios are the tables' ratio columns, in order.
var (
	throughputRatios = []ratioColumn{
		{num: RoleRefserver, den: RoleOracle, unit: "×", of: func(s PhaseSummary) float64 { return s.VsOracle }},
		{num: RoleRefserver, den: RoleCeiling, of: func(s PhaseSummary) float64 { return s.VsCeiling }},
	}
	cpuRatios = []ratioColumn{
		{num: RoleOracle, den: RoleRefserver, unit: "×", of: func(s PhaseSummary) float64 { return s.CPUVsOracle }, cpu: true},
		{num: RoleCeiling, den: RoleRefserver, of: func(s PhaseSummary) float64 { return s.CPUVsCeiling }, cpu: true},
	}
)

func (r *Report) shows(c ratioColumn) bool {
	if c.cpu {
		return r.anyCPURatio(c.of)
	}
	return r.has(c.num) && r.has(c.den)
}

// ratioHeads head the columns of cols the report shows.
func (r *Report) ratioHeads(cols []ratioColumn) []string {
	var h []string
	for _, c := range cols {
		if !r.shows(c) {
			continue
		}
		head := r.shortName(c.num) + " ÷ " + r.shortName(c.den)
		if c.cpu {
			head = "CPU: " + head
		}
		h = append(h, head)
	}
	return h
}

// ratioCells are s's cells under ratioHeads(cols).
func (r *Report) ratioCells(cols []ratioColumn, s PhaseSummary) []string {
	var cells []string
	for _, c := range cols {
		if r.shows(c) {
			cells = append(cells, ratio(c.of(s), c.unit))
		}
	}
	return cells
}

// shortName names a role in a ratio's head: "ref" and "ceiling" for the two
// servers bench starts, "kube" for the target unless --target-name called
// it something else, so that a table of another server does not say kube.
func (r *Report) shortName(role string) string {
	switch role {
	case RoleRefserver:
		return "ref"
	case RoleOracle:
		for _, t := range r.Targets {
			if t.Role == role && t.Name != RoleOracle {
				return t.Name
			}
		}
		return "kube"
	}
	return role
}

func (r *Report) anyCPURatio(v func(PhaseSummary) float64) bool {
	return slices.ContainsFunc(r.Summary, func(s PhaseSummary) bool { return v(s) != 0 })
}

// cpuHead heads the table of CPU per op.
const cpuHead = "CPU per op: server / client; server's minor faults per op"

// metered reports whether some phase has the CPU of a target's processes.
func (r *Report) metered() bool {
	for _, s := range r.Summary {
		for _, f := range s.Figures {
			if f.CPUPerOp > 0 {
				return true
			}
		}
	}
	return false
}

// cpuCell is target's CPU per op in this phase, or "-" where its processes
// were not measured.
func (s PhaseSummary) cpuCell(target string) string {
	f, ok := s.figure(target)
	if !ok || f.CPUPerOp == 0 {
		return "-"
	}
	return fmt.Sprintf("%s / %s; %.2f", round(f.CPUPerOp), round(f.ClientCPUPerOp), f.MinorFaultsPerOp)
}

func ratio(v float64, unit string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%s", v, unit)
}

func (s PhaseSummary) ops() int {
	if len(s.Figures) == 0 {
		return 0
	}
	return s.Figures[0].Ops
}

// spread is half the throughput's range over the rounds, in percent of the median.
func spread(f Figure) float64 {
	if f.OpsPerSec == 0 {
		return 0
	}
	return math.Round(50 * (f.MaxOpsPerSec - f.MinOpsPerSec) / f.OpsPerSec)
}

// WriteMarkdown renders the summary as the README's performance table.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| phase | ops |")
	sep := "|---|--:|"
	for _, t := range r.Targets {
		fmt.Fprintf(&b, " %s ops/s |", t.Name)
		sep += "--:|"
	}
	for _, h := range r.ratioHeads(throughputRatios) {
		fmt.Fprintf(&b, " %s |", h)
		sep += "--:|"
	}
	if r.goalShown() {
		b.WriteString(" goal |")
		sep += "---|"
	}
	for _, t := range r.Targets {
		fmt.Fprintf(&b, " %s p50 / p99 |", t.Name)
		sep += "--:|"
	}
	b.WriteString("\n" + sep + "\n")
	for _, s := range r.Summary {
		fmt.Fprintf(&b, "| %s | %d |", s.Phase, s.ops())
		for _, t := range r.Targets {
			if f, ok := s.figure(t.Name); ok {
				fmt.Fprintf(&b, " %.0f ±%.0f%% |", f.OpsPerSec, spread(f))
			} else {
				b.WriteString(" - |")
			}
		}
		for _, c := range r.ratioCells(throughputRatios, s) {
			fmt.Fprintf(&b, " %s |", c)
		}
		if r.goalShown() {
			fmt.Fprintf(&b, " %s |", r.goalCell(s))
		}
		for _, t := range r.Targets {
			if f, ok := s.figure(t.Name); ok {
				fmt.Fprintf(&b, " %s / %s |", round(f.P50), round(f.P99))
			} else {
				b.WriteString(" - |")
			}
		}
		b.WriteString("\n")
	}
	if r.goalShown() {
		b.WriteString("\n" + r.goalLine() + "\n")
	}
	if r.metered() {
		heads := append(r.targetNames(), r.ratioHeads(cpuRatios)...)
		fmt.Fprintf(&b, "\n| %s | %s |\n|---|%s\n", cpuHead, strings.Join(heads, " | "), strings.Repeat("--:|", len(heads)))
		for _, s := range r.Summary {
			fmt.Fprintf(&b, "| %s |", s.Phase)
			for _, t := range r.Targets {
				fmt.Fprintf(&b, " %s |", s.cpuCell(t.Name))
			}
			for _, c := range r.ratioCells(cpuRatios, s) {
				fmt.Fprintf(&b, " %s |", c)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// goalShown reports whether some phase was judged against the goal.
func (r *Report) goalShown() bool {
	return slices.ContainsFunc(r.Summary, func(s PhaseSummary) bool { return s.Goal != nil })
}

// goalCell is s's verdict and the rule it was held to.
func (r *Report) goalCell(s PhaseSummary) string {
	g := s.Goal
	if g == nil {
		return "-"
	}
	verdict := "not met"
	if g.Met {
		verdict = "met"
	}
	if g.Rule == GoalRuleCeiling {
		return fmt.Sprintf("%s (%.2f of ceiling)", verdict, GoalCeilingFraction)
	}
	return fmt.Sprintf("%s (%d× %s)", verdict, GoalMultiple, r.shortName(RoleOracle))
}

// goalLine states the goal and how many of the judged phases met it.
func (r *Report) goalLine() string {
	met, judged := 0, 0
	for _, s := range r.Summary {
		if s.Goal != nil {
			judged++
			if s.Goal.Met {
				met++
			}
		}
	}
	k := r.shortName(RoleOracle)
	return fmt.Sprintf("goal: each phase ≥%d× %s or, where that is above %.2f of the ceiling, ≥%.2f of the ceiling; met by %d of %d phases",
		GoalMultiple, k, GoalCeilingFraction, GoalCeilingFraction, met, judged)
}

func (r *Report) targetNames() []string {
	names := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		names[i] = t.Name
	}
	return names
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
