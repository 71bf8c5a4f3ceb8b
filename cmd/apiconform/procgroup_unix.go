//go:build unix

package main

import "syscall"

// ownProcessGroup puts a worker in a process group of its own, so a
// terminal's Ctrl-C reaches only the parent, which passes it on once.
func ownProcessGroup() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
