package framework

import (
	"fmt"
	"net/http"

	"github.com/apiconform/apiconform/reports/redact"
	"github.com/apiconform/apiconform/reports/result"
)

const (
	maxRecordedBody      = 4096
	maxRecordedExchanges = 200
	// redactMargin is how far past the cut a body is still redacted, so a
	// secret that straddles the cut is recognised whole.
	redactMargin = 1024
)

// exchange records one request and, when there is one, its answer. This is
// the recording boundary: the exchange is redacted here, once
// (result.Exchange.Redacted), before anything keeps it.
func exchange(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte, note string) result.Exchange {
	x := result.Exchange{Method: req.Method, URL: req.URL.String(), RequestHeaders: result.HeadersOf(req.Header),
		RequestBody: string(head(reqBody)), ResponseBody: string(head(respBody)), Note: note}
	if resp != nil {
		x.Status, x.ResponseHeaders = resp.StatusCode, result.HeadersOf(resp.Header)
	}
	x = x.Redacted()
	x.RequestBody = clip(x.RequestBody, maxRecordedBody, len(reqBody))
	x.ResponseBody = clip(x.ResponseBody, maxRecordedBody, len(respBody))
	return x
}

// head is the part of a body worth redacting: what is kept plus the margin.
func head(b []byte) []byte { return b[:min(len(b), maxRecordedBody+redactMargin)] }

// trim is b as redacted text of at most about n bytes, for messages.
func trim(b []byte, n int) string {
	return clip(redact.String(string(b[:min(len(b), n+redactMargin)])), n, len(b))
}

// clip cuts s to n bytes, saying how long the original (total bytes) was.
func clip(s string, n, total int) string {
	if len(s) > n {
		return s[:n] + fmt.Sprintf("... (%d bytes)", total)
	}
	return s
}
