package robustness

import (
	"context"
	"testing"
	"time"
)

// TestWatchAmplification runs the scenario of issue #18 and holds it to the
// issue's goals for work: the clients gone, no watch goroutine may remain
// and the server may burn at most 0.5 s of CPU. Memory is reported (the
// README explains the figures), not asserted: how soon the Go runtime hands
// freed pages back is not the server's doing.
func TestWatchAmplification(t *testing.T) {
	requireSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f, err := Amplify(ctx, "amplify", DefaultAmplify)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("watch amplification: %s", f)
	const slack = 3 // runtime and HTTP housekeeping goroutines come and go
	if f.Settled.Goroutines > f.Idle.Goroutines+slack || f.NoMatchSettled.Goroutines > f.Idle.Goroutines+slack {
		t.Errorf("goroutines after the clients left: %d and %d, idle %d", f.Settled.Goroutines, f.NoMatchSettled.Goroutines, f.Idle.Goroutines)
	}
	if limit := 500 * time.Millisecond; f.CPUAfterLeave > limit || f.NoMatchCPUAfterLeave > limit {
		t.Errorf("CPU after the clients left: %v and %v, goal under %v", f.CPUAfterLeave, f.NoMatchCPUAfterLeave, limit)
	}
}
