package robustness

import (
	"context"
	"testing"
	"time"
)

func TestDamagedDataFile(t *testing.T) {
	requireSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin, err := Binary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := Damage(ctx, bin, t.TempDir(), DamageCases)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged data files: %d cases, each with its documented outcome", f.Cases)
}
