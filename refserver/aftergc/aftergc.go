// Package aftergc runs a function after each garbage collection, for the
// parts of the serving process that tune themselves to what the runtime
// did since the last one (the stack goroutines start with, the heap's huge
// pages). It attaches a cleanup to an object the next collection frees,
// and attaches it again each time, so a process that allocates nothing,
// and so collects nothing, wakes nothing.
package aftergc

import (
	"runtime"
	"sync/atomic"
)

// Hook is a function run after each collection until Stop.
type Hook struct {
	fn      func()
	stopped atomic.Bool
}

// Every runs fn after each collection, starting with the next. The
// runtime runs cleanups one at a time on a goroutine of its own, so fn
// must be quick and must not wait for a collection.
func Every(fn func()) *Hook {
	h := &Hook{fn: fn}
	h.arm()
	return h
}

// arm attaches the next run to an object the next collection frees.
func (h *Hook) arm() {
	sentinel := new([16]byte) // not tiny-allocated, so freed on its own
	runtime.AddCleanup(sentinel, (*Hook).run, h)
}

func (h *Hook) run() {
	if h.stopped.Load() {
		return
	}
	h.fn()
	h.arm()
}

// Stop ends the runs; a run under way finishes.
func (h *Hook) Stop() { h.stopped.Store(true) }
