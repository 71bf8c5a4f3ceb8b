//go:build !unix

package main

import "syscall"

// ownProcessGroup: elsewhere workers share the parent's console group.
func ownProcessGroup() *syscall.SysProcAttr { return nil }
