//go:build !unix

package apiserver

// processCPU is not measured here: the benchmarks report 0.
func processCPU() int64 { return 0 }
