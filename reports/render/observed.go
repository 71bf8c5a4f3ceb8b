package render

import (
	"github.com/apiconform/apiconform/reports/result"
)

// What the specs saw: each format lists reports.Report's Observed after the
// skipped specs, and a failure's details carry its spec's observations.

// observedIntro says what the section is, in every format that has it.
const observedIntro = "What the specs recorded seeing: where the documents allow more than one answer, " +
	"which one the target gave, and what the clients did on the way. The outcomes are judged already; " +
	"these are the records behind them."

// maxShownObservation bounds an observation's text in Markdown and JUnit;
// result.json and the HTML page keep all of it.
const maxShownObservation = maxShownBody

// observationLine is "name: text", the text bounded to limit runes (0: whole).
func observationLine(o result.Observation, limit int) string {
	text := o.Text
	if limit > 0 {
		text = clip(text, limit)
	}
	return o.Name + ": " + text
}
