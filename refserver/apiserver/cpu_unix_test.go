//go:build unix

package apiserver

import "syscall"

// processCPU is the process's user and system CPU time so far, in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
