package framework

import "net/http"

// HTTPClient returns the target's authenticated HTTP client and base URL, for
// tools that talk to the target outside the specs (the CLI's pre-flight
// check, the load generator).
func (t Target) HTTPClient() (*http.Client, string, error) { return t.httpClient() }
