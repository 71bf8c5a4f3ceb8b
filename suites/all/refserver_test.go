package all_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/suites/framework"
)

// startReferenceServer starts the embedded reference server on 127.0.0.1:0
// (plain HTTP, admin token, admin endpoints on).
func startReferenceServer(t *testing.T) (framework.Target, func(), error) {
	t.Helper()
	srv, err := refserver.StartEmbedded(context.Background())
	if err != nil {
		return framework.Target{}, nil, fmt.Errorf("the embedded reference server did not start: %w", err)
	}
	url := srv.URL()
	if url == "" {
		url = srv.InsecureURL()
	}
	return framework.Target{Server: url, Token: srv.Token(), Name: "refserver"}, func() { _ = srv.Close() }, nil
}
