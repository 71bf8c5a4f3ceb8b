package framework

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/onsi/ginkgo/v2"

	"github.com/apiconform/apiconform/reports/result"
)

// Verdicts: a failed spec is reported as one line in the requirement's
// terms ("expected 410 Gone, got 200 OK (GET …)"), and the exchange whose
// response broke the rule is marked decisive. The framework's assertion
// helpers (ExpectStatus, ExpectCode, ExpectWarning, Verify, …) write both
// as they fail; for a bare Gomega assertion the verdict is its description
// and matcher message on one line, and the last request the spec's body
// made is taken as the decisive one.

// maxVerdict bounds a verdict line (runes) before the request is appended.
const maxVerdict = 200

// pendingVerdict is what the last failing helper said, kept until the
// spec's cleanup checks that this failure is the one the spec ended with.
type pendingVerdict struct {
	message string // the failure message given to Ginkgo
	verdict string
	method  string // the decisive request, "" when unknown
	url     string
}

var (
	pendingMu sync.Mutex
	pending   *pendingVerdict
)

func setPending(p *pendingVerdict) {
	pendingMu.Lock()
	defer pendingMu.Unlock()
	pending = p
}

func takePending() *pendingVerdict {
	pendingMu.Lock()
	defer pendingMu.Unlock()
	p := pending
	pending = nil
	return p
}

// phases remembers where in a spec's recording the body started and ended,
// so setup and teardown exchanges can be told from the spec's own.
type phases struct {
	client             *Client
	bodyStart, bodyEnd int // -1 until reached
}

// trackPhases registers the hooks that mark the body's start and end. Call
// it where New registers the spec's setup (inside a container body).
func trackPhases() *phases {
	ph := &phases{bodyStart: -1, bodyEnd: -1}
	ginkgo.JustBeforeEach(func() { ph.bodyStart = ph.client.recorded() })
	ginkgo.JustAfterEach(func() { ph.bodyEnd = ph.client.recorded() })
	return ph
}

// start resets the marks for a new spec recording on c.
func (ph *phases) start(c *Client) {
	ph.client, ph.bodyStart, ph.bodyEnd = c, -1, -1
	setPending(nil)
}

// recorded is how many exchanges the running spec has recorded so far.
func (c *Client) recorded() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recorder == nil {
		return 0
	}
	return len(*c.recorder)
}

// finish gives every exchange its role and, when the spec failed, records
// the verdict entry. xs is the spec's whole recording.
func (ph *phases) finish(xs []result.Exchange, sr ginkgo.SpecReport) []result.Exchange {
	p := takePending()
	if !sr.Failed() {
		return xs
	}
	out := make([]result.Exchange, len(xs))
	copy(out, xs)
	start, end := ph.bodyStart, ph.bodyEnd
	if start < 0 { // the body never ran: a setup step failed
		start, end = len(out), len(out)
	}
	if end < 0 || end < start {
		end = len(out)
	}
	for i := range out {
		switch {
		case i < start:
			out[i].Role = result.Setup
		case i >= end:
			out[i].Role = result.Teardown
		}
	}
	// The failure happened before teardown: in the body, or in setup when
	// the body never ran.
	last := end
	if ph.bodyStart < 0 {
		last = start
	}
	msg := strings.TrimSpace(sr.Failure.Message)
	var verdict string
	decisive := -1
	if p != nil && strings.TrimSpace(p.message) == msg {
		verdict = p.verdict
		if p.method != "" {
			for i := last - 1; i >= 0; i-- {
				if out[i].Method == p.method && out[i].URL == redactedURL(p.url) {
					decisive = i
					break
				}
			}
		}
	} else if last > 0 {
		decisive = last - 1
	}
	if decisive >= 0 {
		out[decisive].Role = result.Decisive
	}
	if verdict == "" {
		verdict = bareVerdict(msg, sr.Failure.ForwardedPanic)
		if decisive >= 0 {
			x := out[decisive]
			verdict += " (" + requestLine(x.Method, x.URL, x.Status) + ")"
		}
	}
	if ph.bodyStart < 0 && !strings.HasPrefix(verdict, "setup: ") {
		verdict = "setup: " + verdict
	}
	ginkgo.AddReportEntry(result.VerdictEntry, verdict, ginkgo.ReportEntryVisibilityNever)
	return out
}

// redactedURL is u as the recording keeps it.
func redactedURL(u string) string {
	return result.Exchange{URL: u}.Redacted().URL
}

// bareVerdict puts a Gomega failure on one line: its description (when it
// is a short sentence, not a response dump) and the matcher's message.
func bareVerdict(msg, panicked string) string {
	if panicked != "" {
		return clipRunes("panic: "+oneLine(panicked), maxVerdict)
	}
	lines := strings.Split(msg, "\n")
	desc, rest := "", msg
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "Expected") {
			desc = strings.TrimSpace(strings.Join(lines[:i], " "))
			rest = strings.Join(lines[i:], "\n")
			break
		}
	}
	if isResponseDump(desc) {
		desc = ""
	}
	v := untag(oneLine(rest))
	if desc != "" {
		v = desc + ": " + v
	}
	return clipRunes(v, maxVerdict)
}

// isResponseDump reports a description that is a Response's String()
// (the usual `"%s", r`): the request line and body, not a sentence.
func isResponseDump(s string) bool {
	method, rest, ok := strings.Cut(s, " ")
	if !ok || method != strings.ToUpper(method) || len(method) > 7 {
		return false
	}
	u, _, _ := strings.Cut(rest, " ")
	return strings.Contains(rest, " -> ") && strings.Contains(u, "://")
}

// Gomega prints every value with its type ("<int>: 200", "<[]string |
// len:0, cap:0>: nil"); in one line the types only get in the way.
var (
	emptyList = regexp.MustCompile(`<\[\][^<>]*len:0[^<>]*>: (nil|\[\])`)
	typeTag   = regexp.MustCompile(`<[^<>]*>: `)
	// ConsistOf and ContainElements repeat the list they wanted.
	repeated = regexp.MustCompile(` the (missing|extra) elements were .*$`)
)

func untag(s string) string {
	s = emptyList.ReplaceAllString(s, "none")
	s = typeTag.ReplaceAllString(s, "")
	s = repeated.ReplaceAllString(s, "")
	return strings.ReplaceAll(strings.ReplaceAll(s, "[ ", "["), ", ]", "]")
}

// oneLine collapses all whitespace runs into single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// requestLine is "GET /path?query → 200 OK" (no scheme or host: the
// report names the server once).
func requestLine(method, rawURL string, code int) string {
	s := method + " " + clipRunes(pathOf(rawURL), 140)
	if code > 0 {
		s += " → " + codeText(code, "")
	}
	return s
}

// pathOf drops scheme and host from an absolute URL.
func pathOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme, u.Host, u.User = "", "", nil
	return u.String()
}

// codeText is "410 Gone": the code and the Kubernetes reason when known,
// else the HTTP status text.
func codeText(code int, reason string) string {
	if reason == "" {
		reason = http.StatusText(code)
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", code, reason))
}

// gotText describes what r answered: its code and, for a Status, its reason.
func gotText(r *Response) string {
	if r == nil {
		return "no response"
	}
	reason := ""
	if r.Str("kind") == "Status" {
		reason = r.Str("reason")
	}
	return codeText(r.Code, reason)
}

// fail ends the spec with verdict as the first line of its message, detail
// after it, and r (when not nil) as the decisive exchange.
func fail(r *Response, verdict, detail string) {
	ginkgo.GinkgoHelper()
	if r != nil {
		verdict += " (" + requestLine(r.Method, r.URL, 0) + ")"
	}
	msg := verdict
	if detail != "" {
		msg += "\n" + detail
	}
	if pf := preparing(); pf != nil {
		pf(msg) // an early preparation (expiry.go): its spec hears of it
	}
	p := &pendingVerdict{message: msg, verdict: verdict}
	if r != nil {
		p.method, p.url = r.Method, r.URL
	}
	setPending(p)
	ginkgo.Fail(msg)
}

// statusVerdict says how r differs from a v1 Status with code and reason ("" when it does not).
func statusVerdict(r *Response, code int, reason string) string {
	want := codeText(code, reason)
	switch {
	case r.Code != code:
		return fmt.Sprintf("expected %s, got %s", want, gotText(r))
	case r.Str("kind") != "Status" || r.Str("apiVersion") != "v1":
		return fmt.Sprintf("expected a v1 Status object with %s, got kind %q apiVersion %q", want, r.Str("kind"), r.Str("apiVersion"))
	case r.Str("status") != "Failure":
		return fmt.Sprintf("expected Status status \"Failure\" with %s, got %q", want, r.Str("status"))
	case r.Int("code") != int64(code):
		return fmt.Sprintf("expected Status code %d, got %d in a %d answer", code, r.Int("code"), r.Code)
	case r.Str("reason") != reason:
		return fmt.Sprintf("expected %s, got %d with reason %q", want, r.Code, r.Str("reason"))
	}
	return ""
}

// codeVerdict says how r's code differs from codes ("" when it is one of them).
func codeVerdict(r *Response, codes ...int) string {
	wants := make([]string, len(codes))
	for i, c := range codes {
		if r.Code == c {
			return ""
		}
		wants[i] = codeText(c, "")
	}
	return fmt.Sprintf("expected %s, got %s", strings.Join(wants, " or "), gotText(r))
}

// warningVerdict names the first of texts no Warning header of r contains.
func warningVerdict(r *Response, texts ...string) string {
	got := r.Warnings()
	for _, t := range texts {
		found := false
		for _, w := range got {
			found = found || strings.Contains(w, t)
		}
		if found {
			continue
		}
		seen := "none"
		if len(got) > 0 {
			seen = fmt.Sprintf("%q", got)
		}
		return fmt.Sprintf("expected a Warning header %q, got %s", t, seen)
	}
	return ""
}

// fieldVerdict says how the value at path differs from want.
func fieldVerdict(r *Response, path, want string) string {
	got := r.JSON(path)
	if got.Exists() && got.String() == want {
		return ""
	}
	g := "nothing"
	if got.Exists() {
		g = fmt.Sprintf("%q", got.String())
	}
	return fmt.Sprintf("expected %s = %q, got %s", path, want, g)
}

// warningsVerdict says how r's Warning headers differ from exactly want (in any order).
func warningsVerdict(r *Response, want ...string) string {
	got := r.Warnings()
	a, b := slices.Clone(got), slices.Clone(want)
	slices.Sort(a)
	slices.Sort(b)
	if slices.Equal(a, b) {
		return ""
	}
	g := "none"
	if len(got) > 0 {
		g = fmt.Sprintf("%q", got)
	}
	if len(want) == 0 {
		return "expected no Warning header, got " + g
	}
	return fmt.Sprintf("expected Warning header(s) %q, got %s", want, g)
}
