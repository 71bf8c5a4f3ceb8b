package aftergc

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestEveryRunsAfterEachCollection: each collection runs the function
// once more; after Stop, collections run it no more.
func TestEveryRunsAfterEachCollection(t *testing.T) {
	var runs atomic.Int64
	h := Every(func() { runs.Add(1) })
	for want := int64(1); want <= 3; want++ {
		runtime.GC()
		waitFor(t, func() bool { return runs.Load() >= want })
	}
	h.Stop()
	runtime.GC() // may run the one armed before Stop; it sees Stop and ends
	time.Sleep(20 * time.Millisecond)
	after := runs.Load()
	for range 3 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	if got := runs.Load(); got != after {
		t.Fatalf("after Stop: %d runs, then %d", after, got)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the hook did not run after a collection")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
