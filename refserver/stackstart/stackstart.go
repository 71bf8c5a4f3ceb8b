// Package stackstart keeps the stack that new goroutines start with at the
// size a write of the reference server needs, so that a request's goroutine
// does not copy its stack on the way down.
//
// Why: net/http serves each request, and its HTTP/2 server writes each
// frame, on a new goroutine. The runtime starts a goroutine's stack at the
// average stack in use at the last garbage collection, rounded up to a
// power of two (GODEBUG adaptivestackstart, on since Go 1.19); a server's
// idle goroutines keep that average at 2–8 KiB. A configmap's write runs
// through about 14 KiB of frames (apiserver's growStack takes its goroutine
// to 16 KiB up front), and TLS and HPACK take a frame writer's past 8 KiB,
// so both grew their stacks on every request, and each growth copies the
// stack and adjusts every frame's pointers: runtime.copystack was 7.7% of
// the server's CPU in 40,000 creates under `apiconform bench`.
//
// Keep parks goroutines whose stacks are deep (ballast), which raises the
// average: after each collection it adds ballast while new goroutines
// start below Target and sheds some while they start above it (a stack
// above 16 KiB comes from the heap under its lock instead of a processor's
// cache, which cost a write more than the copies; see apiserver/stack.go).
// Each ballast goroutine holds a 32 KiB stack.
package stackstart

import (
	"runtime/metrics"
	"sync"
	"sync/atomic"

	"github.com/apiconform/apiconform/refserver/aftergc"
)

// Target is the starting stack Keep aims at: the largest stack the runtime
// takes from a processor's cache.
const Target = 16 << 10

// Max bounds the ballast: 32 goroutines of 32 KiB, 1 MiB. That is enough
// for a server with up to about a hundred goroutines (a few connections
// and their requests in flight); beyond it, as with hundreds of watches,
// the start falls back to what the runtime chooses alone, rather than the
// ballast growing with the watches and its memory staying after them.
const Max = 32

// ballastDepth is how much stack a ballast goroutine holds in use. The
// runtime starts new goroutines at the power of two at or above the
// average in use plus a guard of under 1 KiB, so the average must lie in
// (about) 7.1–15.1 KiB for Target. With ballast at 28 KiB and the other
// goroutines at about 2 KiB, that holds from a quarter as many ballast
// goroutines as others to as many as them: doubling the ballast from below
// the band cannot overshoot it.
const ballastDepth = 28 << 10

// startMetric is where the runtime publishes the starting stack size.
const startMetric = "/gc/stack/starting-size:bytes"

// next is how many ballast goroutines to hold, given held of them and the
// starting stack size the last collection chose: double (from one) below
// Target, shed a quarter above it, else keep; never beyond Max.
func next(held int, start uint64) int {
	switch {
	case start < Target:
		return min(Max, max(1, 2*held))
	case start > Target:
		return held - (held+3)/4
	}
	return held
}

// Keeper holds the ballast; Stop releases it.
type Keeper struct {
	mu      sync.Mutex
	stopped bool
	parked  []chan struct{} // one per ballast goroutine; closing it ends the goroutine
	start   func() uint64   // reads the starting stack size
	live    atomic.Int64    // ballast goroutines not yet ended
	hook    *aftergc.Hook   // runs step after each collection; nil in tests that step by hand
}

// Keep starts a Keeper. It acts after each garbage collection (package
// aftergc), so an idle server that allocates nothing wakes nothing.
func Keep() *Keeper {
	k := &Keeper{start: readStart}
	k.mu.Lock() // a collection may run step before Every returns
	defer k.mu.Unlock()
	k.hook = aftergc.Every(k.step)
	return k
}

// readStart reads the starting stack size the runtime chose.
func readStart() uint64 {
	s := []metrics.Sample{{Name: startMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return Target // unknown to this runtime: hold nothing
	}
	return s[0].Value.Uint64()
}

// step runs after a collection: it sets the ballast to next's count.
func (k *Keeper) step() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return
	}
	want := next(len(k.parked), k.start())
	for len(k.parked) < want {
		release := make(chan struct{})
		k.parked = append(k.parked, release)
		k.live.Add(1)
		go k.park(release)
	}
	for len(k.parked) > want {
		last := len(k.parked) - 1
		close(k.parked[last])
		k.parked = k.parked[:last]
	}
}

// Held is how many ballast goroutines the Keeper holds.
func (k *Keeper) Held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.parked)
}

// Live is how many ballast goroutines are running: Held, and those
// released but not yet ended. A count of the process's goroutines that
// means the server's own subtracts it.
func (k *Keeper) Live() int { return int(k.live.Load()) }

// Stop releases the ballast and stops acting on collections.
func (k *Keeper) Stop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.stopped = true
	if k.hook != nil {
		k.hook.Stop()
	}
	for _, release := range k.parked {
		close(release)
	}
	k.parked = nil
}

// park holds ballastDepth of stack in use until release is closed. The
// frame is the depth; the runtime counts what a parked goroutine's stack
// holds from its top to the frame it waits in.
//
//go:noinline
func (k *Keeper) park(release <-chan struct{}) byte {
	defer k.live.Add(-1)
	var depth [ballastDepth]byte
	<-release
	return depth[len(release)] // keeps the frame (len of a channel is 0 here)
}
