package robustness

import (
	"os"
	"testing"
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

func TestMain(m *testing.M) {
	RunChildIfAsked()
	os.Exit(m.Run())
}
