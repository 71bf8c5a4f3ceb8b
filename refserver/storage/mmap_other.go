//go:build !linux

package storage

// prefault: elsewhere new memory's pages fault in as it is first written.
func prefault([]byte) {}

// prefaultFile: elsewhere the file's pages fault in as they are read.
func prefaultFile(uintptr, int64) {}
