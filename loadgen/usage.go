package loadgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A ratio of throughputs mixes the server's cost with the client's, which
// shares the machine, and with how the server's latency paces the client.
// The CPU each side used per operation separates them: it reads the same
// on a busy machine as on a quiet one, and it is what a user pays for each
// request their tests make.

// Usage is what a set of processes took from the machine: the processor
// time of their threads, and their minor page faults (first touches of
// memory: what a growing heap pays, and dear in a virtual machine).
type Usage struct {
	CPU         time.Duration
	MinorFaults int64
}

// Sub is the usage between v and u, u being read later.
func (u Usage) Sub(v Usage) Usage {
	return Usage{CPU: u.CPU - v.CPU, MinorFaults: u.MinorFaults - v.MinorFaults}
}

// Add is u and v together: the usage of two stretches of time.
func (u Usage) Add(v Usage) Usage {
	return Usage{CPU: u.CPU + v.CPU, MinorFaults: u.MinorFaults + v.MinorFaults}
}

// procRoot is where ReadUsage and Quiet read; tests point it elsewhere.
var procRoot = "/proc"

// ReadUsage sums the usage of the processes pids from /proc: each thread's
// run time from its schedstat, in nanoseconds (the clock ticks of
// /proc/pid/stat are 10 ms, a tenth of a short phase), and each process's
// minor faults. A thread that exits between two reads takes its time with
// it; the Go servers measured here keep their threads.
func ReadUsage(pids []int) (Usage, error) {
	var u Usage
	for _, pid := range pids {
		dir := filepath.Join(procRoot, strconv.Itoa(pid))
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			return Usage{}, fmt.Errorf("process %d: %w", pid, err)
		}
		faults, ok := parseMinorFaults(string(stat))
		if !ok {
			return Usage{}, fmt.Errorf("process %d: unreadable %s/stat", pid, dir)
		}
		u.MinorFaults += faults
		tasks, err := os.ReadDir(filepath.Join(dir, "task"))
		if err != nil {
			return Usage{}, fmt.Errorf("process %d: %w", pid, err)
		}
		for _, t := range tasks {
			b, err := os.ReadFile(filepath.Join(dir, "task", t.Name(), "schedstat"))
			if errors.Is(err, os.ErrNotExist) {
				continue // the thread has just exited
			}
			if err != nil {
				return Usage{}, fmt.Errorf("process %d: %w", pid, err)
			}
			ns, ok := parseSchedstat(string(b))
			if !ok {
				return Usage{}, fmt.Errorf("process %d: unreadable schedstat of thread %s", pid, t.Name())
			}
			u.CPU += time.Duration(ns)
		}
	}
	return u, nil
}

// parseSchedstat reads the first of schedstat's "run-ns wait-ns slices".
func parseSchedstat(s string) (int64, bool) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || ns < 0 {
		return 0, false
	}
	return ns, true
}

// parseMinorFaults reads minflt, the tenth field of /proc/pid/stat,
// counting from the state after the command's closing parenthesis (the
// command itself may hold spaces and parentheses).
func parseMinorFaults(s string) (int64, bool) {
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(s[end+1:])
	// state ppid pgrp session tty_nr tpgid flags minflt: the eighth after ')'.
	if len(f) < 8 {
		return 0, false
	}
	n, err := strconv.ParseInt(f[7], 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}
