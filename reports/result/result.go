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
const SchemaVersion = "apiconform.io/result/v1"

const schemaPrefix = "apiconform.io/result/"

// Outcome is what happened to one spec.
type Outcome string

const (
	Passed  Outcome = "passed"
	Failed  Outcome = "failed"
	Skipped Outcome = "skipped"
)

// Result is one run of the suites against one target.
type Result struct {
	SchemaVersion string       `json:"schemaVersion"`
	Target        Target       `json:"target"`
	StartedAt     time.Time    `json:"startedAt"`
	Duration      Duration     `json:"duration"`
	Specs         []SpecResult `json:"specs"`
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
	Name         string     `json:"name"` // full text: containers and leaf
	Area         string     `json:"area"`
	Requirements []string   `json:"requirements"`
	Outcome      Outcome    `json:"outcome"`
	SkipReason   string     `json:"skipReason,omitempty"`
	Duration     Duration   `json:"duration"`
	Failure      *Failure   `json:"failure,omitempty"`
	Exchanges    []Exchange `json:"exchanges,omitempty"`
}

// Failure is why a spec failed.
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
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// Total is the number of specs counted.
func (c Counts) Total() int { return c.Passed + c.Failed + c.Skipped }

// Counts tallies the result's specs by outcome.
func (r Result) Counts() Counts {
	var c Counts
	for _, s := range r.Specs {
		switch s.Outcome {
		case Passed:
			c.Passed++
		case Failed:
			c.Failed++
		case Skipped:
			c.Skipped++
		}
	}
	return c
}

// Merge joins the results of one run made in parts (parallel workers on
// one target): the first part's target, the earliest start, every spec in
// part order. The duration is left to the caller, who saw the wall clock.
func Merge(parts ...Result) Result {
	if len(parts) == 0 {
		return Result{SchemaVersion: SchemaVersion, Specs: []SpecResult{}}
	}
	out := parts[0]
	out.Specs = slices.Clone(parts[0].Specs)
	for _, p := range parts[1:] {
		out.Specs = append(out.Specs, p.Specs...)
		if p.StartedAt.Before(out.StartedAt) {
			out.StartedAt = p.StartedAt
		}
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
		switch s.Outcome {
		case Passed, Failed, Skipped:
		default:
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
