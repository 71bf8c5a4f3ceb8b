// Package chromium drives a headless Chromium for the HTML report's browser
// test and the screenshot helper. It only loads local files: every network
// and background feature Chromium has is switched off.
package chromium

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// EnvBinary overrides where Chromium is looked for.
const EnvBinary = "APICONFORM_CHROMIUM"

// ErrNotFound means no Chromium binary is installed.
var ErrNotFound = errors.New("chromium not found (install Debian's chromium package or set " + EnvBinary + ")")

// Find returns the Chromium binary: $APICONFORM_CHROMIUM, then chromium,
// chromium-browser or google-chrome on PATH, then /usr/bin/chromium.
func Find() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium", nil
	}
	return "", ErrNotFound
}

// FileURL turns a local path and an optional fragment into a file:// URL.
func FileURL(path, fragment string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), Fragment: fragment}
	return u.String(), nil
}

func baseArgs(profileDir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--disable-default-apps", "--mute-audio", "--hide-scrollbars",
		"--user-data-dir=" + profileDir,
		// Let scripts run to completion before dumping or capturing.
		"--virtual-time-budget=5000",
	}
}

func run(ctx context.Context, args []string) ([]byte, error) {
	bin, err := Find()
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "apiconform-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)
	cmd := exec.CommandContext(ctx, bin, append(baseArgs(profile), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s: %v: %s", filepath.Base(bin), err, lastLines(stderr.String(), 5))
	}
	return stdout.Bytes(), nil
}

// DumpDOM loads pageURL, lets its scripts run and returns the serialised DOM.
func DumpDOM(ctx context.Context, pageURL string) ([]byte, error) {
	return run(ctx, []string{"--dump-dom", pageURL})
}

// DumpDOMSize is DumpDOM in a width×height window, for checks of what the
// first screen shows.
func DumpDOMSize(ctx context.Context, pageURL string, width, height int) ([]byte, error) {
	return run(ctx, []string{"--dump-dom", fmt.Sprintf("--window-size=%d,%d", width, height), pageURL})
}

// Screenshot loads pageURL in a width×height window and writes a PNG to out.
func Screenshot(ctx context.Context, pageURL, out string, width, height int) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if _, err := run(ctx, []string{"--screenshot=" + abs, fmt.Sprintf("--window-size=%d,%d", width, height), pageURL}); err != nil {
		return err
	}
	if st, err := os.Stat(abs); err != nil || st.Size() == 0 {
		return fmt.Errorf("chromium wrote no screenshot to %s", abs)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
