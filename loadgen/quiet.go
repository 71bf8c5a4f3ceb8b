package loadgen

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A step started while the machine still works on the one before (a
// collection, kube-apiserver's and etcd's writes behind a burst, a
// neighbour's load on a shared VM) pays for that work in its figure. Quiet
// waits for the machine's processors to be mostly idle before the next
// step starts.

// Quiet thresholds: the share of the processors' time busy over one window
// below which the machine counts as quiet.
const (
	QuietWindow = 100 * time.Millisecond
	QuietBusy   = 0.25
)

// cpuTimes is the first line of /proc/stat: clock ticks spent busy and idle
// over all processors since boot.
type cpuTimes struct{ busy, idle uint64 }

// parseCPULine reads "cpu  user nice system idle iowait irq softirq steal
// guest guest_nice". Idle and iowait count as idle; time stolen by other
// guests counts as busy, since it is taken from the load too. (guest time
// is already inside user.)
func parseCPULine(line string) (cpuTimes, bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	var t cpuTimes
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		if i == 3 || i == 4 { // idle, iowait
			t.idle += v
		} else {
			t.busy += v
		}
	}
	return t, true
}

// busyShare is the share of the ticks between a and b that were busy; 0
// when none passed.
func busyShare(a, b cpuTimes) float64 {
	busy, idle := b.busy-a.busy, b.idle-a.idle
	if b.busy < a.busy || b.idle < a.idle || busy+idle == 0 {
		return 0
	}
	return float64(busy) / float64(busy+idle)
}

func readCPUTimes() (cpuTimes, bool) {
	f, err := os.Open(filepath.Join(procRoot, "stat"))
	if err != nil {
		return cpuTimes{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return cpuTimes{}, false
	}
	return parseCPULine(sc.Text())
}

// Quiet waits until one QuietWindow has passed with the processors busy
// less than QuietBusy of the time, or until limit has passed or ctx ends,
// and returns how long it waited and whether the machine was quiet. Where
// /proc/stat is not there to read it returns at once, not quiet.
func Quiet(ctx context.Context, limit time.Duration) (time.Duration, bool) {
	start := time.Now()
	prev, ok := readCPUTimes()
	if !ok {
		return 0, false
	}
	tick := time.NewTicker(QuietWindow)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), false
		case <-tick.C:
		}
		cur, ok := readCPUTimes()
		if !ok {
			return time.Since(start), false
		}
		if busyShare(prev, cur) < QuietBusy {
			return time.Since(start), true
		}
		if time.Since(start) >= limit {
			return time.Since(start), false
		}
		prev = cur
	}
}

// QuietStats is how long the steps waited for a quiet machine (Wait).
type QuietStats struct {
	Limit  time.Duration `json:"limit"`  // each step's wait at most
	Steps  int           `json:"steps"`  // steps that waited
	Waited time.Duration `json:"waited"` // in all
	Busy   int           `json:"busy"`   // steps that started at the limit, the machine still busy
	// Off says why the later steps did not wait: the machine cannot be
	// read, or it stayed busy through QuietGiveUp steps in a row.
	Off string `json:"off,omitempty"`
	// Probe is how a step waits: Quiet when nil (tests give their own).
	Probe     func(ctx context.Context, limit time.Duration) (waited time.Duration, quiet bool) `json:"-"`
	busyInRow int
}

// QuietGiveUp is how many steps in a row may start busy before the rest
// stop waiting: on a machine that is busy for good each would wait the
// whole limit for nothing.
const QuietGiveUp = 3

// Wait waits, before a step, for a quiet machine (Quiet, at most Limit)
// and counts the wait.
func (q *QuietStats) Wait(ctx context.Context) {
	if q.Off != "" {
		return
	}
	probe := q.Probe
	if probe == nil {
		probe = Quiet
	}
	waited, ok := probe(ctx, q.Limit)
	if waited == 0 && !ok {
		q.Off = "cannot read the processors' time (/proc/stat)"
		return
	}
	q.Steps++
	q.Waited += waited
	switch {
	case ok:
		q.busyInRow = 0
	case waited >= q.Limit:
		q.Busy++
		if q.busyInRow++; q.busyInRow >= QuietGiveUp {
			q.Off = fmt.Sprintf("busy through %d steps in a row", q.busyInRow)
		}
	}
}

func (q *QuietStats) String() string {
	s := fmt.Sprintf("each step waited for a quiet machine (%d steps, %s in all; %d started busy after %s)",
		q.Steps, q.Waited.Round(10*time.Millisecond), q.Busy, q.Limit)
	if q.Off != "" {
		s += "; the later steps did not wait: " + q.Off
	}
	return s
}
