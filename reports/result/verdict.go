package result

import (
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Role is an exchange's part in a spec.
type Role string

const (
	// Decisive marks the exchange whose response broke the rule.
	Decisive Role = "decisive"
	// Setup marks exchanges made before the spec's body (its namespace, fixtures).
	Setup Role = "setup"
	// Teardown marks exchanges made after the body (cleanup).
	Teardown Role = "teardown"
)

// VerdictEntry names the Ginkgo report entry that carries a failed spec's
// verdict: one line in the requirement's terms, written by the assertion
// that failed (suites/framework). Its value is the line itself.
const VerdictEntry = "apiconform.verdict"

// verdictFromEntries is the last verdict the spec recorded ("" when none).
func verdictFromEntries(entries types.ReportEntries) string {
	v := ""
	for _, e := range entries {
		if e.Name == VerdictEntry {
			if s, ok := e.GetRawValue().(string); ok {
				v = strings.TrimSpace(s)
			}
		}
	}
	return v
}
