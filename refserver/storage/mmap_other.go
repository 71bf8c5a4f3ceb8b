//go:build !linux

package storage

// checkMmapFlags: elsewhere the check's pages are faulted in as it reads them.
const checkMmapFlags = 0
