package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/loadgen"
	"github.com/apiconform/apiconform/suites/framework"
)

func benchDefaults() benchOptions {
	return benchOptions{targetName: "kube-apiserver", rounds: 3, parts: 4, timeout: time.Minute, format: "text"}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*benchOptions)
		want   string
	}{
		{"bad format", func(o *benchOptions) { o.format = "html" }, `--format "html"`},
		{"no rounds", func(o *benchOptions) { o.rounds = 0 }, "--rounds 0"},
		{"no parts", func(o *benchOptions) { o.parts = 0 }, "--parts 0: want 1 to 50"},
		{"too many parts", func(o *benchOptions) { o.parts = 51 }, "--parts 51"},
		{"bad plan", func(o *benchOptions) { o.plan.Objects = 3 }, "objects: want at least 10"},
		{"unknown phase", func(o *benchOptions) { o.plan.Phases = []string{"list"} }, `unknown phase "list"`},
		{"pprof in process", func(o *benchOptions) { o.inProcess, o.pprofDir = true, "x" }, "need the reference server as a separate process"},
		{"missing report", func(o *benchOptions) { o.from = "/nonexistent/bench.json" }, "/nonexistent/bench.json"},
		{"target pids without a target", func(o *benchOptions) { o.targetPIDs = []int{os.Getpid()} }, "--target-pids: no target"},
		{"target pid gone", func(o *benchOptions) {
			o.tf, o.targetPIDs = targetFlags{server: "http://127.0.0.1:1"}, []int{gonePID(t)}
		}, "--target-pids: process"},
		{"refused target", func(o *benchOptions) {
			o.inProcess, o.noCeiling, o.tf = true, true, targetFlags{server: "http://127.0.0.1:1"}
		}, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := benchDefaults()
			tc.mutate(&o)
			err := runBench(context.Background(), io.Discard, io.Discard, o)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

// gonePID is the process ID of a process that has exited.
func gonePID(t *testing.T) int {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestBenchInProcess runs two small rounds against the in-process reference
// server, writes the JSON report, and renders it again from the file.
func TestBenchInProcess(t *testing.T) {
	o := benchDefaults()
	o.inProcess, o.noCeiling, o.rounds = true, true, 2
	o.plan = loadgen.Plan{Objects: 20, Concurrency: 2, PageSize: 7, ListRounds: 1, SelectorLists: 1, Watchers: 2, WatchEvents: 4,
		CustomObjects: 3, Phases: []string{loadgen.PhaseCreate, loadgen.PhaseList, loadgen.PhaseWatch}}
	o.jsonOut = filepath.Join(t.TempDir(), "out", "bench.json")
	var out bytes.Buffer
	if err := runBench(context.Background(), &out, io.Discard, o); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "  refserver-inprocess  in this process, plain HTTP, HTTP/1.1  http://127.0.0.1:") {
		t.Errorf("in-process mode is not labelled:\n%s", out.String())
	}
	// The server shares this process with the client: its CPU is not told apart.
	if !strings.Contains(out.String(), "CPU not measured") || strings.Contains(out.String(), "CPU per op") {
		t.Errorf("in-process CPU reported:\n%s", out.String())
	}
	data, err := os.ReadFile(o.jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var rep loadgen.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, s := range rep.Summary {
		phases = append(phases, s.Phase)
		if len(s.Figures) != 1 || s.Figures[0].Rounds != 2 {
			t.Errorf("%s: figures %+v", s.Phase, s.Figures)
		}
	}
	if !slices.Equal(phases, o.plan.Phases) || len(rep.Runs) != 2 || rep.Machine.CPUs == 0 || rep.Method == "" {
		t.Fatalf("report: phases %v, %d runs, machine %+v", phases, len(rep.Runs), rep.Machine)
	}

	md := benchDefaults()
	md.from, md.format = o.jsonOut, "markdown"
	out.Reset()
	if err := runBench(context.Background(), &out, io.Discard, md); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "| phase | ops | refserver-inprocess ops/s |") || !strings.Contains(out.String(), "| watch-fanout | 4 |") {
		t.Fatalf("markdown:\n%s", out.String())
	}
}

// TestBenchHelperProcess is the ceiling process of TestBenchCeilingChild
// (this test binary run again); it does nothing in a normal test run.
func TestBenchHelperProcess(t *testing.T) {
	if os.Getenv("APICONFORM_BENCH_HELPER") != "1" {
		t.Skip("helper process only")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	cmd := newBenchCeilingCmd()
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
}

// TestBenchCeilingChild starts the ceiling as a process of its own, profiled
// as --pprof-dir profiles it, gives it answers, checks one and its profiles,
// and stops it.
func TestBenchCeilingChild(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log bytes.Buffer
	profDir := filepath.Join(t.TempDir(), "ceiling")
	prof, err := newChildProfile(profDir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := startChild(ctx, "ceiling", t.TempDir(), os.Args[0], []string{"-test.run=^TestBenchHelperProcess$", "--", "--addr", "127.0.0.1:0"},
		append(prof.env(), "APICONFORM_BENCH_HELPER=1"), &log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop()
	bt, err := connect(ctx, framework.Target{Kubeconfig: c.kubeconfig}, loadgen.TargetInfo{Name: "ceiling", Role: loadgen.RoleCeiling}, false)
	if err != nil {
		t.Fatal(err)
	}
	rec := loadgen.NewRecording()
	rec.Answers["get"] = loadgen.Answer{Status: http.StatusOK, ContentType: "application/json", Body: []byte(`{"kind":"ConfigMap"}`)}
	if err := sendAnswers(ctx, bt.target, rec); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, bt.target.BaseURL+"/api/v1/namespaces/x/configmaps/y", nil)
	req.Header.Set(loadgen.OpHeader, "get")
	stopProfile := prof.hook("ceiling", &log)("get")
	resp, err := bt.target.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stopProfile()
	for _, f := range []string{"get.cpu.pprof", "get.allocs-before.pprof", "get.allocs-after.pprof"} {
		if st, err := os.Stat(filepath.Join(profDir, f)); err != nil || st.Size() == 0 {
			t.Errorf("profile %s: %v (log: %s)", f, err, log.String())
		}
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != `{"kind":"ConfigMap"}` || resp.Proto != "HTTP/2.0" {
		t.Fatalf("ceiling answered %s %d %s", resp.Proto, resp.StatusCode, body)
	}
	// The ceiling runs with the serving process's settings: after a
	// collection, stackstart's ballast is parked in it.
	if !ballastParked(ctx, t, prof.addr) {
		t.Errorf("no stackstart ballast in the ceiling process after a collection")
	}
	c.stop()
	select {
	case <-c.done:
	default:
		t.Fatal("ceiling still running after stop")
	}
}

// ballastParked forces a collection in the process profiled at addr
// (/debug/pprof/heap?gc=1) and reports whether a stackstart ballast
// goroutine shows in its goroutines within ten seconds.
func ballastParked(ctx context.Context, t *testing.T, addr string) bool {
	t.Helper()
	get := func(path string) string {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		get("/debug/pprof/heap?gc=1")
		if strings.Contains(get("/debug/pprof/goroutine?debug=1"), "stackstart.(*Keeper).park") {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

func TestStartChildFailure(t *testing.T) {
	_, err := startChild(context.Background(), "ceiling", t.TempDir(), os.Args[0], []string{"-test.run=^TestBenchHelperProcess$", "--", "--addr", "0.0.0.0:0"},
		[]string{"APICONFORM_BENCH_HELPER=1"}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "not a loopback address") {
		t.Fatalf("err = %v", err)
	}
}

func TestTailBuffer(t *testing.T) {
	tb := &tailBuffer{max: 5}
	_, _ = tb.Write([]byte("abc"))
	_, _ = tb.Write([]byte("defg"))
	if tb.String() != "cdefg" {
		t.Fatalf("tail = %q", tb.String())
	}
}
