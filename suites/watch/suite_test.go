package watch_test

import (
	"testing"

	"github.com/apiconform/apiconform/suites/runner"
	_ "github.com/apiconform/apiconform/suites/watch"
)

// TestSpecs runs this area's specs against APICONFORM_KUBECONFIG or
// APICONFORM_SERVER, or enumerates them when neither is set.
func TestSpecs(t *testing.T) { runner.TestArea(t, "watch") }
