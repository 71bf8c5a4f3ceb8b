package loadgen

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestParseCPULine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want cpuTimes
		ok   bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  100 2 30 500 7 1 2 5 40 0", cpuTimes{busy: 100 + 2 + 30 + 1 + 2 + 5, idle: 500 + 7}, true},
		{"cpu 1 2 3 4 5 6 7 8", cpuTimes{busy: 1 + 2 + 3 + 6 + 7 + 8, idle: 4 + 5}, true},
		{"cpu0 1 2 3 4 5 6 7 8", cpuTimes{}, false},
		{"cpu 1 2 3", cpuTimes{}, false},
		{"cpu 1 2 3 x 5 6 7 8", cpuTimes{}, false},
		{"", cpuTimes{}, false},
	} {
		got, ok := parseCPULine(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseCPULine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBusyShare(t *testing.T) {
	for _, tc := range []struct {
		a, b cpuTimes
		want float64
	}{
		{cpuTimes{10, 10}, cpuTimes{20, 40}, 0.25},
		{cpuTimes{10, 10}, cpuTimes{30, 10}, 1},
		{cpuTimes{10, 10}, cpuTimes{10, 10}, 0}, // no tick passed
		{cpuTimes{10, 10}, cpuTimes{5, 20}, 0},  // a counter went back: not read as busy
	} {
		if got := busyShare(tc.a, tc.b); got != tc.want {
			t.Errorf("busyShare(%+v, %+v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestQuiet checks the wait's bounds on the running machine: it returns
// after at least one window, by its limit when the machine stays busy (one
// window past it at most), and at once when ctx has ended.
func TestQuiet(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		if waited, ok := Quiet(context.Background(), time.Second); waited != 0 || ok {
			t.Fatalf("without /proc/stat: %s, %v", waited, ok)
		}
		t.Skip("no /proc/stat: Quiet returns at once")
	}
	limit := 300 * time.Millisecond
	waited, ok := Quiet(context.Background(), limit)
	if waited < QuietWindow || waited > limit+2*QuietWindow+time.Second {
		t.Fatalf("Quiet waited %s (quiet %v), want one window to the limit", waited, ok)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if waited, ok := Quiet(ctx, time.Minute); ok || waited > time.Second {
		t.Fatalf("ended context: %s, %v", waited, ok)
	}
}

// TestQuietStatsWait: the waits are counted, a quiet step ends a run of
// busy ones, and after QuietGiveUp busy steps in a row (or on a machine
// that cannot be read) the later steps start at once.
func TestQuietStatsWait(t *testing.T) {
	const limit = time.Second
	type probe struct {
		waited time.Duration
		ok     bool
	}
	quiet, busy := probe{100 * time.Millisecond, true}, probe{limit + 50*time.Millisecond, false}
	for _, tc := range []struct {
		name     string
		probes   []probe
		steps    int
		want     QuietStats
		wantCall int
	}{
		{"quiet", []probe{quiet, quiet}, 2, QuietStats{Limit: limit, Steps: 2, Waited: 200 * time.Millisecond}, 2},
		{"busy then quiet", []probe{busy, busy, quiet, busy}, 4,
			QuietStats{Limit: limit, Steps: 4, Waited: 3*busy.waited + quiet.waited, Busy: 3}, 4},
		{"busy for good", []probe{busy, busy, busy}, 6,
			QuietStats{Limit: limit, Steps: 3, Waited: 3 * busy.waited, Busy: 3, Off: "busy through 3 steps in a row"}, 3},
		{"ended context", []probe{{20 * time.Millisecond, false}}, 1, QuietStats{Limit: limit, Steps: 1, Waited: 20 * time.Millisecond}, 1},
		{"unreadable", []probe{{0, false}}, 3, QuietStats{Limit: limit, Off: "cannot read the processors' time (/proc/stat)"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			q := &QuietStats{Limit: limit, Probe: func(_ context.Context, l time.Duration) (time.Duration, bool) {
				if l != limit {
					t.Fatalf("limit %s", l)
				}
				p := tc.probes[calls]
				calls++
				return p.waited, p.ok
			}}
			for range tc.steps {
				q.Wait(context.Background())
			}
			got := [5]any{q.Limit, q.Steps, q.Waited, q.Busy, q.Off}
			want := [5]any{tc.want.Limit, tc.want.Steps, tc.want.Waited, tc.want.Busy, tc.want.Off}
			if got != want || calls != tc.wantCall {
				t.Fatalf("after %d steps: %+v (%d probes), want %+v (%d)", tc.steps, *q, calls, tc.want, tc.wantCall)
			}
		})
	}
}
