//go:build !linux

package hugeheap

import "errors"

func readMachine() (machine, error) {
	return machine{}, errors.New("transparent huge pages are a Linux feature")
}

// Advise stops at readMachine; these are for the build.

func adviseStretch(uintptr) (*Stretch, error) { return nil, errors.New("not Linux") }

func highestResident(lo, hi uintptr, vec []byte) (uintptr, bool) { return 0, false }

func unadvise(lo, hi uintptr) error { return errors.New("not Linux") }
