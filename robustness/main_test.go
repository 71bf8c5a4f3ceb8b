package robustness

import (
	"context"
	"os"
	"testing"
	"time"
)

// suiteEnv runs the suite; `make robustness` sets it. Without it the tests
// skip, so `go test ./...` stays quick.
const suiteEnv = "APICONFORM_ROBUSTNESS"

func requireSuite(t *testing.T) {
	t.Helper()
	if os.Getenv(suiteEnv) == "" {
		t.Skip("the robustness suite runs with " + suiteEnv + "=1 (make robustness)")
	}
}

// suiteBinary skips unless the suite was asked for, and builds the
// apiconform-refserver binary the child servers run; ctx bounds the whole test.
func suiteBinary(t *testing.T) (ctx context.Context, bin string) {
	t.Helper()
	requireSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	bin, err := Binary(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ctx, bin
}

func TestMain(m *testing.M) {
	RunChildIfAsked()
	os.Exit(m.Run())
}
