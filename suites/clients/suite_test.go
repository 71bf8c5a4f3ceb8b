package clients_test

import (
	"testing"

	_ "github.com/apiconform/apiconform/suites/clients"
	"github.com/apiconform/apiconform/suites/runner"
)

// TestSpecs runs this area's specs against APICONFORM_KUBECONFIG or
// APICONFORM_SERVER, or enumerates them when neither is set.
func TestSpecs(t *testing.T) { runner.TestArea(t, "clients") }
