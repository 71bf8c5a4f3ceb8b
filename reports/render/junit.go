package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
)

// JUnit XML as read by CI systems (Jenkins, GitLab, GitHub test reporters).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
	SystemErr  string          `xml:"system-err,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitFailure   `xml:"failure,omitempty"`
	Error      *junitFailure   `xml:"error,omitempty"`
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func seconds(d result.Duration) string { return fmt.Sprintf("%.3f", d.Std().Seconds()) }

// WriteJUnit writes one <testsuite> per result and one <testcase> per spec.
// A testcase's name starts with its requirement IDs and its classname is the
// area; a failure's message is the one-line verdict (the headline CI
// systems show) and its text has the failure, the decisive exchange first
// and the setup/teardown requests listed last. Harness errors are <error>;
// skipped, not-applicable and not-run specs are <skipped> with the reason.
// What a spec recorded seeing is its <system-out>, a line per observation.
// An incomplete run says so in a property and in the suite's system-err.
func WriteJUnit(w io.Writer, rep *reports.Report) error {
	doc := junitSuites{Name: "apiconform"}
	var total result.Duration
	for ci, r := range rep.Results {
		col := rep.Columns[ci]
		s := junitSuite{Name: col.Label, Time: seconds(r.Duration)}
		if !r.StartedAt.IsZero() {
			s.Timestamp = r.StartedAt.UTC().Format("2006-01-02T15:04:05")
		}
		s.Properties = append(s.Properties,
			junitProperty{Name: "target", Value: r.Target.Name},
			junitProperty{Name: "server", Value: r.Target.Server},
			junitProperty{Name: "version", Value: r.Target.Version},
			junitProperty{Name: "mustConformance", Value: col.Must.PercentText()},
			junitProperty{Name: "schemaVersion", Value: r.SchemaVersion},
		)
		if h := col.Incomplete.Headline(); h != "" {
			s.Properties = append(s.Properties, junitProperty{Name: "incomplete", Value: h})
			s.SystemErr = h
		}
		for _, name := range sortedKeys(r.Target.Capabilities) {
			s.Properties = append(s.Properties, junitProperty{Name: "capability." + name, Value: fmt.Sprint(r.Target.Capabilities[name])})
		}
		for _, sp := range r.Specs {
			c := junitCase{Name: sp.Name, Classname: sp.Area, Time: seconds(sp.Duration)}
			if len(sp.Requirements) > 0 {
				c.Name = strings.Join(sp.Requirements, ", ") + ": " + sp.Name
			}
			for _, id := range sp.Requirements {
				c.Properties = append(c.Properties, junitProperty{Name: "requirement", Value: id})
			}
			switch sp.Outcome {
			case result.Failed:
				s.Failures++
				c.Failure = junitFailureFor(sp, "failed")
			case result.Errored:
				s.Errors++
				c.Error = junitFailureFor(sp, "error")
			case result.Skipped, result.NotApplicable, result.NotRun:
				s.Skipped++
				c.Skipped = &junitSkipped{Message: skipMessage(sp)}
			}
			c.SystemOut = junitObserved(sp)
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(r.Specs)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
		doc.Errors += s.Errors
		doc.Skipped += s.Skipped
		total += r.Duration
		doc.Suites = append(doc.Suites, s)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// junitObserved is a spec's observations, one "name: text" line each.
func junitObserved(sp result.SpecResult) string {
	var b strings.Builder
	for _, o := range sp.Observations {
		b.WriteString(observationLine(o, maxShownObservation) + "\n")
	}
	return b.String()
}

// skipMessage is the reason, prefixed for the outcomes JUnit has no word for.
func skipMessage(sp result.SpecResult) string {
	switch sp.Outcome {
	case result.NotApplicable:
		return "not applicable: " + sp.SkipReason
	case result.NotRun:
		return "not run: " + sp.SkipReason
	}
	return sp.SkipReason
}

func junitFailureFor(sp result.SpecResult, typ string) *junitFailure {
	f := &junitFailure{Type: typ, Message: verdictLine(sp)}
	var b strings.Builder
	b.WriteString(f.Message + "\n")
	if sp.Failure != nil {
		if sp.Failure.Location != "" {
			fmt.Fprintf(&b, "at %s\n", sp.Failure.Location)
		}
		b.WriteString("\n" + strings.TrimSpace(sp.Failure.Message) + "\n")
	}
	main, aside := exchangeGroups(sp.Exchanges)
	keep := keepsManagedFields(sp)
	for i, x := range main {
		fmt.Fprintf(&b, "\n--- HTTP exchange %d (%s) ---\n", i+1, roleLabel(x.Role))
		limit := maxShownBody
		if x.Role != result.Decisive {
			limit = maxStepBody
		}
		b.WriteString(exchangeText(x, keep, limit))
	}
	if len(aside) > 0 {
		b.WriteString("\n--- setup and teardown requests ---\n")
		for _, x := range aside {
			fmt.Fprintf(&b, "%s: %s\n", roleLabel(x.Role), exchangeHead(x))
		}
	}
	f.Text = b.String()
	return f
}
