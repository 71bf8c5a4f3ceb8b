package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
)

// The history lock. On the reference server the harness drops history on
// request (Compact), and a compaction drops every older revision at once:
// a paging walk, an Exact list or a watch from a resourceVersion that a spec
// of another worker process (`apiconform run -p N`) is in the middle of
// would get 410 Gone though the server did nothing wrong. So there a spec
// that compacts (labelled CompactsHistory) runs alone across the run's
// workers: every spec holds the run's lock file shared, a compacting spec
// holds it exclusively. A second file, the gate, is a turnstile: a waiting
// compaction holds it, and specs starting meanwhile wait behind it, so the
// other workers' back-to-back specs cannot starve it. Other targets compact
// on their own schedule, which the harness cannot move; there nothing is
// locked (and none of these specs compacts).

// HistoryLockEnv names the directory of a run's history lock; `apiconform
// run -p N` sets it for its workers. Without it a process locks nothing:
// its specs run one at a time.
const HistoryLockEnv = "APICONFORM_HISTORY_LOCK"

// CompactsHistory labels a spec that calls Compact.
var CompactsHistory = ginkgo.Label(compactsLabel)

const compactsLabel = "compacts-history"

// historyLockWait bounds the wait for the lock: the longest spec of another
// worker, on the reference server seconds at most.
const historyLockWait = 2 * time.Minute

// historyLock is one process's handle on the run's lock files. flock locks
// belong to an open file, so two handles conflict as two processes do.
type historyLock struct {
	gate, main *os.File
}

func openHistoryLock(dir string) (*historyLock, error) {
	open := func(name string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, name), os.O_RDWR|os.O_CREATE, 0o600)
	}
	gate, err := open("history.gate")
	if err != nil {
		return nil, fmt.Errorf("history lock: %w", err)
	}
	main, err := open("history.lock")
	if err != nil {
		gate.Close()
		return nil, fmt.Errorf("history lock: %w", err)
	}
	return &historyLock{gate: gate, main: main}, nil
}

// errLockBusy: a non-blocking lock attempt found the file held.
var errLockBusy = errors.New("held by another process")

// acquire takes the lock shared, or exclusively, and returns its release;
// it polls (flock cannot be cancelled) until ctx ends.
func (l *historyLock) acquire(ctx context.Context, exclusive bool) (release func(), err error) {
	if exclusive {
		if err := lockPolling(ctx, l.gate, true); err != nil {
			return nil, err
		}
		if err := lockPolling(ctx, l.main, true); err != nil {
			_ = unlockFile(l.gate)
			return nil, err
		}
		return func() { _ = unlockFile(l.main); _ = unlockFile(l.gate) }, nil
	}
	// Pass the gate (not while a compaction waits or runs), then hold the lock shared.
	if err := lockPolling(ctx, l.gate, false); err != nil {
		return nil, err
	}
	_ = unlockFile(l.gate)
	if err := lockPolling(ctx, l.main, false); err != nil {
		return nil, err
	}
	return func() { _ = unlockFile(l.main) }, nil
}

func lockPolling(ctx context.Context, f *os.File, exclusive bool) error {
	pause := time.Millisecond
	for {
		err := tryLockFile(f, exclusive)
		if !errors.Is(err, errLockBusy) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", filepath.Base(f.Name()), ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 20*time.Millisecond)
	}
}

// processLock is this process's handle, opened on first use.
var processLock struct {
	lock *historyLock
	err  error
	held bool // by the running spec (a nested New locks once)
}

// lockHistory holds the run's history lock for the running spec, when the
// run has one and the target is the reference server; the spec's cleanup
// releases it. Waiting for it fails the spec as a harness error.
func lockHistory(ctx context.Context) {
	dir := os.Getenv(HistoryLockEnv)
	if dir == "" || !Caps().RefServer || processLock.held {
		return
	}
	if processLock.lock == nil && processLock.err == nil {
		processLock.lock, processLock.err = openHistoryLock(dir)
	}
	if processLock.err != nil {
		failTransport("history lock", processLock.err, 1)
	}
	waitCtx, cancel := context.WithTimeout(ctx, historyLockWait)
	defer cancel()
	release, err := processLock.lock.acquire(waitCtx, compactsHistory())
	if err != nil {
		failTransport("history lock", err, 1)
	}
	processLock.held = true
	ginkgo.DeferCleanup(func() {
		release()
		processLock.held = false
	})
}

// compactsHistory tells whether the running spec is labelled CompactsHistory;
// outside a spec (a Go test of the framework) nothing runs beside it.
func compactsHistory() bool {
	sr := ginkgo.CurrentSpecReport()
	return sr.LeafNodeType == types.NodeTypeInvalid || slices.Contains(sr.Labels(), compactsLabel)
}
