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
