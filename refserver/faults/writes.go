package faults

import "net/http"

// Deviations of the conventions, dry-run, field-validation and apply areas (status codes, metadata, patches, Tables, server-side apply).

// Fault names.
const ()

var writeFaults = map[string]fault{}

// rewriteWritesRequest applies this file's request-side faults.
func (m *middleware) rewriteWritesRequest(r *http.Request, c *call) *http.Request { return r }

// writesRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) writesRewriteResponse(r *http.Request, c call) bool { return false }

// afterWrites rewrites a buffered answer for this file's faults.
func (m *middleware) afterWrites(r *http.Request, c call, rec *recorder) {}
