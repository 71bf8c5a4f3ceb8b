package faults

import "net/http"

// Deviations of the watch and compatibility areas (event shape and order, bookmarks, 410, Frobber versions).

// Fault names.
const ()

var streamFaults = map[string]fault{}

// rewriteStreamsRequest applies this file's request-side faults.
func (m *middleware) rewriteStreamsRequest(r *http.Request, c *call) *http.Request { return r }

// streamsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) streamsRewriteResponse(r *http.Request, c call) bool { return false }

// afterStreams rewrites a buffered answer for this file's faults.
func (m *middleware) afterStreams(r *http.Request, c call, rec *recorder) {}
