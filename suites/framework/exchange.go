package framework

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"
)

// ExchangesEntryName is the name of the report entry that carries a failed
// spec's recorded HTTP exchanges (value type Exchanges).
const ExchangesEntryName = "apiconform.exchanges"

const (
	maxRecordedBody      = 4096
	maxRecordedExchanges = 200
)

// Exchange is one recorded request and its answer, credentials redacted.
type Exchange struct {
	Method         string              `json:"method"`
	URL            string              `json:"url"`
	RequestHeader  map[string][]string `json:"requestHeader,omitempty"`
	RequestBody    string              `json:"requestBody,omitempty"`
	Status         int                 `json:"status,omitempty"`
	ResponseHeader map[string][]string `json:"responseHeader,omitempty"`
	ResponseBody   string              `json:"responseBody,omitempty"`
	Error          string              `json:"error,omitempty"`
	Started        time.Time           `json:"started"`
	Duration       time.Duration       `json:"duration"`
}

// Exchanges is the value of the ExchangesEntryName report entry.
type Exchanges []Exchange

// String renders the exchanges as a readable transcript.
func (xs Exchanges) String() string {
	var b strings.Builder
	for i, x := range xs {
		fmt.Fprintf(&b, "#%d %s %s\n", i+1, x.Method, x.URL)
		writeHeaders(&b, "  > ", x.RequestHeader)
		if x.RequestBody != "" {
			fmt.Fprintf(&b, "  > %s\n", x.RequestBody)
		}
		if x.Error != "" {
			fmt.Fprintf(&b, "  ! %s\n", x.Error)
			continue
		}
		fmt.Fprintf(&b, "  < %d (%s)\n", x.Status, x.Duration.Round(time.Millisecond))
		writeHeaders(&b, "  < ", x.ResponseHeader)
		if x.ResponseBody != "" {
			fmt.Fprintf(&b, "  < %s\n", x.ResponseBody)
		}
	}
	return b.String()
}

func writeHeaders(b *strings.Builder, prefix string, h map[string][]string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(b, "%s%s: %s\n", prefix, k, v)
		}
	}
}

var sensitiveHeaders = map[string]bool{
	"Authorization":       true,
	"Proxy-Authorization": true,
	"Cookie":              true,
	"Set-Cookie":          true,
	"X-Auth-Token":        true,
	"X-Api-Key":           true,
}

// tokenPattern hides bearer tokens, JWTs and "token" fields that show up in bodies.
var tokenPattern = regexp.MustCompile(`(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+|eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*|("(?:token|password|access_token|id_token|refresh_token)"\s*:\s*")[^"]*`)

func redactText(s string) string {
	return tokenPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := tokenPattern.FindStringSubmatch(m)
		switch {
		case sub[1] != "":
			return sub[1] + "REDACTED"
		case sub[2] != "":
			return sub[2] + "REDACTED"
		default:
			return "REDACTED"
		}
	})
}

func redact(h http.Header) map[string][]string {
	if len(h) == 0 {
		return nil
	}
	out := make(map[string][]string, len(h))
	for k, vs := range h {
		ck := http.CanonicalHeaderKey(k)
		if sensitiveHeaders[ck] {
			out[ck] = []string{"REDACTED"}
			continue
		}
		cp := make([]string, len(vs))
		for i, v := range vs {
			cp[i] = redactText(v)
		}
		out[ck] = cp
	}
	return out
}

func trim(b []byte, n int) string {
	s := string(b)
	if len(s) > n {
		s = s[:n] + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return redactText(s)
}
