package result

import (
	"fmt"
	"strings"

	"github.com/onsi/ginkgo/v2/types"
)

// Observation is what a spec saw of a behaviour the documents leave open
// (which of the allowed answers the target gave, how a client converged),
// recorded whatever the outcome: the report says what was seen, not only
// that the spec passed.
type Observation struct {
	Name string `json:"name"` // what was observed ("410", "Retry-After")
	Text string `json:"text"`
}

// observationEntryPrefix starts the name of a Ginkgo report entry that
// carries an Observation; the rest of the name is the observation's. Ginkgo
// prints the entry as it is ("observed: 410"), so its own output reads the
// same as the reports.
const observationEntryPrefix = "observed: "

// ObservationEntryName is the report entry name for an observation called name.
func ObservationEntryName(name string) string { return observationEntryPrefix + name }

// observationsFromEntries collects the spec's observations in the order it
// recorded them.
func observationsFromEntries(entries types.ReportEntries) []Observation {
	var out []Observation
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name, observationEntryPrefix)
		if !ok {
			continue
		}
		text, isString := e.GetRawValue().(string)
		if !isString {
			text = fmt.Sprint(e.GetRawValue())
		}
		out = append(out, Observation{Name: name, Text: text})
	}
	return out
}
