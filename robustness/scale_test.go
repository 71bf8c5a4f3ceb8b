package robustness

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestStorageScale measures issue #17's storage goals: 100,000 configmaps
// of 1 KiB in a bbolt store, RSS against the raw data and the time from a
// restart to /readyz. The fill takes minutes (every create is an fsync), so
// it runs only when APICONFORM_ROBUSTNESS_SCALE is set (make robustness-scale);
// the figures are reported, not asserted. APICONFORM_ROBUSTNESS_SCALE_DIR
// keeps the filled data directory there, and a later run with the same
// directory measures only the restart.
func TestStorageScale(t *testing.T) {
	n, ok := scaleObjects()
	if !ok {
		t.Skip("runs with APICONFORM_ROBUSTNESS_SCALE=1, or =N for N objects (make robustness-scale)")
	}
	_, bin := suiteBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := DefaultScale
	cfg.Objects = n
	dir := os.Getenv("APICONFORM_ROBUSTNESS_SCALE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	f, err := Scale(ctx, bin, dir, cfg)
	t.Logf("storage scale: %s", f)
	if err != nil {
		t.Fatal(err)
	}
}
