package robustness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apiconform/apiconform/refserver"
)

// Binary returns the reference server's binary to run:
// $APICONFORM_REFSERVER_BIN (set by `make robustness`), or
// apiconform-refserver built into dir. It is the binary whose start-up the
// scale run times; it takes the flags of `apiconform serve`.
func Binary(ctx context.Context, dir string) (string, error) {
	if b := os.Getenv("APICONFORM_REFSERVER_BIN"); b != "" {
		return b, nil
	}
	out := filepath.Join(dir, "apiconform-refserver")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/apiconform/apiconform/cmd/apiconform-refserver")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, b)
	}
	return out, nil
}

// server is an apiconform-refserver process on 127.0.0.1.
type server struct {
	cmd    *exec.Cmd
	URL    string
	stderr *strings.Builder
	exited chan struct{}
}

// serve starts apiconform-refserver on a free loopback port with plain HTTP
// and waits for it to say where it listens. When the process exits before
// that, it returns the exit error and what the process wrote to stderr.
func serve(ctx context.Context, bin string, args ...string) (*server, error) {
	args = append([]string{"--no-tls", "--insecure-addr", "127.0.0.1:0"}, args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stderr: &strings.Builder{}, exited: make(chan struct{})}
	cmd.Stderr = &lockedWriter{b: s.stderr}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), refserver.ListeningPrefix); ok {
				lines <- u
			}
		}
		close(lines)
	}()
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait(); close(s.exited) }()
	select {
	case u, ok := <-lines:
		if ok {
			s.URL = u
			return s, nil
		}
		err := <-waitErr
		return nil, &exitError{err: err, stderr: s.stderrText()}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("server did not start within 30 s: %s", s.stderrText())
	}
}

func (s *server) stderrText() string {
	w := s.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return s.stderr.String()
}

// kill9 ends the server with SIGKILL: no chance to flush or close anything.
func (s *server) kill9() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// stop ends the server with SIGTERM, as an operator would.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.kill9()
	}
}

// exitError is a server that exited instead of serving.
type exitError struct {
	err    error
	stderr string
}

func (e *exitError) Error() string { return fmt.Sprintf("%v: %s", e.err, e.stderr) }

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
