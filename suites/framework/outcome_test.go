package framework

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
)

func TestNoAnswer(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"refused", &url.Error{Op: "Get", URL: "http://x", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"closed mid-answer", fmt.Errorf("GET /x: %w", io.ErrUnexpectedEOF), true},
		{"request deadline", fmt.Errorf("GET /x: %w", context.DeadlineExceeded), true},
		{"tls", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, true},
		{"run cancelled", &url.Error{Op: "Get", URL: "http://x", Err: context.Canceled}, false},
		{"other", errors.New("build request: bad URL"), false},
	}
	for _, tt := range tests {
		if got := noAnswer(tt.err); got != tt.want {
			t.Errorf("%s: noAnswer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestClientLostAfterSilentRequests(t *testing.T) {
	c := &Client{}
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	for i := 0; i < lostAfter-1; i++ {
		c.observe(refused)
	}
	if c.lost() != nil {
		t.Fatal("lost before lostAfter silent requests")
	}
	c.observe(nil) // an answer resets the run
	for i := 0; i < lostAfter-1; i++ {
		c.observe(refused)
	}
	c.observe(errors.New("not a silence")) // neither an answer nor a silence
	if c.lost() != nil {
		t.Fatal("an answer in between must reset the count")
	}
	c.observe(refused)
	if err := c.lost(); err == nil || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("lost = %v, want the last error wrapped", err)
	}
	if n := c.noAnswerCount(); n != 2*(lostAfter-1)+1 {
		t.Errorf("noAnswerCount = %d", n)
	}
}

// A client-go request without an answer makes a failing spec a harness
// error (noAnswerCount) without counting towards a lost target; an answer
// to one resets the run of silent requests.
func TestClientGoRequestsObserved(t *testing.T) {
	c := &Client{}
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	for i := 0; i < lostAfter-1; i++ {
		c.observe(refused)
	}
	rt := recordingTransport{next: roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, &url.Error{Op: "Get", URL: "http://x", Err: context.DeadlineExceeded}
	}), client: c}
	req, _ := http.NewRequest("GET", "http://127.0.0.1/api", nil)
	if _, err := rt.RoundTrip(req); err == nil {
		t.Fatal("the failing transport answered")
	}
	if n := c.noAnswerCount(); n != lostAfter {
		t.Errorf("noAnswerCount = %d, want %d", n, lostAfter)
	}
	if err := c.lost(); err != nil {
		t.Errorf("lost after a client-go request timed out: %v", err)
	}
	rt.next = roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: http.NoBody, Header: http.Header{}}, nil
	})
	if _, err := rt.RoundTrip(req); err != nil {
		t.Fatal(err)
	}
	c.observe(refused)
	if c.lost() != nil {
		t.Error("a client-go answer must reset the run of silent requests")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A spec that failed is a conformance failure unless the run was cancelled
// while it ran or the target stopped answering; then it is a harness error.
func TestErrorCause(t *testing.T) {
	refused := fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
	last := func() error { return refused }
	tests := []struct {
		name     string
		runErr   error
		noAnswer bool
		want     string // "" = a conformance failure
	}{
		{"the target answered", nil, false, ""},
		{"interrupted", context.Canceled, false, "the run was cancelled during the spec (context canceled)"},
		{"the run's deadline", context.DeadlineExceeded, false, "the run was cancelled during the spec (context deadline exceeded)"},
		{"no answer", nil, true, "the target stopped answering during the spec (dial: connection refused)"},
		{"both", context.Canceled, true, "the run was cancelled during the spec (context canceled)"},
	}
	for _, tt := range tests {
		if got := errorCause(tt.runErr, tt.noAnswer, last); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
