package robustness

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/servingproc"
	"github.com/apiconform/apiconform/refserver/stackstart"
)

// The watch-amplification scenario measures the server alone, so the
// server runs in a child process: the test binary itself, re-executed with
// childEnv set. The child starts an open reference server on 127.0.0.1,
// prints its URL, and answers each "stats" line on stdin with one JSON line
// of its own figures; it exits when stdin closes.
const childEnv = "APICONFORM_ROBUSTNESS_CHILD"

// Stats are a server process's own figures.
type Stats struct {
	Goroutines int   // the server's: without stackstart's ballast
	Ballast    int   // stackstart's ballast goroutines
	RSS, HWM   int64 // bytes: resident now, and at the peak
	HeapInuse  uint64
	CPU        time.Duration // user + system, since the process started
}

// RunChildIfAsked turns the process into the child server when childEnv is
// set; TestMain calls it first.
func RunChildIfAsked() {
	if os.Getenv(childEnv) == "" {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := refserver.StartEmbedded(ctx, func(c *refserver.Config) {
		c.AdminToken = ""
		c.MaxRequestsInFlight = 400 // apiconform serve's default
	})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	// As apiconform serve (package servingproc). The ballast goroutines
	// are not the server's work, and are left out of the count.
	settings := servingproc.Start()
	ballast := settings.Ballast
	settings.Serving()
	fmt.Println(srv.URL())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var st Stats
		switch in.Text() {
		case "stats":
			st = ownStats(ballast)
		case "gc": // collect, and return freed memory to the OS now
			debug.FreeOSMemory()
			st = ownStats(ballast)
		case "resetpeak": // the figures, then start the peak (VmHWM) afresh
			st = ownStats(ballast)
			_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		default:
			continue
		}
		b, _ := json.Marshal(st)
		fmt.Println(string(b))
	}
	settings.Stop()
	cancel()
	_ = srv.Close()
	os.Exit(0)
}

func ownStats(ballast *stackstart.Keeper) Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, hwm := rss()
	return Stats{Goroutines: runtime.NumGoroutine() - ballast.Live(), Ballast: ballast.Live(), RSS: rss, HWM: hwm, HeapInuse: ms.HeapInuse, CPU: cpuTime()}
}

// child is a running child server.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
	URL string
}

func startChild(ctx context.Context) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(outPipe)}
	if !c.out.Scan() || !strings.HasPrefix(c.out.Text(), "http://127.0.0.1:") {
		c.stop()
		return nil, fmt.Errorf("child server did not start: %q", c.out.Text())
	}
	c.URL = c.out.Text()
	return c, nil
}

func (c *child) stats() (Stats, error) { return c.ask("stats") }

// ask sends one command and reads the figures: "stats"; "gc" collects and
// returns freed memory to the OS first; "resetpeak" restarts the peak after.
func (c *child) ask(cmd string) (Stats, error) {
	var s Stats
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		return s, err
	}
	if !c.out.Scan() {
		return s, fmt.Errorf("child server gave no stats: %v", c.out.Err())
	}
	return s, json.Unmarshal(c.out.Bytes(), &s)
}

func (c *child) stop() {
	_ = c.in.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}
