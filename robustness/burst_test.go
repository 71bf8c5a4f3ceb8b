package robustness

import (
	"testing"
)

func TestBurstOnOpenServer(t *testing.T) {
	ctx, bin := suiteBinary(t)
	f, err := Burst(ctx, bin, DefaultBurst)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("burst on an open server: %s", f)
}
