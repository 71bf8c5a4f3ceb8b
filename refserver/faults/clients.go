package faults

import "net/http"

// Deviations of the clients area (what client-go, kubectl and
// controller-runtime rely on: discovery, OpenAPI, protobuf, informers, the
// pager, authorization reviews).

// Fault names.
const ()

var clientFaults = map[string]fault{}

// rewriteClientsRequest applies this file's request-side faults.
func (m *middleware) rewriteClientsRequest(r *http.Request, c *call) *http.Request { return r }

// clientsRewriteResponse says whether this file's faults must see the
// buffered answer to r.
func (m *middleware) clientsRewriteResponse(r *http.Request, c call) bool { return false }

// afterClients rewrites a buffered answer for this file's faults.
func (m *middleware) afterClients(r *http.Request, c call, rec *recorder) {}
