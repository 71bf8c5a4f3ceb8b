// Package hugeheap gives the serving process's heap transparent huge pages
// on a kernel that gives them only to memory that asks (THP "madvise").
//
// Why: the reference server's heap grows with the revisions it keeps (five
// minutes of history, as etcd), and each new 4 KiB page of it costs a page
// fault on first touch. In a virtual machine a fault is dear: 11 µs on the
// 2-core VM the benchmarks run on, against 0.24 µs per 4 KiB when the page
// is part of a reused 2 MiB huge page. The server took 1.2–1.6 faults per
// write after a warm-up (68,000 in 24,000 writes), a few percent of its CPU.
// The Go runtime maps the heap 4 MiB at a time as it grows and does not ask
// for huge pages, so under "madvise" the heap never gets them, while under
// "always" it does.
//
// What: Advise, run once as the process starts (10 ms for 1 GiB here, so
// the serve command runs it once it serves), allocates one large
// block, which makes the runtime map a single stretch of heap address space
// for it, advises that stretch MADV_HUGEPAGE and lets the block go (see
// Stretch for how the advice then follows the heap's growth). The
// advice stays on the mapping; the block's pages were never touched, so it
// costs only the runtime's bookkeeping for it (1.6 MiB). The runtime's page
// allocator hands out the lowest free addresses first, so the heap then
// grows into the advised stretch, and faults in 2 MiB at a time: 0.01–0.04
// faults per write, and 6–9% less server CPU over creates, updates, merge
// patches and applies, at the same RSS.
// Beyond the stretch the heap is mapped as before.
//
// Advise does nothing where it cannot help or could hurt: off Linux, under
// THP "always" (the heap has huge pages already) or "never", with GODEBUG
// disablethp=1, in a 32-bit process or one whose address space is limited
// (RLIMIT_AS), and under strict overcommit (vm.overcommit_memory=2, where
// mapping the stretch is charged as if it were used): a refused mapping of
// the heap ends the process.
package hugeheap

import (
	"strconv"
	"strings"
	"sync"

	"github.com/apiconform/apiconform/refserver/aftergc"
)

// StretchSize is how much heap address space Advise asks huge pages for,
// at most a quarter of the machine's memory: more than the heap of a test
// server holding 100,000 objects with five minutes of writes.
const StretchSize = 1 << 30

// minStretch is the least worth advising: a few huge pages.
const minStretch = 64 << 20

// pageSize is the kernel's base page; scanChunk is how much of the
// stretch one residency scan (mincore) covers.
const (
	pageSize  = 4 << 10
	scanChunk = 64 << 20
)

// Stretch is the heap address space Advise advised. Only its part at and
// above the boundary, where the heap has not been yet, keeps the advice:
// after each collection the boundary rises above what the heap has
// touched. The huge pages the heap faulted in below it stay until the
// runtime returns part of one; what the heap returns and takes again
// faults in 4 KiB pages, as it would without Advise. Why the boundary: the
// kernel's khugepaged fills advised ranges that are partly in use up to
// whole huge pages (with up to 511 of 512 pages absent, by default), which,
// after the heap had shrunk, grew RSS by 22–33% of idle in `make
// robustness`'s watch amplification; below the boundary it leaves the heap
// alone.
type Stretch struct {
	start, end, huge uintptr

	mu       sync.Mutex
	boundary uintptr // the advice holds for [boundary, end)
	vec      []byte  // residency of one scan chunk's pages
	hook     *aftergc.Hook
}

// Start and End bound the stretch.
func (s *Stretch) Start() uintptr { return s.start }
func (s *Stretch) End() uintptr   { return s.end }

// Boundary is where the advice begins.
func (s *Stretch) Boundary() uintptr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.boundary
}

// Stop ends the boundary's rise (the advice stays where it is).
func (s *Stretch) Stop() { s.hook.Stop() }

// lift is the boundary once the heap has touched top, the highest
// resident address at or above the boundary: the end of top's huge page,
// never lower than before nor beyond end.
func lift(boundary, top, huge, end uintptr) uintptr {
	return min(end, max(boundary, (top+huge)&^(huge-1)))
}

// step runs after each collection: it finds the highest page the heap has
// touched above the boundary and takes the advice off below it.
func (s *Stretch) step() {
	s.mu.Lock()
	defer s.mu.Unlock()
	top, ok := highestResident(s.boundary, s.end, s.vec)
	if !ok {
		return
	}
	b := lift(s.boundary, top, s.huge, s.end)
	if b == s.boundary {
		return
	}
	if err := unadvise(s.boundary, b); err != nil {
		s.hook.Stop() // the kernel refuses: leave the stretch as it is
		return
	}
	s.boundary = b
	if b == s.end {
		s.hook.Stop() // the heap has been through all of it
	}
}

// machine is what plan decides from, as the kernel reports it.
type machine struct {
	thp        string // /sys/kernel/mm/transparent_hugepage/enabled: "always [madvise] never"
	overcommit string // /proc/sys/vm/overcommit_memory: "0", "1" or "2"
	memTotal   uint64 // bytes, from /proc/meminfo
	godebug    string // the GODEBUG environment variable
	addrLimit  uint64 // RLIMIT_AS in bytes; 0 = unlimited
	wordBits   int    // 64, or 32 where a stretch would crowd the address space
}

// thpMode is the bracketed choice of a THP "enabled" file, "" if none.
func thpMode(enabled string) string {
	i := strings.IndexByte(enabled, '[')
	j := strings.IndexByte(enabled, ']')
	if i < 0 || j < i {
		return ""
	}
	return enabled[i+1 : j]
}

// plan is how many bytes of heap to advise on m, at most want: 0 with the
// reason when none.
func plan(m machine, want uint64) (uint64, string) {
	switch thpMode(m.thp) {
	case "madvise":
	case "always":
		return 0, "transparent huge pages are always on: the heap has them already"
	case "never":
		return 0, "transparent huge pages are off"
	default:
		return 0, "the kernel offers no transparent huge pages"
	}
	for _, kv := range strings.Split(m.godebug, ",") {
		if strings.TrimSpace(kv) == "disablethp=1" {
			return 0, "GODEBUG disablethp=1 asks for no huge pages"
		}
	}
	if m.wordBits < 64 {
		return 0, "a 32-bit address space has no room for the stretch"
	}
	if m.addrLimit != 0 {
		return 0, "the address space is limited (RLIMIT_AS), and the stretch would count against it"
	}
	if strings.TrimSpace(m.overcommit) == "2" {
		return 0, "strict overcommit would charge the whole stretch"
	}
	size := min(want, m.memTotal/4) &^ (minStretch - 1)
	if size < minStretch {
		return 0, "too little memory (" + strconv.FormatUint(m.memTotal>>20, 10) + " MiB) for a stretch worth advising"
	}
	return size, ""
}

// Advise gives the heap huge pages where plan allows (see the package
// comment): the stretch, or nil and why not. Call it once, as the process
// starts; the heap the process has by then stays as it is.
func Advise() (*Stretch, string) {
	m, err := readMachine()
	if err != nil {
		return nil, err.Error()
	}
	size, why := plan(m, StretchSize)
	if size == 0 {
		return nil, why
	}
	s, err := adviseStretch(uintptr(size))
	if err != nil {
		return nil, err.Error()
	}
	s.mu.Lock() // a collection may run step before Every returns
	defer s.mu.Unlock()
	s.boundary = s.start
	s.vec = make([]byte, scanChunk/pageSize)
	s.hook = aftergc.Every(s.step)
	return s, ""
}
