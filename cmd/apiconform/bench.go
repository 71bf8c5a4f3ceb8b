package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	rpprof "runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/loadgen"
	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/servingproc"
	"github.com/apiconform/apiconform/suites/framework"
)

// benchOptions are the flags of `apiconform bench`.
type benchOptions struct {
	tf         targetFlags
	targetName string
	plan       loadgen.Plan
	rounds     int
	parts      int
	inProcess  bool
	noCeiling  bool
	serveArgs  []string
	timeout    time.Duration
	jsonOut    string
	from       string
	format     string
	pprofDir   string
	targetPIDs []int
}

func init() {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "bench [--kubeconfig … | --server …]",
		Short: "Drive the same bounded load against the reference server, a target and the transport ceiling, and print the ratios",
		Long: `Drive one bounded load — create, get, update, merge patch, server-side apply,
paged and label-selected lists, watch fan-out with and without a label
selector, delete, and custom resources — against:

  refserver       the reference server, started as "apiconform serve" in a
                  separate process over HTTPS (--in-process: in this process,
                  plain HTTP, labelled so)
  the target      when --kubeconfig or --server names one (e.g. kube-apiserver)
  ceiling         a trivial HTTPS server in a separate process that answers
                  each request with the bytes the reference server gave: what
                  the transport and this client allow on this machine

Every round runs the load once on every target a step at a time: each phase
runs on every target back to back, the reference server and the ceiling
next to each other (each first in turn) and the target after them, and each
starts once the machine's processors have been mostly idle for 100 ms
(waiting at most 3 s), so drift on a busy machine falls on all of them alike.
The reference server and the ceiling take each phase in --parts parts (at
most one per request, paged walk or watched write; a watch phase's
watchers stay open across its parts), in turn (A B, B A, …): each one's
figure then spans the same
stretch of the machine's time, which on a shared VM moves a phase's
figure by a fifth from one moment to the next. The figures are medians
over the rounds; a ratio is the median of each round's ratio. Each phase also reads the CPU (and the minor page faults)
the servers' processes used per operation, with the client's: always for
the reference server and the ceiling, for the target when --target-pids
names its processes. With a target and the ceiling, each phase is judged
against the throughput goal: at least 10× the target's throughput, or 0.80
of the ceiling's where that is the lower bar (the goal column). Each load
works in a namespace of its own and deletes what it made.`,
		Example: `  apiconform bench --kubeconfig .oracle/kubeconfig --json out/bench.json
  apiconform bench --kubeconfig .oracle/kubeconfig --target-pids "$(cat .oracle/kube-apiserver.pid),$(cat .oracle/etcd.pid)"
  apiconform bench --phases watch-fanout --rounds 1 --pprof-dir out/pprof
  apiconform bench --from out/bench.json --format markdown`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
		},
	}
	f := cmd.Flags()
	o.tf.register(f)
	d := loadgen.DefaultPlan
	f.StringVar(&o.targetName, "target-name", "kube-apiserver", "what to call the target in the tables")
	f.IntVar(&o.plan.Objects, "objects", 0, fmt.Sprintf("configmaps to create, read, write, list and delete (default %d)", d.Objects))
	f.IntVar(&o.plan.Concurrency, "concurrency", 0, fmt.Sprintf("parallel requests in the per-object phases (default %d)", d.Concurrency))
	f.IntVar(&o.plan.PageSize, "page-size", 0, fmt.Sprintf("limit of each paged list (default %d)", d.PageSize))
	f.IntVar(&o.plan.ListRounds, "list-rounds", 0, fmt.Sprintf("full paged walks of the collection (default %d)", d.ListRounds))
	f.IntVar(&o.plan.SelectorLists, "selector-lists", 0, fmt.Sprintf("lists with a label selector (default %d)", d.SelectorLists))
	f.IntVar(&o.plan.Watchers, "watchers", 0, fmt.Sprintf("concurrent watches in each watch phase (default %d)", d.Watchers))
	f.IntVar(&o.plan.WatchEvents, "events", 0, fmt.Sprintf("events each fan-out watcher must receive; the selector watch writes as many, half inside its selector (default %d)", d.WatchEvents))
	f.IntVar(&o.plan.CustomObjects, "custom-objects", 0, fmt.Sprintf("custom resources to create and read (default %d)", d.CustomObjects))
	f.DurationVar(&o.plan.PhaseTimeout, "phase-timeout", 0, fmt.Sprintf("deadline of each phase, or of each of its --parts (default %s)", d.PhaseTimeout))
	f.StringSliceVar(&o.plan.Phases, "phases", nil, "report only these phases (default all): "+strings.Join(loadgen.PhaseNames, ","))
	f.IntVar(&o.rounds, "rounds", 3, "rounds over all targets; figures are medians over them")
	f.IntVar(&o.parts, "parts", 4, "parts each phase is cut into on the reference server and the ceiling, run in turn (1: each runs the whole phase at once)")
	f.BoolVar(&o.inProcess, "in-process", false, "run the reference server in this process over plain HTTP instead of as a separate HTTPS process")
	f.BoolVar(&o.noCeiling, "no-ceiling", false, "do not measure the transport ceiling")
	f.StringArrayVar(&o.serveArgs, "serve-arg", nil, `extra flag for the reference server process, e.g. --serve-arg=--data-dir=/tmp/d (repeatable)`)
	f.DurationVar(&o.timeout, "timeout", 15*time.Minute, "deadline of the whole benchmark")
	f.StringVar(&o.jsonOut, "json", "", "also write the report as JSON to this file")
	f.StringVar(&o.from, "from", "", "render a report written by --json instead of measuring")
	f.StringVar(&o.format, "format", "text", "output: text or markdown (the README's table)")
	f.IntSliceVar(&o.targetPIDs, "target-pids", nil, "the target's server processes on this machine (e.g. kube-apiserver's and etcd's): each phase then reports the CPU they used per operation, as it does for the reference server and the ceiling")
	f.StringVar(&o.pprofDir, "pprof-dir", "", "profile the reference server process: CPU and allocation profiles of each phase of round 1 into this directory (the ceiling's into its ceiling/ subdirectory), and /debug/pprof while it runs")
	cmd.AddCommand(newBenchCeilingCmd())
	rootCmd.AddCommand(cmd)
}

// benchTarget is one server of the comparison.
type benchTarget struct {
	info   loadgen.TargetInfo
	target loadgen.Target
	hook   func(phase string) func() // profiling, round 1 only
}

func runBench(ctx context.Context, out, stderr io.Writer, o benchOptions) error {
	if o.format != "text" && o.format != "markdown" {
		return withExit(exitUsage, fmt.Errorf("--format %q: want text or markdown", o.format))
	}
	if o.from != "" {
		data, err := os.ReadFile(o.from)
		if err != nil {
			return withExit(exitUsage, err)
		}
		var rep loadgen.Report
		if err := json.Unmarshal(data, &rep); err != nil {
			return withExit(exitUsage, fmt.Errorf("%s: %w", o.from, err))
		}
		return writeReport(out, &rep, o.format)
	}
	if o.rounds < 1 || o.rounds > 20 {
		return withExit(exitUsage, fmt.Errorf("--rounds %d: want 1 to 20", o.rounds))
	}
	if err := o.plan.Validate(); err != nil {
		return withExit(exitUsage, err)
	}
	if o.parts < 1 || o.parts > maxParts {
		return withExit(exitUsage, fmt.Errorf("--parts %d: want 1 to %d", o.parts, maxParts))
	}
	if len(o.targetPIDs) > 0 {
		if o.tf.embedded() {
			return withExit(exitUsage, errors.New("--target-pids: no target (--kubeconfig or --server) to measure"))
		}
		if _, err := loadgen.ReadUsage(o.targetPIDs); err != nil {
			return withExit(exitUsage, fmt.Errorf("--target-pids: %w", err))
		}
	}
	if o.inProcess && (len(o.serveArgs) > 0 || o.pprofDir != "") {
		return withExit(exitUsage, errors.New("--serve-arg and --pprof-dir need the reference server as a separate process (drop --in-process)"))
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "apiconform-bench-")
	if err != nil {
		return withExit(exitUsage, err)
	}
	defer os.RemoveAll(dir)

	rep := &loadgen.Report{Version: loadgen.ReportVersion, Started: time.Now().UTC(), Command: strings.Join(os.Args, " "),
		Plan: o.plan.WithDefaults(), Rounds: o.rounds, Parts: o.parts, Machine: machine()}
	rep.Method = "every round drives the same bounded load against each target, each step (phase) on every target back to back " +
		"once the machine is quiet (the reference server and the ceiling side by side, in turn first; the target after them); " +
		fmt.Sprintf("the reference server and the ceiling take each phase in %d parts, in turn (A B, B A, …), each part once the machine is quiet; ", o.parts) +
		"figures are medians over the rounds of each round's ops/s (± half the range) and of its p50/p99, ratios the medians of each round's ratio; " +
		"the client is client-go's transport in one process on the same machine"

	var targets []*benchTarget
	ref, err := startRefserver(ctx, o, dir, stderr)
	if err != nil {
		return withExit(exitUsage, err)
	}
	defer ref.stop()
	targets = append(targets, ref.bt)
	if !o.tf.embedded() {
		t, cleanup, err := o.tf.resolve(ctx, stderr)
		if err != nil {
			return withExit(exitUsage, err)
		}
		defer cleanup()
		bt, err := connect(ctx, t, loadgen.TargetInfo{Name: o.targetName, Role: loadgen.RoleOracle, Mode: "given target"}, true)
		if err != nil {
			return withExit(exitUsage, err)
		}
		bt.meter(o.targetPIDs...)
		targets = append(targets, bt)
	}
	var ceiling *child
	if !o.noCeiling {
		// The ceiling's profiles go beside the reference server's, so
		// the two read side by side: what the transport costs either way.
		var prof childProfile
		if o.pprofDir != "" {
			if prof, err = newChildProfile(filepath.Join(o.pprofDir, "ceiling")); err != nil {
				return withExit(exitUsage, err)
			}
		}
		ceiling, err = startChild(ctx, "ceiling", dir, "", []string{"bench", "ceiling"}, prof.env(), stderr)
		if err != nil {
			return withExit(exitUsage, err)
		}
		defer ceiling.stop()
		bt, err := connect(ctx, framework.Target{Kubeconfig: ceiling.kubeconfig, Name: "ceiling"},
			loadgen.TargetInfo{Name: "ceiling", Role: loadgen.RoleCeiling, Mode: "separate process (serve's process settings), HTTPS, stored answers"}, false)
		if err != nil {
			return withExit(exitUsage, err)
		}
		bt.hook = prof.hook("ceiling", stderr)
		bt.meter(ceiling.cmd.Process.Pid)
		targets = append(targets, bt)
	}
	for _, t := range targets {
		rep.Targets = append(rep.Targets, t.info)
	}

	rec := loadgen.NewRecording()
	rep.Quiet = &loadgen.QuietStats{Limit: quietLimit}
	for round := 0; round < o.rounds; round++ {
		runs, err := benchRound(ctx, targets, round, o.parts, o.plan, rec, rep.Quiet, stderr)
		if err != nil {
			return withExit(exitFailed, fmt.Errorf("round %d: %w", round+1, err))
		}
		rep.Runs = append(rep.Runs, runs...)
	}
	for i := range rep.Targets {
		for _, r := range rep.Runs {
			if r.Target == rep.Targets[i].Name {
				rep.Targets[i].Proto = r.Proto
			}
		}
	}
	rep.Duration = time.Since(rep.Started).Round(time.Second)
	rep.Machine.LoadAvgAfter = loadAvg()
	rep.Summarize()
	if err := writeReport(out, rep, o.format); err != nil {
		return err
	}
	if o.jsonOut != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if dir := filepath.Dir(o.jsonOut); dir != "" {
			_ = os.MkdirAll(dir, 0o755)
		}
		if err := os.WriteFile(o.jsonOut, append(data, '\n'), 0o644); err != nil {
			return withExit(exitUsage, err)
		}
	}
	return nil
}

// maxParts bounds --parts: each part waits for a quiet machine (100 ms
// at least), and a step has no more parts than operations anyway.
const maxParts = 50

// quietLimit bounds each step's wait for a quiet machine.
const quietLimit = 3 * time.Second

// benchRound runs the plan once on every target, a step at a time: each
// step on every target back to back, the reference server and the ceiling
// next to each other (in turn first, by step and round) and the target
// after them, each once the machine is quiet (loadgen.Quiet). In round 1
// the reference server goes first, keeping the answers the ceiling then
// replays.
func benchRound(ctx context.Context, targets []*benchTarget, round, parts int, plan loadgen.Plan, rec *loadgen.Recording,
	quiet *loadgen.QuietStats, stderr io.Writer) ([]loadgen.Result, error) {
	sessions := make([]*loadgen.Session, len(targets))
	var sent uint64 // the recording's mark when the ceiling was last sent its news
	sendNews := func(t *benchTarget) error {
		if round > 0 || t.info.Role != loadgen.RoleCeiling {
			return nil
		}
		var news *loadgen.Recording
		news, sent = rec.Since(sent)
		return sendAnswers(ctx, t.target, news)
	}
	defer func() {
		for _, s := range sessions {
			if s != nil {
				s.Close()
			}
		}
	}()
	for i, t := range targets {
		lt := t.target
		if round == 0 {
			lt.OnPhase = t.hook // profiles of round 1 (nil when not profiled)
			if t.info.Role == loadgen.RoleRefserver {
				lt.Record = rec
			}
		}
		if err := sendNews(t); err != nil { // the namespace's creation
			return nil, err
		}
		s, err := loadgen.Start(ctx, lt, plan)
		if err != nil {
			return nil, err
		}
		sessions[i] = s
	}
	start := time.Now()
	for si, name := range sessions[0].Steps() {
		order := stepOrder(targets, round, si)
		// The reference server and the ceiling lead the order; they take
		// a step in parts where it has enough operations, in turn.
		split := 0
		for split < len(order) && targets[order[split]].info.Role != loadgen.RoleOracle {
			split++
		}
		pair, rest := order[:split], order[split:]
		n := 1
		if len(pair) == 2 {
			n = min(parts, sessions[0].MaxParts(name))
		}
		for k := range n {
			for _, i := range partOrder(pair, k) {
				// Before the wait, so the ceiling has taken them in when its
				// part starts.
				if err := sendNews(targets[i]); err != nil {
					return nil, err
				}
				quiet.Wait(ctx)
				if err := sessions[i].StepPart(ctx, name, k, n); err != nil {
					return nil, err
				}
			}
		}
		for _, i := range rest {
			if err := sendNews(targets[i]); err != nil {
				return nil, err
			}
			quiet.Wait(ctx)
			if err := sessions[i].Step(ctx, name); err != nil {
				return nil, err
			}
		}
	}
	runs := make([]loadgen.Result, len(targets))
	for i, s := range sessions {
		runs[i] = s.Result()
		runs[i].Round = round + 1
	}
	fmt.Fprintf(stderr, "bench: round %d done in %s\n", round+1, time.Since(start).Round(100*time.Millisecond))
	return runs, nil
}

// stepOrder is the order of targets (indexes) for step si of round: the
// reference server and the ceiling first, the reference server ahead in
// round 1 (the ceiling replays its answers) and from then on ahead when
// round+si is even, so each leads about as often in every phase; then the
// others: only the pair's ratio is read to a few percent, and
// kube-apiserver's etcd may still be writing after its answers.
func stepOrder(targets []*benchTarget, round, si int) []int {
	var ref, ceiling, rest []int
	for i, t := range targets {
		switch t.info.Role {
		case loadgen.RoleRefserver:
			ref = append(ref, i)
		case loadgen.RoleCeiling:
			ceiling = append(ceiling, i)
		default:
			rest = append(rest, i)
		}
	}
	if round > 0 && (round+si)%2 == 1 {
		return slices.Concat(ceiling, ref, rest)
	}
	return slices.Concat(ref, ceiling, rest)
}

// partOrder is the order of the pair's part k: as stepOrder gives it for
// the first part, then the other way round and back (A B, B A, A B, …), so
// neither always follows the other and a drift of the machine over the
// step falls on both alike.
func partOrder(pair []int, k int) []int {
	if k%2 == 1 && len(pair) == 2 {
		return []int{pair[1], pair[0]}
	}
	return pair
}

func writeReport(w io.Writer, rep *loadgen.Report, format string) error {
	if format == "markdown" {
		return rep.WriteMarkdown(w)
	}
	return rep.WriteText(w)
}

// connect builds the client of a target and, for API servers, checks that
// it answers and accepts the credentials.
func connect(ctx context.Context, t framework.Target, info loadgen.TargetInfo, apiServer bool) (*benchTarget, error) {
	if apiServer {
		v, err := preflight(ctx, t)
		if err != nil {
			return nil, err
		}
		info.Version = v
	}
	hc, base, err := t.HTTPClient()
	if err != nil {
		return nil, err
	}
	info.URL = base
	return &benchTarget{info: info, target: loadgen.Target{Name: info.Name, BaseURL: base, Client: hc}}, nil
}

// meter has each phase read the CPU the target's server processes use
// (none: not measured, as for a server in this process), where /proc
// tells (Linux); elsewhere the report says the CPU was not measured.
func (t *benchTarget) meter(pids ...int) {
	if _, err := loadgen.ReadUsage(pids); err != nil {
		return
	}
	t.target.Processes = pids
	t.info.Processes = pids
}

// sendAnswers gives the ceiling what the reference server answered.
func sendAnswers(ctx context.Context, t loadgen.Target, rec *loadgen.Recording) error {
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, t.BaseURL+loadgen.CeilingAnswersPath, bytes.NewReader(data))
	if err != nil {
		return err
	}
	resp, err := t.Client.Do(req)
	if err != nil {
		return fmt.Errorf("ceiling: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("ceiling: answers: got %d: %s", resp.StatusCode, body)
	}
	return nil
}

// refTarget is the reference server under test and how to stop it.
type refTarget struct {
	bt   *benchTarget
	stop func()
}

func startRefserver(ctx context.Context, o benchOptions, dir string, log io.Writer) (*refTarget, error) {
	info := loadgen.TargetInfo{Name: "refserver", Role: loadgen.RoleRefserver, Mode: "separate process (apiconform serve), HTTPS"}
	if o.inProcess {
		s, err := refserver.StartEmbedded(ctx)
		if err != nil {
			return nil, fmt.Errorf("start the in-process reference server: %w", err)
		}
		info.Name, info.Mode = "refserver-inprocess", "in this process, plain HTTP"
		bt, err := connect(ctx, framework.Target{Server: s.URL(), Token: s.Token(), Name: info.Name}, info, true)
		if err != nil {
			_ = s.Close()
			return nil, err
		}
		return &refTarget{bt: bt, stop: func() { _ = s.Close() }}, nil
	}
	// A token file turns authentication on, as a user would run it; the
	// kubeconfig serve writes carries the admin token it adds.
	tokens := filepath.Join(dir, "refserver-tokens.csv")
	if err := os.WriteFile(tokens, []byte(refserver.NewToken()+`,apiconform-bench,apiconform-bench,"system:masters"`+"\n"), 0o600); err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--token-auth-file", tokens}, o.serveArgs...)
	prof, err := newChildProfile(o.pprofDir)
	if err != nil {
		return nil, err
	}
	c, err := startChild(ctx, "refserver", dir, "", args, prof.env(), log)
	if err != nil {
		return nil, err
	}
	bt, err := connect(ctx, framework.Target{Kubeconfig: c.kubeconfig, Name: info.Name}, info, true)
	if err != nil {
		c.stop()
		return nil, err
	}
	bt.hook = prof.hook("reference server", log)
	bt.meter(c.cmd.Process.Pid)
	return &refTarget{bt: bt, stop: c.stop}, nil
}

// childProfile is where a child process of the benchmark writes its
// profiles (nothing when dir is empty).
type childProfile struct{ addr, dir string }

func newChildProfile(dir string) (childProfile, error) {
	if dir == "" {
		return childProfile{}, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return childProfile{}, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return childProfile{}, err
	}
	addr, err := freeLoopbackAddr()
	if err != nil {
		return childProfile{}, err
	}
	return childProfile{addr: addr, dir: abs}, nil
}

func (p childProfile) env() []string {
	if p.addr == "" {
		return nil
	}
	return []string{benchPprofAddrEnv + "=" + p.addr, benchProfileDirEnv + "=" + p.dir}
}

// hook starts and stops the child's profile around each phase of round 1.
func (p childProfile) hook(what string, log io.Writer) func(phase string) func() {
	if p.addr == "" {
		return nil
	}
	fmt.Fprintf(log, "bench: %s profiles at http://%s/debug/pprof/ and in %s\n", what, p.addr, p.dir)
	return func(phase string) func() {
		profileCall(p.addr, "start", phase, log)
		return func() { profileCall(p.addr, "stop", phase, log) }
	}
}

func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func profileCall(addr, verb, phase string, log io.Writer) {
	resp, err := http.Get("http://" + addr + "/apiconform-bench/" + verb + "?phase=" + phase)
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("got %d", resp.StatusCode)
		}
	}
	if err != nil {
		fmt.Fprintf(log, "bench: profile %s %s: %v\n", verb, phase, err)
	}
}

// child is a server process of the benchmark: `apiconform serve` or the
// ceiling, started from this very binary.
type child struct {
	name       string
	kubeconfig string
	cmd        *exec.Cmd
	done       chan struct{}
	tail       *tailBuffer
}

// startChild runs exe (default: this binary) with args plus
// --write-kubeconfig and waits until it says the kubeconfig is written.
func startChild(ctx context.Context, name, dir, exe string, args, env []string, log io.Writer) (*child, error) {
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("%s: find this binary: %w", name, err)
		}
	}
	kc := filepath.Join(dir, name+".kubeconfig")
	cmd := exec.Command(exe, append(args, "--write-kubeconfig", kc)...)
	cmd.Env = append(os.Environ(), env...)
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stderr = tail
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start %s: %w", name, exe, err)
	}
	c := &child{name: name, kubeconfig: kc, cmd: cmd, done: make(chan struct{}), tail: tail}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			if !signalled && strings.HasPrefix(sc.Text(), "kubeconfig written to") {
				close(ready)
				signalled = true
			}
		}
		_ = cmd.Wait()
		close(c.done)
	}()
	wait := time.NewTimer(30 * time.Second)
	defer wait.Stop()
	select {
	case <-ready:
		fmt.Fprintf(log, "bench: %s started (pid %d)\n", name, cmd.Process.Pid)
		return c, nil
	case <-c.done:
		return nil, fmt.Errorf("%s exited before it was ready: %s", name, strings.TrimSpace(tail.String()))
	case <-wait.C:
		c.stop()
		return nil, fmt.Errorf("%s not ready after 30s: %s", name, strings.TrimSpace(tail.String()))
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// stop asks the process to end (SIGTERM) and kills it after 5s.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// tailBuffer keeps the last max bytes written, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

func machine() loadgen.Machine {
	m := loadgen.Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), LoadAvgBefore: loadAvg()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// loadAvg is the 1, 5 and 15 minute load averages ("" off Linux).
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// newBenchCeilingCmd is the hidden `bench ceiling`: the ceiling server bench
// starts as a process of its own.
func newBenchCeilingCmd() *cobra.Command {
	var addr, kubeconfig string
	cmd := &cobra.Command{
		Use:    "ceiling",
		Short:  "Serve the transport ceiling (started by bench)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if kubeconfig == "" {
				return withExit(exitUsage, errors.New("--write-kubeconfig is required"))
			}
			// A serving process's settings, as apiconform serve's (see
			// package servingproc): without them the ceiling would
			// understate what the transport allows.
			settings := servingproc.Start()
			defer settings.Stop()
			settings.Serving()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			token := refserver.NewToken()
			s, err := loadgen.StartCeiling(ctx, addr, token)
			if err != nil {
				return withExit(exitUsage, err)
			}
			if err := os.WriteFile(kubeconfig, s.Kubeconfig(token), 0o600); err != nil {
				_ = s.Close()
				return withExit(exitUsage, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ceiling listening on %s\nkubeconfig written to %s\n", s.URL(), kubeconfig)
			<-ctx.Done()
			return s.Close()
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "HTTPS listen address (loopback)")
	cmd.Flags().StringVar(&kubeconfig, "write-kubeconfig", "", "write a kubeconfig (address, CA, token) to this file")
	return cmd
}

// The reference server process profiles itself when bench sets these: a
// loopback address for /debug/pprof and per-phase profiles into a directory.
// Nothing else sets them, so `apiconform serve` run by a user never does.
const (
	benchPprofAddrEnv  = "APICONFORM_BENCH_PPROF_ADDR"
	benchProfileDirEnv = "APICONFORM_BENCH_PROFILE_DIR"
)

func init() {
	addr := os.Getenv(benchPprofAddrEnv)
	if addr == "" {
		return
	}
	dir := os.Getenv(benchProfileDirEnv)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	var mu sync.Mutex
	var cpu *os.File
	snapshot := func(name string) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		defer f.Close()
		return rpprof.Lookup("allocs").WriteTo(f, 0)
	}
	mux.HandleFunc("/apiconform-bench/start", func(w http.ResponseWriter, r *http.Request) {
		phase := filepath.Base(r.URL.Query().Get("phase"))
		mu.Lock()
		defer mu.Unlock()
		if dir == "" || cpu != nil {
			http.Error(w, "no profile directory, or a profile is running", http.StatusConflict)
			return
		}
		if err := snapshot(phase + ".allocs-before.pprof"); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		f, err := os.Create(filepath.Join(dir, phase+".cpu.pprof"))
		if err == nil {
			if err = rpprof.StartCPUProfile(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		cpu = f
	})
	mux.HandleFunc("/apiconform-bench/stop", func(w http.ResponseWriter, r *http.Request) {
		phase := filepath.Base(r.URL.Query().Get("phase"))
		mu.Lock()
		defer mu.Unlock()
		if cpu == nil {
			http.Error(w, "no profile running", http.StatusConflict)
			return
		}
		rpprof.StopCPUProfile()
		err := errors.Join(cpu.Close(), snapshot(phase+".allocs-after.pprof"))
		cpu = nil
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	if host, _, err := net.SplitHostPort(addr); err != nil || !net.ParseIP(host).IsLoopback() {
		fmt.Fprintf(os.Stderr, "apiconform: %s=%q: want a loopback host:port\n", benchPprofAddrEnv, addr)
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "apiconform: %s: %v\n", benchPprofAddrEnv, err)
		return
	}
	go func() { _ = http.Serve(ln, mux) }()
}
