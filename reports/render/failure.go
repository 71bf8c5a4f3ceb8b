package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

// How a failure is shown in every format: one verdict line naming the
// requirements, then the decisive exchange, the spec's other steps, and
// setup/teardown last (collapsed where the format can), bodies trimmed.

const (
	// maxVerdictLine bounds a one-line verdict (runes) in lists and JUnit messages.
	maxVerdictLine = 300
	// maxShownBody bounds a body in Markdown, JUnit and -v terminal output;
	// the full (recorded) body stays in result.json and the HTML page.
	maxShownBody = 2000
)

// verdictText is the spec's verdict without requirement IDs: the line the
// failing assertion wrote, or for older results and harness errors the first
// line of the failure message.
func verdictText(s result.SpecResult) string {
	v := strings.TrimSpace(s.Verdict)
	if v == "" && s.Failure != nil {
		v = firstLine(s.Failure.Message)
	}
	if v == "" {
		v = strings.TrimSpace(s.SkipReason)
	}
	if v == "" {
		v = string(s.Outcome)
	}
	return clip(strings.Join(strings.Fields(v), " "), maxVerdictLine)
}

// reqIDs is "RV-A, RV-B", or the spec's area when it names none.
func reqIDs(s result.SpecResult) string {
	if len(s.Requirements) == 0 {
		return s.Area
	}
	return strings.Join(s.Requirements, ", ")
}

// verdictLine is "RV-LIST-EXACT: expected 410 Gone, got 200 OK (GET …)";
// a harness error reads "RV-X: error: …".
func verdictLine(s result.SpecResult) string {
	v := verdictText(s)
	if s.Outcome == result.Errored && !strings.HasPrefix(v, "error") {
		v = "error: " + v
	}
	return reqIDs(s) + ": " + v
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// problems lists the failures, then the errors, of the report.
func problems(rep *reports.Report) []reports.SpecEntry {
	out := make([]reports.SpecEntry, 0, len(rep.Failures)+len(rep.Errors))
	out = append(out, rep.Failures...)
	return append(out, rep.Errors...)
}

// exchangeGroups splits a spec's exchanges: decisive first, then the
// spec's other steps in order (main), and setup and teardown (aside).
func exchangeGroups(xs []result.Exchange) (main, aside []result.Exchange) {
	for _, x := range xs {
		if x.Role == result.Decisive {
			main = append(main, x)
		}
	}
	for _, x := range xs {
		switch x.Role {
		case result.Decisive:
		case result.Setup, result.Teardown:
			aside = append(aside, x)
		default:
			main = append(main, x)
		}
	}
	return main, aside
}

// roleLabel names an exchange's role for headings.
func roleLabel(r result.Role) string {
	switch r {
	case result.Decisive:
		return "decisive"
	case result.Setup:
		return "setup"
	case result.Teardown:
		return "teardown"
	}
	return "step"
}

// keepsManagedFields says whether managedFields matter to this spec:
// server-side apply is about them, or the failure names them.
func keepsManagedFields(s result.SpecResult) bool {
	if s.Area == "apply" || strings.Contains(s.Verdict, "managedFields") {
		return true
	}
	return s.Failure != nil && strings.Contains(s.Failure.Message, "managedFields")
}

// shownBody prepares a body for people: indented when it is one JSON
// document, managedFields elided unless keep, cut to limit bytes (0: no cut).
func shownBody(body string, keep bool, limit int) string {
	if body == "" {
		return ""
	}
	if len(body) < 1<<16 && json.Valid([]byte(body)) {
		var b bytes.Buffer
		if json.Indent(&b, []byte(body), "", "  ") == nil {
			body = b.String()
		}
	}
	if !keep {
		body = elideManagedFields(body)
	}
	if limit > 0 && len(body) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		body = body[:cut] + fmt.Sprintf("\n… (%d more bytes; the whole recorded body is in result.json)", len(body)-cut)
	}
	return body
}

const managedKey = `"managedFields"`

// elideManagedFields replaces the value of every "managedFields" key with a
// short marker. It scans text, so a body cut short by the recorder (no
// longer valid JSON) is handled too: an unterminated array is elided to the end.
func elideManagedFields(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, managedKey)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(managedKey)
		k := j
		for k < len(s) && (s[k] == ' ' || s[k] == ':' || s[k] == '\n' || s[k] == '\t' || s[k] == '\r') {
			k++
		}
		if k >= len(s) || s[k] != '[' || !strings.Contains(s[j:k], ":") {
			b.WriteString(s[:j])
			s = s[j:]
			continue
		}
		end, entries := matchArray(s, k)
		b.WriteString(s[:j])
		fmt.Fprintf(&b, `: ["… %d managedFields entries elided"]`, entries)
		if end < 0 {
			return b.String()
		}
		s = s[end:]
	}
}

// matchArray finds the end (index after ']') of the JSON array starting at
// s[start] == '[' and counts its top-level entries; end is -1 when the
// text ends first.
func matchArray(s string, start int) (end, entries int) {
	depth, inString, escaped, empty := 1, false, false, true
	for i := start + 1; i < len(s); i++ {
		c := s[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if depth == 1 && !strings.ContainsRune(" \t\r\n]", rune(c)) {
			empty = false
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				if !empty {
					entries++
				}
				return i + 1, entries
			}
		case ',':
			if depth == 1 {
				entries++
			}
		}
	}
	if !empty {
		entries++
	}
	return -1, entries
}

// shortURL is the URL's path and query (the report names the server once).
func shortURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme, u.Host, u.User = "", "", nil
	return u.String()
}

// exchangeHead is "GET /path?query → 200".
func exchangeHead(x result.Exchange) string {
	s := x.Method + " " + shortURL(x.URL)
	if x.Status > 0 {
		s += fmt.Sprintf(" → %d", x.Status)
	}
	return s
}
