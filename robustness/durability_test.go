package robustness

import (
	"testing"
)

func TestKill9Durability(t *testing.T) {
	ctx, bin := suiteBinary(t)
	f, err := Durability(ctx, bin, t.TempDir(), DefaultDurability)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("durability: %s", f)
}
