//go:build unix

package framework

import (
	"errors"
	"os"
	"syscall"
)

func tryLockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLockBusy
		case errors.Is(err, syscall.EINTR):
			continue
		}
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
