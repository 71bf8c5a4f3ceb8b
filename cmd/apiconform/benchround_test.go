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

// TestBenchRound runs two rounds on the reference server and a ceiling,
// each phase whole and then in two parts: in round 1 each step runs on the
// reference server and then on the ceiling, which replays the answers of
// that step only after it was sent them (in parts, the ceiling leads the
// second part on the answers of the first, the fan-out's watchers open
// across both); in round 2 the ceiling leads every other step. Each step, and each part, waits for a quiet machine,
// and a phase taken in parts reports every operation once.
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
	var started, ended []string
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
		bt.hook = func(phase string) func() {
			started = append(started, c.target.Name+":"+phase)
			return func() { ended = append(ended, c.target.Name+":"+phase) }
		}
		if c.role == loadgen.RoleRefserver {
			bt.meter(os.Getpid()) // the embedded server runs in this process
		}
		targets = append(targets, bt)
	}
	plan := loadgen.Plan{Objects: 20, Concurrency: 2, PageSize: 7, ListRounds: 1, SelectorLists: 2, Watchers: 2, WatchEvents: 4,
		CustomObjects: 3, Phases: []string{loadgen.PhaseCreate, loadgen.PhaseUpdate, loadgen.PhaseWatch, loadgen.PhaseCRGet}}
	wantOps := []int{20, 20, 4, 3} // the fan-out: one latency per event, to its last watcher
	rec := loadgen.NewRecording()
	for _, tc := range []struct {
		parts, waits int
	}{
		// create, update, watch-fanout, delete, crd-setup, cr-create, cr-get,
		// crd-cleanup: 8 steps on 2 targets in 2 rounds.
		{1, 32},
		// Six of them (not the CRD's setup and cleanup) in two parts each.
		{2, 56},
	} {
		started, ended = nil, nil
		// The waits are counted, not timed: whether this machine is quiet
		// while other tests run is not the test's to decide.
		waits := 0
		quiet := &loadgen.QuietStats{Limit: quietLimit, Probe: func(context.Context, time.Duration) (time.Duration, bool) {
			waits++
			return loadgen.QuietWindow, true
		}}
		for round := range 2 {
			runs, err := benchRound(ctx, targets, round, tc.parts, plan, rec, quiet, io.Discard)
			if err != nil {
				t.Fatalf("%d parts, round %d: %v", tc.parts, round+1, err)
			}
			if len(runs) != 2 || runs[0].Round != round+1 || len(runs[0].Phases) != 4 || len(runs[1].Phases) != 4 {
				t.Fatalf("%d parts, round %d: runs %+v", tc.parts, round+1, runs)
			}
			for i, p := range runs[0].Phases {
				// The metered target's phases carry its CPU; the other's none.
				if p.ServerCPU <= 0 || runs[1].Phases[i].ServerCPU != 0 {
					t.Fatalf("%d parts, round %d %s: server CPU %v (metered), %v (not)", tc.parts, round+1, p.Name, p.ServerCPU, runs[1].Phases[i].ServerCPU)
				}
				for _, r := range runs {
					if q := r.Phases[i]; q.Ops != wantOps[i] || q.OpsPerSec <= 0 {
						t.Fatalf("%d parts, round %d, %s %s: %d ops at %.0f/s, want %d", tc.parts, round+1, r.Target, q.Name, q.Ops, q.OpsPerSec, wantOps[i])
					}
				}
			}
		}
		var want []string
		for _, p := range plan.Phases {
			want = append(want, "refserver:"+p, "ceiling:"+p)
		}
		if !slices.Equal(started, want) {
			t.Fatalf("%d parts: round 1 started %v, want %v", tc.parts, started, want)
		}
		// A phase in parts ends after its last part: the ceiling's
		// second part follows the reference server's.
		if tc.parts == 2 {
			want = nil
			for _, p := range plan.Phases {
				want = append(want, "ceiling:"+p, "refserver:"+p)
			}
		}
		if !slices.Equal(ended, want) {
			t.Fatalf("%d parts: round 1 ended %v, want %v", tc.parts, ended, want)
		}
		if waits != tc.waits || quiet.Steps != tc.waits || quiet.Waited != time.Duration(tc.waits)*loadgen.QuietWindow {
			t.Fatalf("%d parts: %d waits, quiet %+v; want %d", tc.parts, waits, quiet, tc.waits)
		}
	}
}

func TestPartOrder(t *testing.T) {
	for _, tc := range []struct {
		pair []int
		k    int
		want []int
	}{
		{[]int{0, 2}, 0, []int{0, 2}},
		{[]int{0, 2}, 1, []int{2, 0}},
		{[]int{0, 2}, 2, []int{0, 2}},
		{[]int{2, 0}, 1, []int{0, 2}},
		{[]int{0}, 1, []int{0}},
	} {
		if got := partOrder(tc.pair, tc.k); !slices.Equal(got, tc.want) {
			t.Errorf("partOrder(%v, %d) = %v, want %v", tc.pair, tc.k, got, tc.want)
		}
	}
}
