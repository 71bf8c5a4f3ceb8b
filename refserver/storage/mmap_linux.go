package storage

import (
	"syscall"
	"unsafe"
)

// madvise advice values (Linux): MADV_HUGEPAGE, and MADV_POPULATE_READ
// and MADV_POPULATE_WRITE (Linux 5.14).
const (
	madvHugepage      = 14
	madvPopulateRead  = 22
	madvPopulateWrite = 23
)

// prefault has the kernel back the pages of b, memory the load has just
// allocated and is about to fill, in one system call instead of one page
// fault per page as it is first written, and with 2 MiB pages where b
// covers them. On the 2-core VM a fault costs about 17 µs and even the
// first touch of a prefaulted 4 KiB page about 5 µs; 64 MiB prefaulted in
// 2 MiB pages is touched in under 1 ms instead of about 80 (the load's
// slabs are 30–40 MiB for 100,000 objects). The contents stay as they are
// (zero). The slabs are filled whole (alignedSlab's rounded-up tails are
// garbage after the load), so large pages waste nothing. A kernel that
// does not know an advice refuses it, and the pages fault in as usual.
func prefault(b []byte) {
	if len(b) < 64<<10 {
		return
	}
	// madvise wants a page-aligned start: b may begin inside a page (a
	// part of a slab), whose populating is harmless.
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	end := start + uintptr(len(b))
	start &^= uintptr(syscall.Getpagesize() - 1)
	if from, to := (start+hugePage-1)&^(hugePage-1), end&^(hugePage-1); from < to {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, from, to-from, madvHugepage)
	}
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, end-start, madvPopulateWrite)
}

// prefaultFile has the kernel map the first size bytes of the file mapped
// at addr (bbolt's mapping) in one system call. The load reads records
// scattered over the whole file, one page fault each otherwise (about
// 17 µs on the 2-core VM: 2,100 pages of bucket "heads" for 100,000
// objects cost 36 ms in faults, the call about 7 ms for the whole 200 MiB
// file). Pages already in the page cache are only mapped, nothing is read
// ahead that the file does not have; a kernel that does not know the
// advice refuses it and the pages fault in as usual.
func prefaultFile(addr uintptr, size int64) {
	if addr != 0 && size > 0 {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), madvPopulateRead)
	}
}
