package robustness

import (
	"context"
	"testing"
	"time"
)

func TestKill9Durability(t *testing.T) {
	requireSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := Binary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := Durability(ctx, bin, t.TempDir(), DefaultDurability)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("durability: %s", f)
}
