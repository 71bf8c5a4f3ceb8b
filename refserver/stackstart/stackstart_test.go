package stackstart

import (
	"runtime"
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	for _, c := range []struct {
		held  int
		start uint64
		want  int
	}{
		{0, 2 << 10, 1},          // none yet, below: start one
		{0, 8 << 10, 1},          //
		{1, 8 << 10, 2},          // below: double
		{8, 8 << 10, 16},         //
		{20, 8 << 10, Max},       // never beyond Max
		{Max, 8 << 10, Max},      //
		{0, Target, 0},           // at Target with none: nothing to do
		{12, Target, 12},         // at Target: keep
		{12, 32 << 10, 9},        // above: shed a quarter, rounded up
		{1, 32 << 10, 0},         //
		{0, 32 << 10, 0},         // above with none: not ours to fix
		{Max, 64 << 10, Max - 8}, //
	} {
		if got := next(c.held, c.start); got != c.want {
			t.Errorf("next(%d, %d) = %d, want %d", c.held, c.start, got, c.want)
		}
	}
}

// TestStepFollowsNext drives step with a made-up starting size: the
// ballast goroutines it starts and ends are next's count, and they end.
func TestStepFollowsNext(t *testing.T) {
	start := uint64(4 << 10)
	k := &Keeper{start: func() uint64 { return start }}
	for _, want := range []int{1, 2, 4, 8} {
		k.step()
		if got := k.Held(); got != want {
			t.Fatalf("below Target: held %d, want %d", got, want)
		}
		if got := k.Live(); got != want {
			t.Fatalf("below Target: %d ballast goroutines running, want %d", got, want)
		}
	}
	start = 32 << 10
	k.step()
	if got := k.Held(); got != 6 {
		t.Fatalf("above Target: held %d, want 6", got)
	}
	waitFor(t, "two released ballast goroutines to end", func() bool { return k.Live() == 6 })
	k.Stop()
	if got := k.Held(); got != 0 {
		t.Fatalf("after Stop: held %d", got)
	}
	waitFor(t, "ballast goroutines to end", func() bool { return k.Live() == 0 })
	k.step() // a collection after Stop changes nothing
	if got := k.Held(); got != 0 {
		t.Fatalf("step after Stop: held %d", got)
	}
}

// TestKeepReachesTarget runs Keep against the real runtime, among idle
// goroutines as a server has them (each waiting with a shallow stack):
// after a few collections new goroutines start at Target, which without
// the ballast they do not.
func TestKeepReachesTarget(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	for range 50 {
		go func() { <-release }()
	}
	collect := func() {
		runtime.GC()
		time.Sleep(5 * time.Millisecond) // let the cleanup goroutine run step
	}
	collect()
	if got := readStart(); got >= Target {
		t.Skipf("new goroutines already start at %d bytes without ballast: nothing to show", got)
	}
	k := Keep()
	defer k.Stop()
	for range 20 {
		collect()
		if readStart() == Target {
			break
		}
	}
	if got := readStart(); got != Target {
		t.Fatalf("starting stack %d bytes after 20 collections with %d ballast goroutines, want %d", got, k.Held(), Target)
	}
	held := k.Held()
	if held == 0 || held > Max {
		t.Fatalf("held %d ballast goroutines", held)
	}
	// Further collections keep it there without more ballast.
	for range 5 {
		collect()
	}
	if got := readStart(); got != Target {
		t.Errorf("starting stack drifted to %d bytes", got)
	}
	if got := k.Held(); got > held {
		t.Errorf("ballast grew from %d to %d at Target", held, got)
	}
	t.Logf("%d ballast goroutines among %d", k.Held(), runtime.NumGoroutine())
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
