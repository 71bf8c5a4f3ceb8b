package render

import (
	"bytes"
	"encoding/xml"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/redact/redacttest"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/reports/sample"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current renderers")

func singleReport() *reports.Report { return reports.Build(sample.Catalogue(), sample.RefServer()) }

func multiReport() *reports.Report {
	return reports.Build(sample.Catalogue(), sample.RefServer(), sample.KubeAPIServer())
}

// goldenReports are the runs every format has a golden file for: a failing
// run, one with a harness error and a not-applicable requirement, an
// interrupted one, and a comparison of two targets.
func goldenReports() map[string]*reports.Report {
	return map[string]*reports.Report{
		"single":     singleReport(),
		"error":      reports.Build(sample.Catalogue(), sample.Erroring()),
		"incomplete": reports.Build(sample.Catalogue(), sample.Incomplete()),
		"compare":    multiReport(),
	}
}

func render(t *testing.T, f Format, rep *reports.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	if f == Terminal {
		err = WriteTerminal(&buf, rep, false)
	} else {
		err = Render(&buf, f, rep)
	}
	if err != nil {
		t.Fatalf("render %s: %v", f, err)
	}
	return buf.Bytes()
}

var goldenExt = map[Format]string{Terminal: "txt", Markdown: "md", HTML: "html", JUnit: "xml", JSON: "json", Summary: "summary.md"}

func TestGolden(t *testing.T) {
	for name, rep := range goldenReports() {
		for _, f := range append(Formats(), "verbose") {
			t.Run(name+"/"+string(f), func(t *testing.T) {
				var got []byte
				ext := goldenExt[f]
				if f == "verbose" {
					var buf bytes.Buffer
					if err := WriteTerminalWith(&buf, rep, TerminalOptions{Verbose: true, Reports: []string{"out/report.html"}}); err != nil {
						t.Fatal(err)
					}
					got, ext = buf.Bytes(), "verbose.txt"
				} else {
					got = render(t, f, rep)
				}
				path := filepath.Join("testdata", name+"."+ext+".golden")
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./reports/render -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from golden; run `go test ./reports/render -update` and review the diff.\n%s", path, firstDiff(string(want), string(got)))
				}
			})
		}
	}
}

// firstDiff shows the first differing line to keep failures readable.
func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return "line " + strconv.Itoa(i+1) + ":\n want: " + w + "\n  got: " + g
		}
	}
	return "(only trailing bytes differ)"
}

func TestTerminalColour(t *testing.T) {
	var plain, colour bytes.Buffer
	if err := WriteTerminal(&plain, multiReport(), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteTerminal(&colour, multiReport(), true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain output contains ANSI escapes")
	}
	if !strings.Contains(colour.String(), ansiRed+"") {
		t.Error("coloured output has no red")
	}
	// A bytes.Buffer is not a terminal.
	if ColorFor(&plain) {
		t.Error("ColorFor(bytes.Buffer) = true")
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"terminal", "md", "markdown", "HTML", "junit", "json"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("ParseFormat(%q): %v", s, err)
		}
	}
	if _, err := ParseFormat("pdf"); err == nil || !strings.Contains(err.Error(), "terminal, md, html, junit, json, summary") {
		t.Errorf("ParseFormat(pdf) = %v", err)
	}
}

// The JUnit output parsed back with encoding/xml into a minimal, independent schema.
type parsedSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Fails   int      `xml:"failures,attr"`
	Errors  int      `xml:"errors,attr"`
	Skips   int      `xml:"skipped,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Tests int    `xml:"tests,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Time      string `xml:"time,attr"`
			Props     []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitParses(t *testing.T) {
	for name, rep := range goldenReports() {
		t.Run(name, func(t *testing.T) { checkJUnit(t, rep) })
	}
}

func checkJUnit(t *testing.T, rep *reports.Report) {
	var doc parsedSuites
	if err := xml.Unmarshal(render(t, JUnit, rep), &doc); err != nil {
		t.Fatalf("JUnit output is not valid XML: %v", err)
	}
	if len(doc.Suites) != len(rep.Results) {
		t.Fatalf("%d suites, want %d", len(doc.Suites), len(rep.Results))
	}
	wantTests, wantFails, wantErrors, wantSkips := 0, 0, 0, 0
	for si, r := range rep.Results {
		s := doc.Suites[si]
		if s.Name != rep.Columns[si].Label || len(s.Cases) != len(r.Specs) || s.Tests != len(r.Specs) {
			t.Errorf("suite %d: name %q cases %d, want %q %d", si, s.Name, len(s.Cases), rep.Columns[si].Label, len(r.Specs))
			continue
		}
		for ci, spec := range r.Specs {
			c := s.Cases[ci]
			wantTests++
			ids := strings.Join(spec.Requirements, ", ")
			if c.Name != ids+": "+spec.Name || c.Classname != spec.Area {
				t.Errorf("case %q/%q, want the requirement IDs first: %q/%q", c.Name, c.Classname, ids+": "+spec.Name, spec.Area)
			}
			var props []string
			for _, p := range c.Props {
				if p.Name == "requirement" {
					props = append(props, p.Value)
				}
			}
			if strings.Join(props, ", ") != ids {
				t.Errorf("case %q requirements %v, want %v", c.Name, props, spec.Requirements)
			}
			oneLineVerdict := func(msg string) {
				t.Helper()
				if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, ids+": ") || len(msg) < len(ids)+10 {
					t.Errorf("case %q message %q is not a one-line verdict naming %s", c.Name, msg, ids)
				}
			}
			switch spec.Outcome {
			case result.Failed:
				wantFails++
				if c.Failure == nil || c.Error != nil {
					t.Errorf("failed case %q: failure %v error %v", c.Name, c.Failure, c.Error)
					continue
				}
				oneLineVerdict(c.Failure.Message)
				if !strings.Contains(c.Failure.Text, spec.Failure.Location) {
					t.Errorf("case %q failure text lacks the location", c.Name)
				}
				for _, x := range spec.Exchanges {
					if !strings.Contains(c.Failure.Text, shortURL(x.URL)) {
						t.Errorf("case %q failure text lacks exchange %s", c.Name, x.URL)
					}
				}
			case result.Errored:
				wantErrors++
				if c.Error == nil || c.Failure != nil {
					t.Errorf("errored case %q: failure %v error %v", c.Name, c.Failure, c.Error)
					continue
				}
				oneLineVerdict(c.Error.Message)
			case result.Skipped, result.NotApplicable, result.NotRun:
				wantSkips++
				if c.Skipped == nil || !strings.Contains(c.Skipped.Message, spec.SkipReason) {
					t.Errorf("case %q skipped %+v, want reason %q", c.Name, c.Skipped, spec.SkipReason)
				}
			default:
				if c.Failure != nil || c.Skipped != nil || c.Error != nil {
					t.Errorf("passed case %q has failure/error/skipped", c.Name)
				}
			}
		}
	}
	if doc.Tests != wantTests || doc.Fails != wantFails || doc.Errors != wantErrors || doc.Skips != wantSkips {
		t.Errorf("totals tests/failures/errors/skipped %d/%d/%d/%d, want %d/%d/%d/%d", doc.Tests, doc.Fails, doc.Errors, doc.Skips,
			wantTests, wantFails, wantErrors, wantSkips)
	}
}

// TestJUnitSchema validates every golden report's JUnit output against
// testdata/junit.xsd (the attributes and elements GitLab, Jenkins and the
// GitHub test-report actions read) with xmllint.
func TestJUnitSchema(t *testing.T) {
	xmllint, err := exec.LookPath("xmllint")
	if err != nil {
		t.Skip("xmllint not installed (Debian: libxml2-utils)")
	}
	dir := t.TempDir()
	for name, rep := range goldenReports() {
		path := filepath.Join(dir, name+".xml")
		if err := os.WriteFile(path, render(t, JUnit, rep), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), path).CombinedOutput()
		if err != nil {
			t.Errorf("%s: JUnit output does not validate: %v\n%s", name, err, out)
		}
	}
	// The schema is not vacuous: a testcase without a name fails it.
	bad := filepath.Join(dir, "bad.xml")
	if err := os.WriteFile(bad, []byte(`<testsuites tests="1" failures="0" errors="0"><testsuite name="x" tests="1" failures="0" errors="0" skipped="0"><testcase classname="a"/></testsuite></testsuites>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(xmllint, "--noout", "--schema", filepath.Join("testdata", "junit.xsd"), bad).Run(); err == nil {
		t.Error("a testcase without a name validates; the schema checks nothing")
	}
}

func TestJSONSingleIsResult(t *testing.T) {
	out := render(t, JSON, singleReport())
	r, err := result.Read(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("single-result JSON does not read back as a result: %v", err)
	}
	if len(r.Specs) != len(sample.RefServer().Specs) {
		t.Errorf("specs %d", len(r.Specs))
	}
	multi := render(t, JSON, multiReport())
	if !bytes.Contains(multi, []byte(`"schema": "`+reports.MatrixSchema+`"`)) {
		t.Errorf("multi-result JSON lacks matrix schema")
	}
}

func secretResult() result.Result {
	leak := redacttest.Leak
	r := sample.RefServer()
	r.Target.Name = "leaky token: kubeconfig-token-SECRET-0005"
	r.Target.Server = "https://admin:password-SECRET-0007@127.0.0.1:6443"
	r.Target.Version = "Bearer sk-bearer-SECRET-0001"
	for i := range r.Specs {
		s := &r.Specs[i]
		s.Name += " bearer sk-bearer-SECRET-0001"
		s.SkipReason = leak
		s.Verdict = "expected nothing, got " + leak
		s.Outcome = result.Failed
		s.Failure = &result.Failure{Message: leak, Location: "x.go:1 token=kubeconfig-token-SECRET-0005"}
		s.Exchanges = []result.Exchange{{
			Method: "GET", URL: "https://127.0.0.1/api?access_token=kubeconfig-token-SECRET-0005",
			RequestHeaders: []result.Header{{Name: "Authorization", Value: "Bearer sk-bearer-SECRET-0001"},
				{Name: "Cookie", Value: "session=cookie-SECRET-0002"}, {Name: "Proxy-Authorization", Value: "Basic proxy-SECRET-0003"}},
			RequestBody:     leak,
			Status:          200,
			ResponseHeaders: []result.Header{{Name: "Set-Cookie", Value: "s=cookie-SECRET-0002"}},
			ResponseBody:    redacttest.SecretBody + leak,
			Note:            leak,
		}}
		s.Observations = []result.Observation{{Name: "token=kubeconfig-token-SECRET-0005", Text: leak}}
	}
	skipped := r.Specs[0]
	skipped.Outcome, skipped.Failure = result.Skipped, nil
	errored := r.Specs[1]
	errored.Outcome = result.Errored
	passed := r.Specs[2]
	passed.Outcome, passed.Failure = result.Passed, nil
	r.Specs = append(r.Specs, skipped, errored, passed)
	r.Incomplete = &result.Incomplete{Cause: result.TargetLost, Detail: leak, Done: 1, Total: 2}
	return r
}

func TestNoCredentialReachesAnyRenderer(t *testing.T) {
	leaky := secretResult()
	// The fixture really carries every secret before redaction.
	raw := leaky.Specs[0].Exchanges[0].RequestHeaders[0].Value + leaky.Specs[0].Exchanges[0].RequestHeaders[1].Value +
		leaky.Specs[0].Exchanges[0].RequestHeaders[2].Value + leaky.Specs[0].Failure.Message
	for _, s := range redacttest.Secrets {
		if !strings.Contains(raw, s) {
			t.Fatalf("fixture lacks %q", s)
		}
	}
	reps := map[string]*reports.Report{
		"single":  reports.Build(sample.Catalogue(), leaky),
		"compare": reports.Build(sample.Catalogue(), sample.KubeAPIServer(), leaky),
	}
	for name, rep := range reps {
		for _, f := range Formats() {
			for _, colour := range []bool{false, true} {
				var buf bytes.Buffer
				var err error
				if f == Terminal {
					// Verbose: every exchange is printed too.
					err = WriteTerminalWith(&buf, rep, TerminalOptions{Color: colour, Verbose: true})
				} else {
					err = Render(&buf, f, rep)
				}
				if err != nil {
					t.Fatalf("%s/%s: %v", name, f, err)
				}
				for _, s := range redacttest.Secrets {
					if strings.Contains(buf.String(), s) {
						t.Errorf("%s/%s: output contains secret %q", name, f, s)
					}
				}
				if !strings.Contains(buf.String(), "REDACTED") {
					t.Errorf("%s/%s: no redaction marker; did the secrets reach the output at all?", name, f)
				}
			}
		}
	}
	var buf bytes.Buffer
	if err := result.Write(&buf, leaky); err != nil {
		t.Fatal(err)
	}
	for _, s := range redacttest.Secrets {
		if strings.Contains(buf.String(), s) {
			t.Errorf("result.Write: output contains secret %q", s)
		}
	}
}

// failingResult is the sample run with n extra failing specs.
func failingResult(n int) result.Result {
	r := sample.RefServer()
	base := r.Specs[5]
	for i := 0; i < n; i++ {
		s := base
		s.Name = base.Name + " #" + strconv.Itoa(i)
		s.Verdict = strings.Repeat("long verdict words ", 12) + strconv.Itoa(i)
		r.Specs = append(r.Specs, s)
	}
	return r
}

func buildSample(r result.Result) *reports.Report { return reports.Build(sample.Catalogue(), r) }
