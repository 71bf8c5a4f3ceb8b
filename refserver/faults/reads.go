package faults

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Deviations of the resourceVersion and paging areas (reads at a revision, the documented tables, chunked lists).
//
// Request-side faults edit the query; answer-side faults rewrite the buffered
// answer, some after asking the API handler again (the state at another
// revision, the current resourceVersion).

// Fault names.
const (
	LimitIgnored              = "limit-ignored"
	ContinueRepeatsLastItem   = "continue-repeats-last-item"
	ContinueOnLastPage        = "continue-on-last-page"
	RemainingCountZeroOnLast  = "remaining-count-zero-on-last-page"
	ContinuedPageCurrentRV    = "continued-page-current-rv"
	MalformedContinue500      = "malformed-continue-500"
	InconsistentTokenRestarts = "inconsistent-token-restarts"
	CompactedAnswers500       = "compacted-answers-500"
	LaggingCacheReads         = "lagging-cache-reads"
	NotOlderThanUnwaited      = "not-older-than-unwaited"
	RV0ReadAsRevision         = "rv0-read-as-revision"
	ListOptionsUnvalidated    = "list-options-unvalidated"
	FutureRVServed            = "future-rv-served"
	ResourceVersionHex        = "resource-version-hex"
)

var readFaults = map[string]fault{
	LimitIgnored:              {SeamHTTP, "lists ignore limit: the whole collection in one answer, no continue token"},
	ContinueRepeatsLastItem:   {SeamHTTP, "a continue token starts at the page's last key instead of after it: that item is listed twice"},
	ContinueOnLastPage:        {SeamHTTP, "a limited list carries a continue token on its last page too (the page after it is empty)"},
	RemainingCountZeroOnLast:  {SeamHTTP, "complete lists and last pages carry remainingItemCount: 0 instead of omitting it"},
	ContinuedPageCurrentRV:    {SeamHTTP, "continued pages carry the server's current resourceVersion instead of the snapshot's"},
	MalformedContinue500:      {SeamHTTP, "a continue token the server cannot decode answers 500 InternalError instead of a client error"},
	InconsistentTokenRestarts: {SeamHTTP, "the continue token offered with a 410 for an expired token lists the collection from its start"},
	CompactedAnswers500:       {SeamHTTP, "reads of compacted history answer 500 \"mvcc: required revision has been compacted\" instead of 410 Gone (as on kine)"},
	LaggingCacheReads:         {SeamHTTP, "gets and lists without resourceVersion are served from a cache one write behind (no consistent read)"},
	NotOlderThanUnwaited:      {SeamHTTP, "gets and lists not older than resourceVersion N are served from a cache still at N-1, without waiting for it"},
	RV0ReadAsRevision:         {SeamHTTP, "resourceVersion=0 is read as revision 0, long compacted: 410 Expired instead of any state"},
	ListOptionsUnvalidated:    {SeamHTTP, "resourceVersionMatch without a resourceVersion (or with 0 for Exact) and resourceVersion with continue are ignored instead of refused"},
	FutureRVServed:            {SeamHTTP, "a read at a resourceVersion the server has not reached is served at once with the latest state"},
	ResourceVersionHex:        {SeamHTTP, "resourceVersions of objects and lists are 16-digit zero-padded hex, not decimal integers"},
}

// rewriteReadsRequest applies this file's request-side faults.
func (m *middleware) rewriteReadsRequest(r *http.Request, c *call) *http.Request {
	q := c.q
	if c.list {
		if m.has(LimitIgnored) && q.Get("continue") == "" {
			q.Del("limit")
		}
		if m.has(ListOptionsUnvalidated) {
			rv := q.Get("resourceVersion")
			if q.Get("resourceVersionMatch") != "" && (rv == "" || rv == "0") {
				q.Del("resourceVersionMatch")
			}
			if q.Get("continue") != "" && rv != "" && rv != "0" {
				q.Del("resourceVersion")
			}
		}
	}
	if m.has(ResourceVersionHex) {
		if rv := q.Get("resourceVersion"); rv != "" {
			q.Set("resourceVersion", fromHexRV(rv))
		}
		if r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
			editBody(r, func(o map[string]any) {
				if md, ok := o["metadata"].(map[string]any); ok {
					if rv, ok := md["resourceVersion"].(string); ok && rv != "" {
						md["resourceVersion"] = fromHexRV(rv)
					}
				}
			})
		}
	}
	r.URL.RawQuery = q.Encode()
	r.RequestURI = r.URL.RequestURI()
	return r
}

// readsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) readsRewriteResponse(r *http.Request, c call) bool {
	get := r.Method == http.MethodGet && !c.watch
	switch {
	case get && (m.has(CompactedAnswers500) || m.has(LaggingCacheReads) || m.has(NotOlderThanUnwaited) || m.has(RV0ReadAsRevision) ||
		m.has(FutureRVServed) || m.has(ResourceVersionHex)):
		return true
	case c.list && (m.has(ContinueRepeatsLastItem) || m.has(ContinueOnLastPage) || m.has(RemainingCountZeroOnLast) ||
		m.has(ContinuedPageCurrentRV) || m.has(MalformedContinue500) || m.has(InconsistentTokenRestarts)):
		return true
	case m.has(ResourceVersionHex):
		return true
	}
	return false
}

// afterReads rewrites a buffered answer for this file's faults.
func (m *middleware) afterReads(r *http.Request, c call, rec *recorder) {
	if !strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") {
		return
	}
	get := r.Method == http.MethodGet && !c.watch
	q := c.q
	rv := q.Get("resourceVersion")
	switch {
	case m.has(RV0ReadAsRevision) && get && rv == "0" && q.Get("continue") == "":
		writeStatus(rec, http.StatusGone, "Expired", "The resourceVersion for the provided list is too old.", nil)
	case m.has(FutureRVServed) && get && rec.code == http.StatusGatewayTimeout &&
		bytes.Contains(rec.body.Bytes(), []byte("Too large resource version")):
		q := cloneReadsQuery(q)
		q.Del("resourceVersion")
		q.Del("resourceVersionMatch")
		*rec = *m.ask(r, r.URL.Path, q)
	case m.has(CompactedAnswers500) && get && rec.code == http.StatusGone:
		writeStatus(rec, http.StatusInternalServerError, "InternalError",
			"Internal error occurred: etcdserver: mvcc: required revision has been compacted", nil)
	case (m.has(LaggingCacheReads) && rv == "" || m.has(NotOlderThanUnwaited) && rv != "" && rv != "0") &&
		get && rec.code == http.StatusOK && q.Get("continue") == "" && q.Get("resourceVersionMatch") != "Exact":
		m.lag(r, c, rec)
	case m.has(MalformedContinue500) && c.list && q.Get("continue") != "" && rec.code == http.StatusBadRequest &&
		bytes.Contains(rec.body.Bytes(), []byte("invalid continue token")):
		writeStatus(rec, http.StatusInternalServerError, "InternalError", "Internal error occurred: invalid continue token", nil)
	case m.has(InconsistentTokenRestarts) && c.list && rec.code == http.StatusGone:
		editObjectAnswer(rec, func(o map[string]any) {
			if md, ok := o["metadata"].(map[string]any); ok {
				if t, ok := md["continue"].(string); ok && t != "" {
					md["continue"] = editToken(t, func(tok map[string]any) { tok["start"] = "\x00" })
				}
			}
		})
	case c.list && rec.code == http.StatusOK:
		m.afterReadsList(r, c, rec)
	}
	if m.has(ResourceVersionHex) {
		editObjectAnswer(rec, func(o map[string]any) {
			toHexRV(o)
			if items, ok := o["items"].([]any); ok {
				for _, it := range items {
					if io, ok := it.(map[string]any); ok {
						toHexRV(io)
					}
				}
			}
		})
	}
}

// afterReadsList rewrites a served page.
func (m *middleware) afterReadsList(r *http.Request, c call, rec *recorder) {
	var current string
	if m.has(ContinuedPageCurrentRV) && c.q.Get("continue") != "" {
		current = m.askResourceVersion(r, r.URL.Path, url.Values{"limit": {"1"}})
	}
	editObjectAnswer(rec, func(o map[string]any) {
		md, ok := o["metadata"].(map[string]any)
		if !ok {
			return
		}
		token, _ := md["continue"].(string)
		switch {
		case m.has(ContinueRepeatsLastItem) && token != "":
			md["continue"] = editToken(token, func(t map[string]any) {
				if s, ok := t["start"].(string); ok {
					t["start"] = strings.TrimSuffix(s, "\x00")
				}
			})
		case m.has(ContinueOnLastPage) && token == "" && c.q.Get("limit") != "" && c.q.Get("limit") != "0":
			items, _ := o["items"].([]any)
			if len(items) == 0 {
				return
			}
			last, _ := items[len(items)-1].(map[string]any)
			imd, _ := last["metadata"].(map[string]any)
			name, _ := imd["name"].(string)
			rev, err := strconv.ParseInt(fmt.Sprint(md["resourceVersion"]), 10, 64)
			if name == "" || err != nil {
				return
			}
			t, _ := json.Marshal(map[string]any{"v": "meta.k8s.io/v1", "rv": rev, "start": name + "\x00"})
			md["continue"] = base64.RawURLEncoding.EncodeToString(t)
		case m.has(RemainingCountZeroOnLast) && token == "":
			md["remainingItemCount"] = 0
		}
		if current != "" {
			md["resourceVersion"] = current
		}
	})
}

// lag replaces a get or list answer with the state one revision before the
// one it should show: before the newest write it shows (resourceVersion
// unset) or before the requested one.
func (m *middleware) lag(r *http.Request, c call, rec *recorder) {
	var o map[string]any
	if json.Unmarshal(rec.body.Bytes(), &o) != nil {
		return
	}
	var at int64
	if rv := c.q.Get("resourceVersion"); rv != "" {
		if c.list && c.q.Get("limit") != "" && c.q.Get("resourceVersionMatch") == "" {
			return // limit with a resourceVersion is an Exact read
		}
		at, _ = strconv.ParseInt(rv, 10, 64)
	} else if c.list {
		items, _ := o["items"].([]any)
		for _, it := range items {
			if io, ok := it.(map[string]any); ok {
				at = max(at, rvOfReads(io))
			}
		}
	} else {
		at = rvOfReads(o)
	}
	if at <= 1 {
		return
	}
	q := cloneReadsQuery(c.q)
	q.Set("resourceVersion", strconv.FormatInt(at-1, 10))
	q.Set("resourceVersionMatch", "Exact")
	if c.list {
		if old := m.ask(r, r.URL.Path, q); old.code == http.StatusOK {
			*rec = *old
		}
		return
	}
	if c.sub != "" {
		return
	}
	q.Set("fieldSelector", "metadata.name="+c.name)
	old := m.ask(r, strings.TrimSuffix(strings.TrimSuffix(r.URL.Path, "/"), "/"+c.name), q)
	var l struct {
		Items []map[string]any `json:"items"`
	}
	if old.code != http.StatusOK || json.Unmarshal(old.body.Bytes(), &l) != nil {
		return
	}
	if len(l.Items) == 0 {
		writeStatus(rec, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", c.resource, c.name), nil)
		return
	}
	it := l.Items[0]
	it["kind"], it["apiVersion"] = o["kind"], o["apiVersion"]
	b, err := json.Marshal(it)
	if err != nil {
		return
	}
	rec.body.Reset()
	rec.body.Write(b)
	rec.body.WriteByte('\n')
}

// ask sends a GET of path?q to the API handler with r's credentials.
func (m *middleware) ask(r *http.Request, path string, q url.Values) *recorder {
	u := *r.URL
	u.Path, u.RawPath, u.RawQuery = path, "", q.Encode()
	g, err := http.NewRequestWithContext(context.WithoutCancel(r.Context()), http.MethodGet, u.String(), nil)
	out := newRecorder()
	if err != nil {
		out.code = http.StatusInternalServerError
		return out
	}
	g.Header = r.Header.Clone()
	g.Header.Del("Content-Type")
	g.Header.Del("Content-Length")
	g.Header.Set("Accept", "application/json")
	g.RemoteAddr = r.RemoteAddr
	m.next.ServeHTTP(out, g)
	return out
}

// askResourceVersion is the metadata.resourceVersion of the handler's answer
// to a GET of path?q ("" when it has none).
func (m *middleware) askResourceVersion(r *http.Request, path string, q url.Values) string {
	now := m.ask(r, path, q)
	if now.code != http.StatusOK {
		return ""
	}
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(now.body.Bytes(), &o)
	return o.Metadata.ResourceVersion
}

func cloneReadsQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

func rvOfReads(o map[string]any) int64 {
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["resourceVersion"].(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// editToken rewrites the JSON inside a continue token (unchanged when it is not one).
func editToken(t string, edit func(map[string]any)) string {
	raw, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil {
		return t
	}
	b, ok := editJSONObject(raw, edit)
	if !ok {
		return t
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// toHexRV rewrites o's metadata.resourceVersion from decimal to hex.
func toHexRV(o map[string]any) {
	md, _ := o["metadata"].(map[string]any)
	if s, ok := md["resourceVersion"].(string); ok {
		if n, err := strconv.ParseUint(s, 10, 64); err == nil {
			md["resourceVersion"] = fmt.Sprintf("%016x", n)
		}
	}
}

// fromHexRV reads a resourceVersion this server handed out (decimal input is kept).
func fromHexRV(s string) string {
	if len(s) != 16 {
		return s
	}
	n, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return s
	}
	return strconv.FormatUint(n, 10)
}
