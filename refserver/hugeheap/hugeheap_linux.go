package hugeheap

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const thpDir = "/sys/kernel/mm/transparent_hugepage/"

// readMachine reads what plan needs from the kernel; a missing THP
// directory is a kernel without THP, not an error.
func readMachine() (machine, error) {
	var m machine
	if b, err := os.ReadFile(thpDir + "enabled"); err == nil {
		m.thp = string(b)
	}
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	if err != nil {
		return m, fmt.Errorf("reading the overcommit policy: %w", err)
	}
	m.overcommit = string(b)
	if m.memTotal, err = memTotal(); err != nil {
		return m, err
	}
	m.godebug = os.Getenv("GODEBUG")
	m.wordBits = int(unsafe.Sizeof(uintptr(0))) * 8
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return m, fmt.Errorf("reading RLIMIT_AS: %w", err)
	}
	if lim.Cur != ^uint64(0) {
		m.addrLimit = lim.Cur
	}
	return m, nil
}

// memTotal is /proc/meminfo's MemTotal in bytes.
func memTotal() (uint64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading the machine's memory: %w", err)
	}
	s := bufio.NewScanner(bytes.NewReader(b))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemTotal:"); ok {
			kib, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("reading MemTotal in /proc/meminfo: %w", err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("no MemTotal in /proc/meminfo")
}

// hugePageSize is the kernel's THP size (2 MiB on x86-64).
func hugePageSize() uintptr {
	b, err := os.ReadFile(thpDir + "hpage_pmd_size")
	if n, perr := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && perr == nil && n > 0 {
		return uintptr(n)
	}
	return 2 << 20
}

// adviseStretch makes the runtime map size bytes of heap as one stretch,
// advises the huge pages wholly inside it and gives the stretch back to the
// heap, its pages untouched.
func adviseStretch(size uintptr) (*Stretch, error) {
	huge := hugePageSize()
	start, end, err := mapAndAdvise(size, huge)
	// The block is garbage now: collect it, so that the heap goal follows
	// the real live heap again, and return its pages (never touched) to
	// the kernel's books. The advice stays on the mapping.
	debug.FreeOSMemory()
	if err != nil {
		return nil, fmt.Errorf("madvise MADV_HUGEPAGE: %w", err)
	}
	return &Stretch{start: start, end: end, huge: huge}, nil
}

// mapAndAdvise allocates the block (fresh from the kernel, so the runtime
// does not zero it) and advises it; the block is dead once it returns.
func mapAndAdvise(size, huge uintptr) (start, end uintptr, err error) {
	b := make([]byte, size)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (p + huge - 1) &^ (huge - 1)
	hi := (p + size) &^ (huge - 1)
	if hi < lo+scanChunk {
		return 0, 0, fmt.Errorf("a block of %d bytes holds too few huge pages", size)
	}
	if err := syscall.Madvise(b[lo-p:hi-p], syscall.MADV_HUGEPAGE); err != nil {
		return 0, 0, err
	}
	return lo, hi, nil
}

// highestResident is the highest page in [lo, hi) the process has touched
// (mincore), looking up from lo a chunk at a time and stopping at the first
// chunk with none: the heap takes the lowest free addresses first.
func highestResident(lo, hi uintptr, vec []byte) (top uintptr, ok bool) {
	for c := lo; c < hi; c += scanChunk {
		n := min(scanChunk, hi-c)
		// By address: the range is the heap's, not one Go object.
		if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, c, n, uintptr(unsafe.Pointer(unsafe.SliceData(vec)))); e != 0 {
			return top, ok
		}
		found := false
		for i := int(n/pageSize) - 1; i >= 0; i-- {
			if vec[i]&1 != 0 {
				top, ok, found = c+uintptr(i)*pageSize, true, true
				break
			}
		}
		if !found {
			break
		}
	}
	return top, ok
}

// unadvise takes the huge-page advice off [lo, hi).
func unadvise(lo, hi uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_NOHUGEPAGE); e != 0 {
		return e
	}
	return nil
}
