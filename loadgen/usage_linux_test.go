package loadgen

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestReadUsageOfThisProcess reads the real /proc: a fixed amount of work
// shows as CPU, and touching fresh memory as minor faults.
func TestReadUsageOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc on this system")
	}
	pid := []int{os.Getpid()}
	before, err := ReadUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	x := uint64(1)
	for i := range 20_000_000 {
		x = x*6364136223846793005 + uint64(i)
	}
	// A fresh mapping: its pages are touched here first (the heap may
	// reuse pages it already has).
	fresh, err := syscall.Mmap(-1, 0, 8<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(fresh)
	for i := 0; i < len(fresh); i += 4096 {
		fresh[i] = byte(x)
	}
	after, err := ReadUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	if d.CPU <= 0 || d.CPU > time.Minute {
		t.Errorf("CPU over the loop = %v", d.CPU)
	}
	if d.MinorFaults <= 0 {
		t.Errorf("minor faults over 8 MiB of fresh memory = %d", d.MinorFaults)
	}
}
