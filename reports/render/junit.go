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
	Skipped    *junitSkipped   `xml:"skipped,omitempty"`
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

// WriteJUnit writes one <testsuite> per result and one <testcase> per spec:
// classname is the area, requirement IDs are properties, the failure text
// carries the message, location and HTTP exchanges.
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
		for _, name := range sortedKeys(r.Target.Capabilities) {
			s.Properties = append(s.Properties, junitProperty{Name: "capability." + name, Value: fmt.Sprint(r.Target.Capabilities[name])})
		}
		for _, sp := range r.Specs {
			c := junitCase{Name: sp.Name, Classname: sp.Area, Time: seconds(sp.Duration)}
			for _, id := range sp.Requirements {
				c.Properties = append(c.Properties, junitProperty{Name: "requirement", Value: id})
			}
			switch sp.Outcome {
			case result.Failed:
				s.Failures++
				c.Failure = junitFailureFor(sp)
			case result.Skipped:
				s.Skipped++
				c.Skipped = &junitSkipped{Message: sp.SkipReason}
			}
			s.Cases = append(s.Cases, c)
		}
		s.Tests = len(r.Specs)
		doc.Tests += s.Tests
		doc.Failures += s.Failures
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

func junitFailureFor(sp result.SpecResult) *junitFailure {
	f := &junitFailure{Type: "failed"}
	var b strings.Builder
	if sp.Failure != nil {
		f.Message = firstLine(sp.Failure.Message)
		b.WriteString(sp.Failure.Message)
		b.WriteString("\n")
		if sp.Failure.Location != "" {
			fmt.Fprintf(&b, "at %s\n", sp.Failure.Location)
		}
	}
	for i, x := range sp.Exchanges {
		fmt.Fprintf(&b, "\n--- HTTP exchange %d ---\n", i+1)
		b.WriteString(exchangeText(x))
	}
	f.Text = b.String()
	return f
}
