// Package result is the versioned, serialisable outcome of one `apiconform run`
// against one target. Every renderer reads it; nothing in it is re-judged later.
package result

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// SchemaVersion is written into every result; readers accept any v1.x.
// v1.1 added the outcomes error, not-applicable and not-run, the counts of
// them, and incomplete; a v1 file (passed, failed, skipped) reads unchanged.
// v1.2 added coverage (optional, derived: see Coverage); v1 and v1.1 files
// read unchanged and render the same coverage section. v1.3 added a spec's
// observations (optional); earlier files read unchanged, without them.
const SchemaVersion = "apiconform.io/result/v1.3"

const schemaPrefix = "apiconform.io/result/"

// Outcome is what happened to one spec.
type Outcome string

const (
	// Passed: the target did what the requirement says.
	Passed Outcome = "passed"
	// Failed: the target did not; a conformance failure.
	Failed Outcome = "failed"
	// Errored: the harness could not finish the check for reasons outside
	// the target's conformance (transport failure, harness deadline,
	// interrupt); Failure says why. Never a conformance failure.
	Errored Outcome = "error"
	// Skipped: a documented allowance was taken; SkipReason says which and
	// what was observed.
	Skipped Outcome = "skipped"
	// NotApplicable: the requirement does not apply to this target (e.g. the
	// Frobber group, served only by the reference server); SkipReason says why.
	NotApplicable Outcome = "not-applicable"
	// NotRun: selected but never started (interrupt, fail-fast, lost target).
	NotRun Outcome = "not-run"
)

// Outcomes lists every outcome in report order.
var Outcomes = []Outcome{Passed, Failed, Errored, Skipped, NotApplicable, NotRun}

// Result is one run of the suites against one target.
type Result struct {
	SchemaVersion string       `json:"schemaVersion"`
	Target        Target       `json:"target"`
	StartedAt     time.Time    `json:"startedAt"`
	Duration      Duration     `json:"duration"`
	Specs         []SpecResult `json:"specs"`
	// Incomplete is set when the run stopped before every selected spec
	// finished; every report then says so first.
	Incomplete *Incomplete `json:"incomplete,omitempty"`
	// Coverage is the documentation coverage map with this run's outcomes
	// (v1.2); reports.Build fills it, readers need not.
	Coverage *Coverage `json:"coverage,omitempty"`
}

// Target describes the server the suites ran against.
type Target struct {
	Name         string            `json:"name"`
	Server       string            `json:"server"`            // base URL
	Version      string            `json:"version,omitempty"` // gitVersion from /version
	Capabilities map[string]bool   `json:"capabilities,omitempty"`
	Labels       map[string]string `json:"labels,omitempty"` // free-form extras (platform, build)
}

// SpecResult is one Ginkgo spec.
type SpecResult struct {
	Name         string   `json:"name"` // full text: containers and leaf
	Area         string   `json:"area"`
	Requirements []string `json:"requirements"`
	Outcome      Outcome  `json:"outcome"`
	SkipReason   string   `json:"skipReason,omitempty"` // skipped, not applicable, not run: why
	Duration     Duration `json:"duration"`
	Failure      *Failure `json:"failure,omitempty"`
	// Verdict is the failure in the requirement's terms, one line (e.g.
	// "expected 410 Gone, got 200 OK (GET …)"), produced by the assertion that failed.
	Verdict   string     `json:"verdict,omitempty"`
	Exchanges []Exchange `json:"exchanges,omitempty"`
	// Observations are what the spec recorded seeing (v1.3), in its order.
	Observations []Observation `json:"observations,omitempty"`
}

// Failure is why a spec failed or ended in error.
type Failure struct {
	Message  string `json:"message"`
	Location string `json:"location,omitempty"` // file:line
}

// Exchange is one recorded HTTP request and its response.
type Exchange struct {
	Method          string   `json:"method"`
	URL             string   `json:"url"`
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	RequestBody     string   `json:"requestBody,omitempty"`
	Status          int      `json:"status"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
	ResponseBody    string   `json:"responseBody,omitempty"`
	Note            string   `json:"note,omitempty"` // e.g. "watch stream, first 3 events"
	// Role is the exchange's part in the spec: decisive (its response broke
	// the rule), setup, teardown, or empty for the spec's other steps.
	Role Role `json:"role,omitempty"`
}

// Header is one header line; a slice keeps order and repeated names.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Duration is a time.Duration written as Go duration text ("1.5s") in JSON.
type Duration time.Duration

// Std returns the standard library duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as text such as "1.25s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1.25s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("duration: want text like \"1.5s\" or nanoseconds, got %s", b)
	}
	*d = Duration(n)
	return nil
}

// Counts tallies spec outcomes.
type Counts struct {
	Passed        int `json:"passed"`
	Failed        int `json:"failed"`
	Errors        int `json:"errors"`
	Skipped       int `json:"skipped"`
	NotApplicable int `json:"notApplicable"`
	NotRun        int `json:"notRun"`
}

// Total is the number of specs counted.
func (c Counts) Total() int {
	return c.Passed + c.Failed + c.Errors + c.Skipped + c.NotApplicable + c.NotRun
}

// Add counts one spec of outcome o.
func (c *Counts) Add(o Outcome) {
	switch o {
	case Passed:
		c.Passed++
	case Failed:
		c.Failed++
	case Errored:
		c.Errors++
	case Skipped:
		c.Skipped++
	case NotApplicable:
		c.NotApplicable++
	case NotRun:
		c.NotRun++
	}
}

// Summary is "150 passed, 0 failed, 0 errors, 7 skipped, 0 not applicable, 0 not run".
func (c Counts) Summary() string {
	errs := "errors"
	if c.Errors == 1 {
		errs = "error"
	}
	return fmt.Sprintf("%d passed, %d failed, %d %s, %d skipped, %d not applicable, %d not run",
		c.Passed, c.Failed, c.Errors, errs, c.Skipped, c.NotApplicable, c.NotRun)
}

// Counts tallies the result's specs by outcome.
func (r Result) Counts() Counts {
	var c Counts
	for _, s := range r.Specs {
		c.Add(s.Outcome)
	}
	return c
}

// Merge joins the results of one run made in parts (parallel workers on
// one target): the first part's target, the earliest start, every spec in
// part order. The run is incomplete when any part is: the gravest cause
// wins, and done/total add up over all parts (a complete part counts every
// spec it lists). The duration is left to the caller, who saw the wall clock.
func Merge(parts ...Result) Result {
	if len(parts) == 0 {
		return Result{SchemaVersion: SchemaVersion, Specs: []SpecResult{}}
	}
	out := parts[0]
	out.Specs = slices.Clone(parts[0].Specs)
	out.Incomplete = nil
	out.Coverage = nil // derived from the merged specs by reports.Build
	for _, p := range parts[1:] {
		out.Specs = append(out.Specs, p.Specs...)
		if p.StartedAt.Before(out.StartedAt) || out.StartedAt.IsZero() {
			out.StartedAt = p.StartedAt
		}
	}
	var inc Incomplete
	for _, p := range parts {
		if p.Incomplete == nil {
			inc.Done += len(p.Specs)
			inc.Total += len(p.Specs)
			continue
		}
		inc.Done += p.Incomplete.Done
		inc.Total += p.Incomplete.Total
		if causeRank[p.Incomplete.Cause] > causeRank[inc.Cause] {
			inc.Cause, inc.Detail = p.Incomplete.Cause, p.Incomplete.Detail
		}
	}
	if inc.Cause != "" {
		out.Incomplete = &inc
	}
	return out
}

// Write encodes r as indented JSON after redacting it.
func Write(w io.Writer, r Result) error {
	r = Sanitize(r)
	if r.SchemaVersion == "" {
		r.SchemaVersion = SchemaVersion
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

// WriteFile writes r to path.
func WriteFile(path string, r Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// Read decodes a result, rejecting schema versions this build does not know.
// The result is redacted again on the way in, in case the file came from elsewhere.
func Read(rd io.Reader) (Result, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return Result{}, err
	}
	var head struct {
		SchemaVersion *string `json:"schemaVersion"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Result{}, fmt.Errorf("not an apiconform result: %v", err)
	}
	if head.SchemaVersion == nil {
		return Result{}, fmt.Errorf("not an apiconform result: no schemaVersion field")
	}
	if err := CheckSchema(*head.SchemaVersion); err != nil {
		return Result{}, err
	}
	var r Result
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&r); err != nil {
		return Result{}, fmt.Errorf("decode result: %v", err)
	}
	for i, s := range r.Specs {
		if !slices.Contains(Outcomes, s.Outcome) {
			return Result{}, fmt.Errorf("spec %d (%q): unknown outcome %q", i, s.Name, s.Outcome)
		}
	}
	return Sanitize(r), nil
}

// ReadFile reads a result file.
func ReadFile(path string) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	r, err := Read(f)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// CheckSchema accepts apiconform.io/result/v1 and any v1 minor revision
// (v1beta1, v1.2); any other major version is an error naming both.
func CheckSchema(v string) error {
	if !strings.HasPrefix(v, schemaPrefix) {
		return fmt.Errorf("unknown result schema %q (this apiconform reads %s)", v, SchemaVersion)
	}
	ver := strings.TrimPrefix(v, schemaPrefix)
	major := ver
	if i := strings.IndexAny(ver, ".abr"); i > 0 {
		major = ver[:i]
	}
	if major != "v1" {
		return fmt.Errorf("result schema %s is not supported by this apiconform (reads %s); use a matching apiconform release", v, SchemaVersion)
	}
	return nil
}
