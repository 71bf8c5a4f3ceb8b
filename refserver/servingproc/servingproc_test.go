package servingproc

import (
	"runtime"
	"testing"
	"time"
)

// TestStartHoldsBallast: once a collection has run, the settings hold
// stackstart's ballast, and Stop releases it.
func TestStartHoldsBallast(t *testing.T) {
	s := Start()
	s.Serving()
	deadline := time.Now().Add(10 * time.Second)
	for s.Ballast.Held() == 0 && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if s.Ballast.Held() == 0 {
		t.Fatal("no ballast held after collections")
	}
	s.Stop()
	if s.Ballast.Held() != 0 {
		t.Fatalf("ballast held after Stop: %d", s.Ballast.Held())
	}
}
