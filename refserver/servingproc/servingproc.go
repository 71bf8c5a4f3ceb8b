// Package servingproc applies the runtime settings of a process that
// serves the API: apiconform serve, apiconform-refserver, the robustness
// scenarios' server child, and the benchmark's transport ceiling. The
// ceiling is on the list because the settings also make the transport's own
// goroutines cheaper (HTTP/2 frame writers grow their stacks in TLS and
// HPACK): a setting only the reference server had would flatter its ratios
// to the ceiling. One place, so that a new setting reaches every such
// process.
package servingproc

import (
	"github.com/apiconform/apiconform/refserver/hugeheap"
	"github.com/apiconform/apiconform/refserver/stackstart"
)

// Settings are a serving process's settings in force.
type Settings struct {
	// Ballast is stackstart's keeper; its goroutines are not the server's
	// work, so a count of the server's goroutines leaves them out.
	Ballast *stackstart.Keeper
}

// Start applies what must hold before the process serves: new goroutines
// start with the stack a write needs (package stackstart).
func Start() *Settings {
	return &Settings{Ballast: stackstart.Keep()}
}

// Serving applies what waits until the process serves, so that start-up
// does not share the CPU with its 10 ms: the heap on huge pages where the
// kernel gives them only on request (package hugeheap). Call it once.
func (s *Settings) Serving() {
	go hugeheap.Advise()
}

// Stop releases the ballast.
func (s *Settings) Stop() {
	s.Ballast.Stop()
}
