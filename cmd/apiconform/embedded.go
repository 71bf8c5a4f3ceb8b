package main

import (
	"context"
	"fmt"
	"io"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/suites/framework"
)

// startEmbedded starts the reference server on 127.0.0.1 (plain HTTP, a
// fresh admin token, admin endpoints on) for a command given no target.
func startEmbedded(ctx context.Context, log io.Writer) (framework.Target, func(), error) {
	s, err := refserver.StartEmbedded(ctx)
	if err != nil {
		return framework.Target{}, func() {}, fmt.Errorf("start the embedded reference server: %w", err)
	}
	fmt.Fprintf(log, "apiconform: no target given; testing the embedded reference server at %s\n", s.URL())
	return framework.Target{Server: s.URL(), Token: s.Token(), Name: "refserver"}, func() { _ = s.Close() }, nil
}
