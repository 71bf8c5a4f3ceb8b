package robustness

import (
	"context"
	"testing"
	"time"
)

func TestBurstOnOpenServer(t *testing.T) {
	requireSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := Binary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := Burst(ctx, bin, DefaultBurst)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("burst on an open server: %s", f)
}
