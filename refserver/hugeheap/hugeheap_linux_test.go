package hugeheap

import (
	"bufio"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// TestAdviseHeapGrowsIntoStretch checks Advise's premises on the real
// runtime and kernel: the stretch's mapping carries the advice, memory the
// heap takes afterwards lies in the stretch (the page allocator's lowest
// addresses first), the heap goal follows the live heap again, not the
// block, and after a collection the advice is off where the heap has been
// and still on above it. It runs only where plan advises (THP "madvise").
func TestAdviseHeapGrowsIntoStretch(t *testing.T) {
	m, err := readMachine()
	if err != nil {
		t.Fatal(err)
	}
	if size, why := plan(m, StretchSize); size == 0 {
		t.Skipf("nothing to advise on this machine: %s", why)
	}
	s, why := adviseOnce()
	if s == nil {
		t.Fatalf("Advise: %s", why)
	}
	if s.End()-s.Start() < minStretch || s.Start()%s.huge != 0 || s.End()%s.huge != 0 {
		t.Fatalf("stretch [%#x, %#x): want at least %d bytes, on huge-page bounds", s.Start(), s.End(), minStretch)
	}
	if b := s.Boundary(); b == s.End() {
		t.Fatalf("the heap has been through the whole stretch already")
	} else if flags := vmFlags(t, b); !flags["hg"] {
		t.Fatalf("the mapping at the boundary %#x is not advised (VmFlags %v)", b, flags)
	}

	// Grow the heap by blocks it must take new pages for: once the room
	// below the stretch is used (a few MiB at a process's start; more when
	// an earlier test left some), they land in the stretch.
	var keep [][]byte
	in, highest := 0, uintptr(0)
	for len(keep) < 128 && in < 8 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		keep = append(keep, b)
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(b))); p >= s.Start() && p < s.End() {
			in++
			highest = max(highest, p+uintptr(len(b)))
		}
	}
	if in < 8 {
		t.Fatalf("%d of %d new blocks lie in the advised stretch [%#x, %#x): the heap does not grow into it", in, len(keep), s.Start(), s.End())
	}

	st := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(st)
	if goal := st[0].Value.Uint64(); goal > uint64(s.End()-s.Start())/2 {
		t.Errorf("heap goal %d MiB after Advise: the block still counts", goal>>20)
	}

	// After a collection the boundary passes the blocks: no advice there
	// (khugepaged's to collapse), the advice still on at the end.
	deadline := time.Now().Add(5 * time.Second)
	for s.Boundary() < highest {
		if time.Now().After(deadline) {
			t.Fatalf("boundary %#x after collections, below the heap's blocks up to %#x", s.Boundary(), highest)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(keep)
	if flags := vmFlags(t, highest-1); flags["hg"] || !flags["nh"] {
		t.Errorf("where the heap has been (%#x) the advice stays (VmFlags %v)", highest-1, flags)
	}
	if flags := vmFlags(t, s.End()-1); !flags["hg"] {
		t.Errorf("the stretch's end (%#x) lost its advice (VmFlags %v)", s.End()-1, flags)
	}
}

// adviseOnce is Advise, once per test process, as a server calls it (a
// second stretch would lie above the first, whose free room the heap
// fills first).
var adviseOnce = sync.OnceValues(Advise)

// vmFlags is the VmFlags of the mapping holding addr, from /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) map[string]bool {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			inside = addr >= lo && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && inside {
			flags := map[string]bool{}
			for _, f := range strings.Fields(rest) {
				flags[f] = true
			}
			return flags
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping holds %#x", addr)
	return nil
}

// mappingRange parses a smaps header line ("7f00-7f10 rw-p ...").
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	rng, _, found := strings.Cut(line, " ")
	a, b, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	l, err1 := strconv.ParseUint(a, 16, 64)
	h, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(l), uintptr(h), true
}
