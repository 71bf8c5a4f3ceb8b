package faults

import "net/http"

// Deviations of the resourceVersion and paging areas (reads at a revision, the documented tables, chunked lists).

// Fault names.
const ()

var readFaults = map[string]fault{}

// rewriteReadsRequest applies this file's request-side faults.
func (m *middleware) rewriteReadsRequest(r *http.Request, c *call) *http.Request { return r }

// readsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) readsRewriteResponse(r *http.Request, c call) bool { return false }

// afterReads rewrites a buffered answer for this file's faults.
func (m *middleware) afterReads(r *http.Request, c call, rec *recorder) {}
