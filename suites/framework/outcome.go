package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/onsi/ginkgo/v2"

	"github.com/apiconform/apiconform/reports/result"
)

// Outcomes other than pass, fail and skip. Ginkgo knows only those three,
// so the framework marks the spec (result.OutcomeEntry) and the result
// builder reads the mark.

// NotApplicable ends the spec as not applicable: the requirement does not
// apply to this target (e.g. the Frobber group exists only on the reference
// server). Unlike a skip it is left out of the conformance percentage, so
// use Skip (a documented allowance taken) whenever the target could have
// been held to the requirement.
func NotApplicable(reason string) {
	ginkgo.AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.NotApplicable, reason))
	ginkgo.Skip(reason, 1)
}

// lostAfter is how many requests in a row may end without an answer
// (connection refused or reset, TLS failure, no answer before the deadline)
// before the target counts as lost and the run stops.
const lostAfter = 3

// Lost is why the target counts as lost (nil while it answers): lostAfter
// requests in a row got no answer.
func Lost() error {
	mu.RLock()
	defer mu.RUnlock()
	if current == nil {
		return nil
	}
	return current.client.lost()
}

// NoAnswer tells the framework that a client the spec ran itself (kubectl)
// got no answer from the target: if the spec fails, it ends as a harness
// error, as when one of the framework's own requests gets none.
func NoAnswer(err error) {
	mu.RLock()
	defer mu.RUnlock()
	if current != nil {
		current.client.noteSilent(err)
	}
}

// noAnswer reports whether err means the target did not answer at all (as
// opposed to answering badly): refused, reset, closed, TLS trouble, or the
// request's own deadline. A cancelled run is not the target's doing.
func noAnswer(err error) bool {
	var recordHeader tls.RecordHeaderError
	var alert tls.AlertError
	var unknownAuthority x509.UnknownAuthorityError
	var certInvalid x509.CertificateInvalidError
	var opErr *net.OpError
	switch {
	case errors.Is(err, context.Canceled):
		return false
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &recordHeader), errors.As(err, &alert), errors.As(err, &unknownAuthority),
		errors.As(err, &certInvalid), errors.As(err, &opErr):
		return true
	}
	return false
}

// failTransport ends the spec as error, not as a conformance failure: the
// request got no usable answer, which says nothing about the API machinery
// the spec checks. A lost target stops the run (ginkgo.AbortSuite): the
// specs not yet started are reported not run. offset is the caller's depth.
func failTransport(what string, err error, offset int) {
	reason := "harness error, not a conformance failure: " + err.Error() // err names the request
	if !strings.Contains(err.Error(), what) {
		reason = fmt.Sprintf("harness error, not a conformance failure: %s: %v", what, err)
	}
	if pf := preparing(); pf != nil {
		pf(reason) // an early preparation (expiry.go): its spec hears of it
	}
	if !ginkgo.CurrentSpecReport().Failed() {
		ginkgo.AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.Errored, reason))
	}
	if lost := Lost(); lost != nil {
		ginkgo.AbortSuite("target lost: "+lost.Error(), offset+1)
	}
	ginkgo.Fail(reason, offset+1)
}

// guardSpec is called before a spec's body: a run already cancelled or a
// target already lost leaves the spec not run. The function it returns is
// called after the spec and its cleanup: a spec that failed while the run
// was cancelled (an interrupt, the run's deadline) or while the target
// stopped answering is marked error, since the failure cannot be pinned on
// the target's conformance (errorCause).
func guardSpec(ctx context.Context, c *Client) func() {
	if lost := c.lost(); lost != nil {
		ginkgo.AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.NotRun, "not started: the target was lost ("+lost.Error()+")"))
		ginkgo.AbortSuite("target lost: " + lost.Error())
	}
	if ctx.Err() != nil {
		ginkgo.AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.NotRun, "not started: the run was cancelled ("+ctx.Err().Error()+")"))
		ginkgo.Skip("run cancelled: " + ctx.Err().Error())
	}
	before := c.noAnswerCount()
	return func() {
		sr := ginkgo.CurrentSpecReport()
		if !sr.Failed() {
			return
		}
		cause := errorCause(ctx.Err(), c.noAnswerCount() != before, c.lastNoAnswer)
		if cause == "" {
			return
		}
		for _, e := range sr.ReportEntries {
			if e.Name == result.OutcomeEntry {
				return // already marked
			}
		}
		ginkgo.AddReportEntry(result.OutcomeEntry, result.OutcomeEntryValue(result.Errored,
			"harness error, not a conformance failure: "+cause))
	}
}

// errorCause says why a spec that failed is a harness error rather than a
// conformance failure, or "" when it is a failure: the run was cancelled
// while it ran (a request of the spec's, cut off, fails its expectation; the
// run is incomplete all the same), or the target stopped answering.
func errorCause(runErr error, noAnswer bool, lastNoAnswer func() error) string {
	switch {
	case runErr != nil:
		return "the run was cancelled during the spec (" + runErr.Error() + ")"
	case noAnswer:
		return fmt.Sprintf("the target stopped answering during the spec (%v)", lastNoAnswer())
	}
	return ""
}
