//go:build unix

package framework

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHistoryLock: specs share the lock, a compaction holds it alone, and a
// compaction waiting for it holds back specs that start meanwhile. Handles
// opened separately conflict as the worker processes' do.
func TestHistoryLock(t *testing.T) {
	dir := t.TempDir()
	open := func() *historyLock {
		l, err := openHistoryLock(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.gate.Close(); l.main.Close() })
		return l
	}
	a, b, c := open(), open(), open()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	short := func() context.Context {
		sctx, scancel := context.WithTimeout(ctx, 30*time.Millisecond)
		t.Cleanup(scancel)
		return sctx
	}

	releaseA, err := a.acquire(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	releaseB, err := b.acquire(ctx, false)
	if err != nil {
		t.Fatalf("a second spec could not share the lock: %v", err)
	}
	releaseB()
	if _, err := b.acquire(short(), true); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a compaction took the lock while a spec held it: %v", err)
	}

	// A compaction waits for a; c, starting meanwhile, waits behind it.
	got := make(chan func(), 1)
	go func() {
		release, err := b.acquire(ctx, true)
		if err != nil {
			t.Error(err)
			release = func() {}
		}
		got <- release
	}()
	for tryLockFile(c.gate, false) == nil { // until b holds the gate
		if err := unlockFile(c.gate); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatal("the compaction never took the gate")
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := c.acquire(short(), false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a spec started past a waiting compaction: %v", err)
	}
	select {
	case <-got:
		t.Fatal("the compaction took the lock while a spec held it")
	default:
	}
	releaseA()
	releaseCompaction := <-got
	if _, err := c.acquire(short(), false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a spec ran during a compaction: %v", err)
	}
	releaseCompaction()
	releaseC, err := c.acquire(ctx, false)
	if err != nil {
		t.Fatalf("a spec could not start after the compaction: %v", err)
	}
	releaseC()
}
