package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSessionsStepByStep runs the plan on the reference server and the
// ceiling a step at a time, the ceiling sent only each step's new answers
// before its step (what a comparison does): every step must pass its
// checks on both, which it cannot if the ceiling lacks a step's answers or
// forgot the earlier ones.
func TestSessionsStepByStep(t *testing.T) {
	ctx, ref := startRef(t)
	rec := ref.Record
	ceiling, _ := startCeiling(t)

	rs, err := Start(ctx, ref, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	news, mark := rec.Since(0) // the namespace's creation
	putAnswers(t, ctx, ceiling, news)
	cs, err := Start(ctx, ceiling, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got, want := rs.Steps(), append(PhaseNames[:10:10], "crd-setup", PhaseCRCreate, PhaseCRGet, "crd-cleanup"); !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
	for _, name := range rs.Steps() {
		if err := rs.Step(ctx, name); err != nil {
			t.Fatal(err)
		}
		news, mark = rec.Since(mark)
		putAnswers(t, ctx, ceiling, news)
		if err := cs.Step(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	checkResult(t, rs.Result(), PhaseNames)
	checkResult(t, cs.Result(), PhaseNames)
	// The ceiling kept every step's answers, not only the last ones sent.
	res, err := Run(ctx, ceiling, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	checkResult(t, res, PhaseNames)

	// Steps run in the plan's order only.
	s, err := Start(ctx, ref, smallPlan)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Step(ctx, PhaseGet); err == nil || !strings.Contains(err.Error(), `step "get" out of order`) {
		t.Fatalf("get before create: %v", err)
	}
}

func putAnswers(t *testing.T, ctx context.Context, ceiling Target, rec *Recording) {
	t.Helper()
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, ceiling.BaseURL+CeilingAnswersPath, bytes.NewReader(data))
	resp, err := ceiling.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT answers: %d", resp.StatusCode)
	}
}

func TestRecordingSince(t *testing.T) {
	r := NewRecording()
	all, mark := r.Since(0)
	if len(all.Answers)+len(all.Events) != 0 || mark != 0 {
		t.Fatalf("empty: %+v, mark %d", all, mark)
	}
	r.put("create", Answer{Status: 201})
	r.put("crd-get", Answer{Status: 200, Body: []byte("pending")})
	r.putEvent("watch", []byte("e1"))
	first, mark := r.Since(0)
	if len(first.Answers) != 2 || string(first.Events["watch"]) != "e1\n" || mark != 3 {
		t.Fatalf("first: %+v, mark %d", first, mark)
	}
	r.put("crd-get", Answer{Status: 200, Body: []byte("established")}) // a poll's latest answer
	r.put("get", Answer{Status: 200})
	r.putEvent("watch", []byte("e2")) // the first event is the one kept
	next, mark2 := r.Since(mark)
	if len(next.Answers) != 2 || string(next.Answers["crd-get"].Body) != "established" || len(next.Events) != 0 || mark2 != 5 {
		t.Fatalf("since %d: %+v, mark %d", mark, next, mark2)
	}
	if none, _ := r.Since(mark2); len(none.Answers)+len(none.Events) != 0 {
		t.Fatalf("nothing new: %+v", none)
	}
}

// TestSessionMetersProcesses: with the server's processes named, each
// reported phase carries the CPU they and the client used; a process that
// is gone fails the step rather than reporting nothing.
func TestSessionMetersProcesses(t *testing.T) {
	ctx, ref := startRef(t)
	ref.Record = nil
	ref.Processes = []int{os.Getpid()} // the embedded server runs in this process
	plan := smallPlan
	plan.Phases = []string{PhaseGet, PhaseDelete}
	res, err := Run(ctx, ref, plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 2 {
		t.Fatalf("phases %+v, want get and delete", res.Phases)
	}
	for _, p := range res.Phases {
		if p.ServerCPU <= 0 || p.ClientCPU <= 0 {
			t.Errorf("%s: server CPU %v, client CPU %v; want both measured", p.Name, p.ServerCPU, p.ClientCPU)
		}
	}

	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no true(1) to take a pid from:", err)
	}
	ref.Processes = []int{gone.Process.Pid}
	var started, ended []string
	ref.OnPhase = func(p string) func() {
		started = append(started, p)
		return func() { ended = append(ended, p) }
	}
	s, err := Start(ctx, ref, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Step(ctx, PhaseCreate); err != nil {
		t.Fatalf("the unreported create, not metered: %v", err)
	}
	err = s.Step(ctx, PhaseGet)
	if err == nil || !strings.Contains(err.Error(), "refserver: get: the server's CPU: process ") {
		t.Fatalf("get with the server's process gone: %v", err)
	}
	// The phase's profile ended with it, and the session ends there.
	if !slices.Equal(started, []string{PhaseGet}) || !slices.Equal(ended, started) {
		t.Fatalf("phases started %v, ended %v", started, ended)
	}
	if err := s.Step(ctx, PhaseDelete); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("a step after the failed one: %v", err)
	}
}

// TestSessionParts runs the whole plan with every divisible step in three
// parts of unequal size (20 objects: 6, 7, 7; 5 custom objects: 1, 2, 2;
// 4 selector lists: 1, 1, 2; 6 watch writes: 2 each). The parts must share
// the operations exactly: a create made twice conflicts, one never made
// fails the gets, the paged walks' count and the deletes, and watchers
// opened again for a later part would wait for events written before
// them; and each phase must report all of its operations once, with the
// CPU of all of its parts, its profile started before the first part and
// ended after the last. A step has at most one part per operation (the
// three paged walks), and the CRD's setup and cleanup run whole.
func TestSessionParts(t *testing.T) {
	ctx, ref := startRef(t)
	ref.Record = nil
	ref.Processes = []int{os.Getpid()} // the embedded server runs in this process
	var hooks []string
	ref.OnPhase = func(p string) func() {
		hooks = append(hooks, "start "+p)
		return func() { hooks = append(hooks, "end "+p) }
	}
	plan := smallPlan
	plan.ListRounds, plan.SelectorLists = 3, 4
	s, err := Start(ctx, ref, plan)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const parts = 3
	wantMax := map[string]int{PhaseCreate: 20, PhaseGet: 20, PhaseUpdate: 20, PhaseMergePatch: 20, PhaseApply: 20,
		PhaseList: 3, PhaseListSelector: 4, PhaseWatch: 6, PhaseWatchSelector: 6, PhaseDelete: 20,
		"crd-setup": 1, PhaseCRCreate: 5, PhaseCRGet: 5, "crd-cleanup": 1, "no-such-step": 1}
	for name, want := range wantMax {
		if got := s.MaxParts(name); got != want {
			t.Errorf("MaxParts(%s) = %d, want %d", name, got, want)
		}
	}
	var wantHooks []string
	for _, name := range s.Steps() {
		if err := s.StepPart(ctx, name, 0, s.MaxParts(name)+1); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Fatalf("%s in %d parts: %v", name, s.MaxParts(name)+1, err)
		}
		if s.MaxParts(name) < parts {
			if err := s.Step(ctx, name); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := s.StepPart(ctx, name, 1, parts); err == nil || !strings.Contains(err.Error(), "out of order") {
				t.Fatalf("%s: part 2 first: %v", name, err)
			}
			for k := range parts {
				if err := s.StepPart(ctx, name, k, parts); err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					if err := s.StepPart(ctx, name, 1, parts-1); err == nil || !strings.Contains(err.Error(), "out of order") {
						t.Fatalf("%s: part 2 of another count: %v", name, err)
					}
				}
			}
		}
		if slices.Contains(PhaseNames, name) {
			wantHooks = append(wantHooks, "start "+name, "end "+name)
		}
	}
	res := s.Result()
	checkResult(t, res, PhaseNames)
	for _, p := range res.Phases {
		want := 0
		switch p.Name {
		case PhaseCreate, PhaseGet, PhaseUpdate, PhaseMergePatch, PhaseApply, PhaseDelete:
			want = plan.Objects
		case PhaseCRCreate, PhaseCRGet:
			want = plan.CustomObjects
		case PhaseList:
			want = plan.ListRounds * 3 // 20 objects at 7 a page
		case PhaseListSelector:
			want = plan.SelectorLists
		case PhaseWatch:
			want = plan.WatchEvents
		case PhaseWatchSelector:
			want = plan.WatchEvents / 2
		}
		if want != 0 && p.Ops != want {
			t.Errorf("%s: %d ops, want %d", p.Name, p.Ops, want)
		}
		if p.ServerCPU <= 0 || p.ClientCPU <= 0 || p.Elapsed <= 0 {
			t.Errorf("%s: %+v; want its elapsed time and CPU", p.Name, p)
		}
	}
	if !slices.Equal(hooks, wantHooks) {
		t.Fatalf("profiles %v, want %v", hooks, wantHooks)
	}
}
