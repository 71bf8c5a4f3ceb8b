package robustness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DamageCase is one way a data file can be damaged, and what the server
// must do about it.
type DamageCase struct {
	Name   string
	Damage func(b []byte) ([]byte, error)
	// Refused: the server exits with status 2 and one line on stderr
	// containing Says, and leaves the file byte for byte as it was.
	// Otherwise it starts, and reads of the damaged object are a 500
	// naming it.
	Refused bool
	Says    string
	// Checked: refused by the check of the whole file that ends after the
	// server is ready (it reads a few pages to start), not at open.
	Checked bool
	// Args are extra serve flags (e.g. --fresh-store).
	Args []string
}

const damageMarker = "ROBUSTNESS-DAMAGE-MARKER"

// DamageCases are the cases of issue #18.
var DamageCases = []DamageCase{
	{Name: "truncated to half", Refused: true, Says: "damaged", Damage: func(b []byte) ([]byte, error) { return b[:len(b)/2], nil }},
	{Name: "zero length", Refused: true, Says: "--fresh-store", Damage: func([]byte) ([]byte, error) { return []byte{}, nil }},
	{Name: "zero length with --fresh-store", Args: []string{"--fresh-store"}, Damage: func([]byte) ([]byte, error) { return []byte{}, nil }},
	{Name: "garbage", Refused: true, Says: "damaged", Damage: func(b []byte) ([]byte, error) {
		r := rand.New(rand.NewPCG(7, 11))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b, nil
	}},
	{Name: "bit flipped in a record header", Refused: true, Checked: true, Says: "damaged", Damage: func(b []byte) ([]byte, error) {
		// The record: its header ends with the key and the header's 4-byte
		// checksum, and the value (JSON) follows. bbolt writes a changed page
		// anew, so the file may hold stale copies too: flip every one.
		key := []byte("/registry/core/configmaps/damage/victim")
		n := 0
		for off := 0; ; {
			i := bytes.Index(b[off:], key)
			if i < 0 {
				break
			}
			off += i + len(key)
			if off+4 < len(b) && b[off+4] == '{' {
				b[off-1] ^= 0x01
				n++
			}
		}
		if n == 0 {
			return nil, errors.New("the victim's record is not in the file")
		}
		return b, nil
	}},
	{Name: "bit flipped in a stored value", Damage: func(b []byte) ([]byte, error) {
		i := bytes.Index(b, []byte(damageMarker+"-victim"))
		if i < 0 {
			return nil, errors.New("the victim's value is not in the file")
		}
		b[i+len(damageMarker)+10] ^= 0x02
		return b, nil
	}},
}

// DamageFigures say what was checked.
type DamageFigures struct{ Cases int }

// Damage writes a store with `apiconform-refserver --data-dir`, then for each
// case starts the server on a damaged copy and checks the outcome.
func Damage(ctx context.Context, bin, dir string, cases []DamageCase) (DamageFigures, error) {
	var f DamageFigures
	pristine := filepath.Join(dir, "pristine")
	srv, err := serve(ctx, bin, "--data-dir", pristine)
	if err != nil {
		return f, err
	}
	c := newClient(srv.URL, "")
	const ns = "damage"
	if _, err := c.createNamespace(ctx, ns); err != nil {
		srv.stop()
		return f, err
	}
	for _, name := range []string{"bystander", "victim"} {
		code, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces/"+ns+"/configmaps", cm(name, "none", damageMarker+"-"+name+strings.Repeat("-", 200)), nil)
		if err != nil || code != http.StatusCreated {
			srv.stop()
			return f, fmt.Errorf("create %s: %d %v", name, code, err)
		}
	}
	srv.stop()
	orig, err := os.ReadFile(filepath.Join(pristine, "refserver.db"))
	if err != nil {
		return f, err
	}
	for i, dc := range cases {
		if err := damageCase(ctx, bin, filepath.Join(dir, fmt.Sprint(i)), orig, dc, ns); err != nil {
			return f, fmt.Errorf("%s: %w", dc.Name, err)
		}
		f.Cases++
	}
	return f, nil
}

func damageCase(ctx context.Context, bin, dir string, orig []byte, dc DamageCase, ns string) error {
	damaged, err := dc.Damage(bytes.Clone(orig))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	file := filepath.Join(dir, "refserver.db")
	if err := os.WriteFile(file, damaged, 0o600); err != nil {
		return err
	}
	srv, err := serve(ctx, bin, append([]string{"--data-dir", dir}, dc.Args...)...)
	if !dc.Refused {
		if err != nil {
			return fmt.Errorf("the server did not start: %w", err)
		}
		defer srv.stop()
		return checkServed(ctx, newClient(srv.URL, ""), dc, ns)
	}
	switch {
	case err == nil && !dc.Checked:
		srv.stop()
		return errors.New("the server started on the damaged file")
	case err == nil:
		// Ready, and the check of the whole file must end it.
		select {
		case <-srv.exited:
			err = &exitError{err: &exec.ExitError{ProcessState: srv.cmd.ProcessState}, stderr: srv.stderrText()}
		case <-time.After(30 * time.Second):
			srv.stop()
			return errors.New("the server kept serving the damaged file")
		}
	case dc.Checked:
		return fmt.Errorf("refused at open, not by the check after the start: %w", err)
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		return err
	}
	if xe := (*exec.ExitError)(nil); !errors.As(ee.err, &xe) || xe.ExitCode() != 2 {
		return fmt.Errorf("%v, want exit status 2: %s", ee.err, ee.stderr)
	}
	msg := strings.TrimSpace(ee.stderr)
	lines := strings.Split(msg, "\n")
	last := lines[len(lines)-1]
	// The server logs one warning line about being open before it opens the store.
	if strings.Contains(msg, "goroutine ") || strings.Contains(msg, "SIGSEGV") || !strings.Contains(last, dc.Says) {
		return fmt.Errorf("stderr %q: want one line saying %q and no crash", msg, dc.Says)
	}
	after, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !bytes.Equal(after, damaged) {
		return errors.New("the refused file was changed")
	}
	return nil
}

// checkServed: a store that opened serves the intact object, and a read
// of the damaged one is a 500 InternalError naming it.
func checkServed(ctx context.Context, c *client, dc DamageCase, ns string) error {
	if dc.Args != nil { // a fresh store: empty
		code, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/bystander", nil, nil)
		if err != nil || code != http.StatusNotFound {
			return fmt.Errorf("fresh store: GET bystander: %d %v", code, err)
		}
		return nil
	}
	var o obj
	if code, err := c.do(ctx, http.MethodGet, "/api/v1/namespaces/"+ns+"/configmaps/bystander", nil, &o); err != nil || code != http.StatusOK {
		return fmt.Errorf("GET bystander: %d %v", code, err)
	}
	for _, path := range []string{"/api/v1/namespaces/" + ns + "/configmaps/victim", "/api/v1/namespaces/" + ns + "/configmaps"} {
		var st obj
		code, err := c.do(ctx, http.MethodGet, path, nil, &st)
		if err != nil {
			return err
		}
		if code != http.StatusInternalServerError || st.Reason != "InternalError" || !strings.Contains(st.Message, ns+"/victim") {
			return fmt.Errorf("GET %s: %d %s %q, want 500 InternalError naming the key", path, code, st.Reason, st.Message)
		}
	}
	return nil
}
