package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apiconform/apiconform/loadgen"
	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/suites/framework"
)

func TestStepOrder(t *testing.T) {
	role := func(roles ...string) []*benchTarget {
		var ts []*benchTarget
		for _, r := range roles {
			ts = append(ts, &benchTarget{info: loadgen.TargetInfo{Role: r}})
		}
		return ts
	}
	ref, kube, ceiling := loadgen.RoleRefserver, loadgen.RoleOracle, loadgen.RoleCeiling
	for _, tc := range []struct {
		targets   []*benchTarget
		round, si int
		want      []int
	}{
		{role(ref, kube, ceiling), 0, 0, []int{0, 2, 1}}, // round 1: the reference server records first
		{role(ref, kube, ceiling), 0, 1, []int{0, 2, 1}},
		{role(ref, kube, ceiling), 1, 0, []int{2, 0, 1}},
		{role(ref, kube, ceiling), 1, 1, []int{0, 2, 1}},
		{role(ref, kube, ceiling), 2, 0, []int{0, 2, 1}},
		{role(ref, kube, ceiling), 2, 1, []int{2, 0, 1}},
		{role(ref, ceiling), 1, 0, []int{1, 0}},
		{role(ref, kube), 1, 0, []int{0, 1}},
		{role(ref), 3, 0, []int{0}},
	} {
		if got := stepOrder(tc.targets, tc.round, tc.si); !slices.Equal(got, tc.want) {
			t.Errorf("stepOrder(%d targets, round %d, step %d) = %v, want %v", len(tc.targets), tc.round, tc.si, got, tc.want)
		}
	}
}

// TestBenchRound runs two rounds on the reference server and a ceiling: in
// round 1 each step runs on the reference server and then on the ceiling,
// which replays the answers of that step only after it was sent them; in
// round 2 the ceiling leads every other step. Each step waits for a quiet
// machine.
func TestBenchRound(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := refserver.StartEmbedded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cs, err := loadgen.StartCeiling(ctx, "127.0.0.1:0", "ceiling-token")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ceiling-ca.pem")
	if err := os.WriteFile(ca, cs.CAPEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	var started []string
	targets := []*benchTarget{}
	for _, c := range []struct {
		target framework.Target
		role   string
	}{
		{framework.Target{Name: "refserver", Server: srv.URL(), Token: srv.Token()}, loadgen.RoleRefserver},
		{framework.Target{Name: "ceiling", Server: cs.URL(), Token: "ceiling-token", CertificateAuthority: ca}, loadgen.RoleCeiling},
	} {
		bt, err := connect(ctx, c.target, loadgen.TargetInfo{Name: c.target.Name, Role: c.role}, false)
		if err != nil {
			t.Fatal(err)
		}
		bt.hook = func(phase string) func() { started = append(started, c.target.Name+":"+phase); return func() {} }
		if c.role == loadgen.RoleRefserver {
			bt.meter(os.Getpid()) // the embedded server runs in this process
		}
		targets = append(targets, bt)
	}
	plan := loadgen.Plan{Objects: 20, Concurrency: 2, PageSize: 7, ListRounds: 1, SelectorLists: 2, Watchers: 2, WatchEvents: 4,
		CustomObjects: 3, Phases: []string{loadgen.PhaseCreate, loadgen.PhaseUpdate, loadgen.PhaseWatch, loadgen.PhaseCRGet}}
	rec := loadgen.NewRecording()
	// The waits are counted, not timed: whether this machine is quiet
	// while other tests run is not the test's to decide.
	waits := 0
	quiet := &loadgen.QuietStats{Limit: quietLimit, Probe: func(context.Context, time.Duration) (time.Duration, bool) {
		waits++
		return loadgen.QuietWindow, true
	}}
	for round := range 2 {
		runs, err := benchRound(ctx, targets, round, plan, rec, quiet, io.Discard)
		if err != nil {
			t.Fatalf("round %d: %v", round+1, err)
		}
		if len(runs) != 2 || runs[0].Round != round+1 || len(runs[0].Phases) != 4 || len(runs[1].Phases) != 4 {
			t.Fatalf("round %d: runs %+v", round+1, runs)
		}
		// The metered target's phases carry its CPU; the other's none.
		for i, p := range runs[0].Phases {
			if p.ServerCPU <= 0 || runs[1].Phases[i].ServerCPU != 0 {
				t.Fatalf("round %d %s: server CPU %v (metered), %v (not)", round+1, p.Name, p.ServerCPU, runs[1].Phases[i].ServerCPU)
			}
		}
	}
	var want []string
	for _, p := range plan.Phases {
		want = append(want, "refserver:"+p, "ceiling:"+p)
	}
	if !slices.Equal(started, want) {
		t.Fatalf("round 1 ran %v, want %v", started, want)
	}
	// create, update, watch-fanout, delete, crd-setup, cr-create, cr-get,
	// crd-cleanup: 8 steps on 2 targets in 2 rounds.
	if waits != 32 || quiet.Steps != 32 || quiet.Waited != 32*loadgen.QuietWindow {
		t.Fatalf("quiet: %+v", quiet)
	}
}
