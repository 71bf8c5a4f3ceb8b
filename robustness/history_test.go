package robustness

import (
	"context"
	"testing"

	"github.com/apiconform/apiconform/refserver"
)

func TestConcurrentHistory(t *testing.T) {
	requireSuite(t)
	ctx := context.Background()
	srv, err := refserver.StartEmbedded(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	f, err := History(ctx, srv.URL(), srv.Token(), "history", DefaultHistory)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("concurrent writers and watchers: %s", f)
}
