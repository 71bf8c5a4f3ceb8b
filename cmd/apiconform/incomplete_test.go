package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiconform/apiconform/reports/result"
)

// These tests run apiconform as a real child process: the test binary
// itself, which acts as the command when beMainEnv is set (and so do the
// -p workers it starts, which inherit the environment).
const beMainEnv = "APICONFORM_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMainEnv) == "1" {
		os.Exit(execute(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runChild is one apiconform process started by a test.
type runChild struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	stdout strings.Builder
	lines  chan string // stderr lines, as they come
	done   chan struct{}
}

// startRunChild starts apiconform with args. The process is killed when the
// test ends; limit bounds it so a hang fails the test instead of stalling it.
func startRunChild(t *testing.T, limit time.Duration, args ...string) *runChild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), beMainEnv+"=1")
	c := &runChild{cmd: cmd, lines: make(chan string, 10000), done: make(chan struct{})}
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(c.lines)
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
	}()
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(outPipe)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			c.mu.Lock()
			c.stdout.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, outPipe)
	}()
	go func() { wg.Wait(); close(c.done) }()
	return c
}

// waitLine waits for a stderr line containing one of subs; false when the
// process ended first.
func (c *runChild) waitLine(subs ...string) bool {
	for l := range c.lines {
		for _, s := range subs {
			if strings.Contains(l, s) {
				return true
			}
		}
	}
	return false
}

// wait ends the child and returns its exit code.
func (c *runChild) wait(t *testing.T) int {
	t.Helper()
	go func() {
		for range c.lines {
		}
	}()
	<-c.done
	err := c.cmd.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	t.Logf("stdout:\n%s\nstderr:\n%s", c.stdout.String(), c.stderr.String())
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return ee.ExitCode()
	}
	t.Fatalf("child did not exit by itself: %v", err)
	return -1
}

func (c *runChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stdout.String() + c.stderr.String()
}

// TestInterruptedRunIsIncomplete interrupts a run mid-way (SIGINT, in one
// process and with -p 2) and checks that it exits 3, and that every report
// says INCOMPLETE first and carries the specs that finished.
func TestInterruptedRunIsIncomplete(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suites in child processes")
	}
	for _, parallel := range []string{"1", "2"} {
		t.Run("p"+parallel, func(t *testing.T) {
			// The whole run takes a few seconds: on a busy machine it may end
			// between its first progress line and the signal. Such an attempt
			// (exit 0, a complete result) is tried again; a run that ignores
			// the interrupt ends that way every time and fails below.
			var out string
			var c *runChild
			var code int
			for attempt := 1; ; attempt++ {
				out = t.TempDir()
				c = startRunChild(t, 5*time.Minute, "run", "--out", out, "-p", parallel, "--skip", "compatibility")
				// Non-terminal progress prints a line per tenth of the run.
				if !c.waitLine("] 0 failed", "] 1 failed", "FAIL ") {
					t.Fatalf("no progress before the run ended:\n%s", c.output())
				}
				if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
					t.Fatal(err)
				}
				if code = c.wait(t); code != 0 || attempt == 3 {
					break
				}
				t.Logf("attempt %d: the run ended before the interrupt arrived", attempt)
			}
			if code != exitIncomplete {
				t.Fatalf("exit code %d, want %d (incomplete)", code, exitIncomplete)
			}
			res, err := result.ReadFile(filepath.Join(out, "result.json"))
			if err != nil {
				t.Fatal(err)
			}
			inc := res.Incomplete
			if inc == nil || inc.Cause != result.Interrupted || inc.Done == 0 || inc.Done >= inc.Total {
				t.Fatalf("incomplete = %+v, want interrupted after some but not all specs", inc)
			}
			cnt := res.Counts()
			if cnt.Passed == 0 || cnt.NotRun == 0 || cnt.Failed != 0 {
				t.Errorf("counts = %+v, want passes, not-run specs and no failures", cnt)
			}
			for _, s := range res.Specs {
				if s.Outcome == result.NotRun && s.SkipReason == "" {
					t.Errorf("not-run spec without a reason: %+v", s)
				}
			}
			head := inc.Headline()
			if !strings.HasPrefix(head, "INCOMPLETE — interrupted after ") {
				t.Errorf("headline %q", head)
			}
			for _, f := range []string{"junit.xml", "report.md", "report.html"} {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(b), "INCOMPLETE") {
					t.Errorf("%s does not say INCOMPLETE", f)
				}
			}
			if !strings.Contains(c.output(), "INCOMPLETE — interrupted") {
				t.Errorf("the command did not print the INCOMPLETE line")
			}
		})
	}
}

// TestServerKilledMidRun kills the target mid-run: the run stops with exit
// 2 naming the cause, the remaining specs are not run, and no spec is
// reported as a conformance failure.
func TestServerKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suites in child processes")
	}
	srv := startRunChild(t, 5*time.Minute, "serve", "--no-tls", "--insecure-addr", "127.0.0.1:0", "--enable-admin-endpoints")
	url := waitURL(t, srv)
	out := t.TempDir()
	c := startRunChild(t, 5*time.Minute, "run", "--server", url, "--out", out, "--skip", "compatibility")
	if !c.waitLine("] 0 failed") {
		t.Fatalf("no progress before the run ended:\n%s", c.output())
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != exitUsage {
		t.Fatalf("exit code %d, want %d", code, exitUsage)
	}
	if !strings.Contains(c.output(), "target lost") {
		t.Errorf("no line naming the lost target")
	}
	res, err := result.ReadFile(filepath.Join(out, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Incomplete == nil || res.Incomplete.Cause != result.TargetLost {
		t.Fatalf("incomplete = %+v, want target-lost", res.Incomplete)
	}
	cnt := res.Counts()
	if cnt.Failed != 0 || cnt.NotRun == 0 || cnt.Passed == 0 {
		t.Errorf("counts = %+v, want passes, not-run specs and no conformance failures", cnt)
	}
	for _, s := range res.Specs {
		if s.Outcome == result.Failed {
			t.Errorf("reported as a conformance failure: %s: %s", s.Name, s.Failure.Message)
		}
	}
}

// waitURL reads the address `apiconform serve` prints.
func waitURL(t *testing.T, srv *runChild) string {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case <-deadline:
			t.Fatalf("serve printed no address:\n%s", srv.output())
		case <-time.After(50 * time.Millisecond):
		}
		out := srv.output()
		if _, rest, ok := strings.Cut(out, "listening on "); ok {
			if u, _, ok := strings.Cut(rest, "\n"); ok {
				return strings.TrimSpace(u)
			}
		}
	}
}

// TestSilentTargetFailsPreflight points the run at a listener that accepts
// connections and never answers: the pre-flight gives up after
// --request-timeout and the run exits 2 (without the bound it would wait
// out --timeout, an hour; the child's limit here is a minute).
func TestSilentTargetFailsPreflight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, conn)
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	}()
	start := time.Now()
	c := startRunChild(t, time.Minute, "run", "--server", "http://"+ln.Addr().String(), "--request-timeout", "2s", "--out", "")
	if code := c.wait(t); code != exitUsage {
		t.Fatalf("exit code %d, want %d", code, exitUsage)
	}
	if !strings.Contains(c.output(), "no answer within --request-timeout 2s") {
		t.Errorf("the error does not name the request timeout")
	}
	t.Logf("exited after %s", time.Since(start).Round(100*time.Millisecond))
}

// TestFocusUnionAndEmptySelection: --focus with an area and a requirement
// of another area selects both; a selection of nothing is exit 2, dry run
// or not.
func TestFocusUnionAndEmptySelection(t *testing.T) {
	c := startRunChild(t, time.Minute, "run", "--dry-run", "--focus", "PAGE-CONSTANT-RV,watch")
	if code := c.wait(t); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	out := c.output()
	if !strings.Contains(out, "PAGE-CONSTANT-RV") {
		t.Errorf("the focused requirement is not selected")
	}
	if !strings.Contains(out, "\nwatch ") {
		t.Errorf("the focused area is not selected")
	}
	if strings.Contains(out, "\nconventions ") {
		t.Errorf("an area outside the focus is selected")
	}
	empty := startRunChild(t, time.Minute, "run", "--dry-run", "--focus", "watch", "--skip", "watch")
	if code := empty.wait(t); code != exitUsage {
		t.Fatalf("empty selection: exit code %d, want %d", code, exitUsage)
	}
	if !strings.Contains(empty.output(), "no spec matched") {
		t.Errorf("empty selection: no clear line")
	}
}
