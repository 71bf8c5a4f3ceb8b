package faults

import "net/http"

// Deviations of the resources and deletion areas (API concepts: names,
// verbs, URIs, representations; API conventions: labels, status codes,
// validation; resource deletion).

// Fault names.
const ()

var resourceFaults = map[string]fault{}

// rewriteResourcesRequest applies this file's request-side faults.
func (m *middleware) rewriteResourcesRequest(r *http.Request, c *call) *http.Request { return r }

// resourcesRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) resourcesRewriteResponse(r *http.Request, c call) bool { return false }

// afterResources rewrites a buffered answer for this file's faults.
func (m *middleware) afterResources(r *http.Request, c call, rec *recorder) {}
