package robustness

import (
	"testing"
)

func TestDamagedDataFile(t *testing.T) {
	ctx, bin := suiteBinary(t)
	f, err := Damage(ctx, bin, t.TempDir(), DamageCases)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged data files: %d cases, each with its documented outcome", f.Cases)
}
