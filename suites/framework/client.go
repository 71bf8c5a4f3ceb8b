package framework

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/apiconform/apiconform/reports/result"
)

// Client sends raw HTTP requests to the target and records every exchange.
type Client struct {
	http           *http.Client
	base           string // scheme://host[/prefix] without trailing slash
	requestTimeout time.Duration
	watchTimeout   time.Duration
	userAgent      string

	mu       sync.Mutex
	recorder *[]result.Exchange // exchanges of the running spec; nil outside specs

	// Requests that got no answer (noAnswer): in a row, ever, and the last error.
	silentRun, silentTotal int
	lastSilent             error
}

// observe counts a request's fate for the lost-target check: an answer
// resets the run of silent requests.
func (c *Client) observe(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.silentRun = 0
		return
	}
	if noAnswer(err) {
		c.silentRun++
		c.silentTotal++
		c.lastSilent = err
	}
}

// observeClientGo counts the fate of a request client-go sent (a client
// spec's): one that got no answer marks a failing spec as a harness error,
// as the framework's own requests do, but does not count towards a lost
// target, since client-go gives up on requests by design too (a leader's
// renewal past its deadline) and retries them; an answer shows the target
// is there.
func (c *Client) observeClientGo(err error) {
	switch {
	case err == nil:
		c.mu.Lock()
		c.silentRun = 0
		c.mu.Unlock()
	case noAnswer(err):
		c.noteSilent(err)
	}
}

// noteSilent counts a request of the spec's that got no answer, for the
// harness-error verdict only (not towards a lost target).
func (c *Client) noteSilent(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.silentTotal++
	c.lastSilent = err
}

// lost is non-nil once lostAfter requests in a row got no answer.
func (c *Client) lost() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.silentRun < lostAfter {
		return nil
	}
	return fmt.Errorf("%d requests in a row got no answer, the last: %w", c.silentRun, c.lastSilent)
}

func (c *Client) noAnswerCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.silentTotal
}

func (c *Client) lastNoAnswer() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSilent
}

// Request is one HTTP call. Path is the URL path (it may carry a query);
// Query adds to it.
type Request struct {
	Method  string
	Path    string
	Query   url.Values
	Header  http.Header
	Body    []byte
	Timeout time.Duration // overrides the target's request timeout when > 0
}

// Response is what the target answered, fully read.
type Response struct {
	Code   int
	Header http.Header
	Body   []byte
	Method string
	URL    string
}

// JSON returns the value at a gjson path of the body ("metadata.name",
// "details.causes.0.field"; "@this" for the whole document).
func (r *Response) JSON(path string) gjson.Result { return gjson.GetBytes(r.Body, path) }

// Str is the string at a gjson path of the body ("" when absent).
func (r *Response) Str(path string) string { return r.JSON(path).String() }

// Int is the integer at a gjson path of the body (0 when absent).
func (r *Response) Int(path string) int64 { return r.JSON(path).Int() }

// Exists reports whether the body has a value at a gjson path.
func (r *Response) Exists(path string) bool { return r.JSON(path).Exists() }

// Warnings are the texts of the Warning headers (RFC 7234 form `299 - "text"`).
func (r *Response) Warnings() []string { return parseWarnings(r.Header.Values("Warning")) }

// String summarises the response for failure messages.
func (r *Response) String() string {
	return fmt.Sprintf("%s %s -> %d %s", r.Method, r.URL, r.Code, trim(r.Body, 2048))
}

func parseWarnings(values []string) []string {
	var out []string
	for _, v := range values {
		// 299 - "text" ; the text is a quoted-string with \" escapes.
		if i := strings.Index(v, `"`); i >= 0 && strings.HasSuffix(v, `"`) && len(v) > i+1 {
			text := v[i+1 : len(v)-1]
			text = strings.ReplaceAll(text, `\"`, `"`)
			text = strings.ReplaceAll(text, `\\`, `\`)
			out = append(out, text)
			continue
		}
		out = append(out, v)
	}
	return out
}

// URL builds the absolute URL of a path plus query.
func (c *Client) URL(path string, q url.Values) string {
	u := c.base + path
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		u += sep + q.Encode()
	}
	return u
}

// Do sends the request with a deadline and returns the fully read response.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	timeout := c.requestTimeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := c.newRequest(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		c.observe(err)
		c.record(exchange(hreq, req.Body, nil, nil, "transport error: "+err.Error()))
		return nil, fmt.Errorf("%s %s: %w", hreq.Method, hreq.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	out := &Response{Code: resp.StatusCode, Header: resp.Header, Body: body, Method: hreq.Method, URL: hreq.URL.String()}
	c.observe(err)
	if err != nil {
		c.record(exchange(hreq, req.Body, resp, body, "read body: "+err.Error()))
		return nil, fmt.Errorf("%s %s: read body: %w", hreq.Method, hreq.URL.Path, err)
	}
	c.record(exchange(hreq, req.Body, resp, body, ""))
	return out, nil
}

func (c *Client) newRequest(ctx context.Context, req Request) (*http.Request, error) {
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hreq, err := http.NewRequestWithContext(ctx, method, c.URL(req.Path, req.Query), body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, req.Path, err)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			hreq.Header.Add(k, v)
		}
	}
	if hreq.Header.Get("Accept") == "" {
		hreq.Header.Set("Accept", "application/json")
	}
	if req.Body != nil && hreq.Header.Get("Content-Type") == "" {
		hreq.Header.Set("Content-Type", "application/json")
	}
	if hreq.Header.Get("User-Agent") == "" && c.userAgent != "" {
		hreq.Header.Set("User-Agent", c.userAgent)
	}
	return hreq, nil
}

// startRecording makes the client record into a fresh list and returns it.
func (c *Client) startRecording() *[]result.Exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := &[]result.Exchange{}
	c.recorder = rec
	return rec
}

func (c *Client) stopRecording() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recorder = nil
}

func (c *Client) record(ex result.Exchange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.recorder != nil && len(*c.recorder) < maxRecordedExchanges {
		*c.recorder = append(*c.recorder, ex)
	}
}

// encodeBody turns a request body value into bytes: []byte and string are
// sent as they are, json.RawMessage too, anything else is JSON-encoded.
func encodeBody(body any) ([]byte, error) {
	switch b := body.(type) {
	case nil:
		return nil, nil
	case []byte:
		return b, nil
	case string:
		return []byte(b), nil
	case json.RawMessage:
		return b, nil
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode request body: %w", err)
		}
		return data, nil
	}
}
