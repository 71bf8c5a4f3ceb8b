//go:build !linux

package robustness

import "time"

// The process figures are read from Linux's /proc and getrusage; elsewhere
// they are zero and the amplification and scale figures say nothing.
func rss() (now, peak int64) { return 0, 0 }

func procMem(string) Mem { return Mem{} }

func procCPU(string) time.Duration { return 0 }

func cpuTime() time.Duration { return 0 }
