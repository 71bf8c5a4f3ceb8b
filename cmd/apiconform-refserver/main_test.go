package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/cmd/internal/servecmd"
)

func TestRunRefusesBadUsage(t *testing.T) {
	emptyFile := t.TempDir()
	if err := os.WriteFile(filepath.Join(emptyFile, "refserver.db"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"unknown flag", []string{"--bogus"}, "apiconform-refserver: unknown flag: --bogus"},
		{"argument", []string{"serve"}, `apiconform-refserver: unknown command "serve" for "apiconform-refserver"`},
		{"non-loopback address", []string{"--addr", "192.0.2.1:6443"}, `address "192.0.2.1:6443" is not a loopback address`},
		{"unknown deviation", []string{"--simulate-deviation", "no-such-fault"}, "apiconform-refserver: --simulate-deviation: "},
		{"empty data file", []string{"--no-tls", "--insecure-addr", "127.0.0.1:0", "--data-dir", emptyFile}, "pass --fresh-store to start an empty store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			if code := run(context.Background(), tc.args, &stdout, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2; stderr: %s", code, stderr.String())
			}
			if got := stderr.String(); !strings.Contains(got, tc.wantStderr) || strings.Count(got, "\n") != 1 {
				t.Errorf("stderr = %q, want one line containing %q", got, tc.wantStderr)
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

func TestRunPrintsVersion(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"--version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if got := stdout.String(); !strings.HasPrefix(got, "apiconform-refserver (devel) (go") {
		t.Errorf("--version printed %q", got)
	}
}

// TestRunServesUntilCancelled starts the server on a data directory,
// reads its URL from the line it prints, checks it is ready and keeps a
// write across a restart, and that it stops cleanly (exit 0) when its
// context ends.
func TestRunServesUntilCancelled(t *testing.T) {
	dir := t.TempDir()
	serveOnce := func(check func(url string)) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, w := io.Pipe()
		var stderr strings.Builder
		exit := make(chan int, 1)
		go func() {
			defer w.Close()
			exit <- run(ctx, []string{"--no-tls", "--insecure-addr", "127.0.0.1:0", "--data-dir", dir}, w, &stderr)
		}()
		sc := bufio.NewScanner(out)
		var url string
		for url == "" && sc.Scan() {
			url, _ = strings.CutPrefix(sc.Text(), servecmd.ListeningPrefix)
		}
		go func() { _, _ = io.Copy(io.Discard, out) }()
		if url == "" {
			t.Fatalf("no %q line; exit %d, stderr: %s", servecmd.ListeningPrefix, <-exit, stderr.String())
		}
		check(url)
		cancel()
		if code := <-exit; code != 0 {
			t.Fatalf("exit %d after its context ended, want 0; stderr: %s", code, stderr.String())
		}
	}
	const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":{"k":"v"}}`
	serveOnce(func(url string) {
		mustStatus(t, http.MethodGet, url+"/readyz", "", http.StatusOK)
		mustStatus(t, http.MethodPost, url+"/api/v1/namespaces/default/configmaps", body, http.StatusCreated)
	})
	serveOnce(func(url string) {
		mustStatus(t, http.MethodGet, url+"/api/v1/namespaces/default/configmaps/kept", "", http.StatusOK)
		mustStatus(t, http.MethodGet, url+"/api/v1/namespaces/default/configmaps/not-written", "", http.StatusNotFound)
	})
}

func mustStatus(t *testing.T, method, url, body string, want int) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, resp.StatusCode, want, b)
	}
}
