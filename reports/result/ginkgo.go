package result

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/onsi/ginkgo/v2/types"

	"github.com/apiconform/apiconform/spec/catalog"
)

// areaLabelPrefix starts the label naming a spec's area (area:watch).
const areaLabelPrefix = "area:"

// FromGinkgo converts a Ginkgo suite report into a Result for target. Specs
// are kept in the order Ginkgo ran them; passing suite-level nodes
// (BeforeSuite, ReportAfterSuite...) are dropped, failing ones are kept under
// area "suite" so a broken setup is never silent.
func FromGinkgo(report types.Report, target Target) Result {
	r := Result{
		SchemaVersion: SchemaVersion,
		Target:        target,
		StartedAt:     report.StartTime.UTC(),
		Duration:      Duration(report.RunTime),
		Specs:         []SpecResult{},
	}
	for _, sr := range report.SpecReports {
		isSpec := sr.LeafNodeType.Is(types.NodeTypeIt)
		if !isSpec && !sr.Failed() {
			continue
		}
		if notSelected(sr) {
			// A spec the run's filters left out says nothing about the target:
			// its requirements show as not covered, not as skipped.
			continue
		}
		r.Specs = append(r.Specs, specFromGinkgo(sr, isSpec))
	}
	return Sanitize(r)
}

// notSelected reports a spec that Ginkgo skipped because the run's focus,
// skip or label filters excluded it: skipped without ever being attempted
// (a spec that calls Skip was attempted once).
func notSelected(sr types.SpecReport) bool {
	return sr.State.Is(types.SpecStateSkipped) && sr.NumAttempts == 0
}

func specFromGinkgo(sr types.SpecReport, isSpec bool) SpecResult {
	s := SpecResult{
		Name:         sr.FullText(),
		Requirements: []string{},
		Duration:     Duration(sr.RunTime),
	}
	for _, l := range sr.Labels() {
		if id, ok := catalog.IDFromLabel(l); ok {
			if !slices.Contains(s.Requirements, id) {
				s.Requirements = append(s.Requirements, id)
			}
			continue
		}
		switch {
		case strings.HasPrefix(l, areaLabelPrefix) && s.Area == "":
			s.Area = strings.TrimPrefix(l, areaLabelPrefix)
		}
	}
	if !isSpec {
		s.Name = strings.TrimSpace(sr.LeafNodeType.String() + " " + sr.LeafNodeText)
		s.Area = "suite"
	}
	if s.Area == "" {
		s.Area = "unlabelled"
	}
	switch {
	case sr.State.Is(types.SpecStatePassed):
		s.Outcome = Passed
	case sr.State.Is(types.SpecStateSkipped | types.SpecStatePending):
		s.Outcome = Skipped
		s.SkipReason = strings.TrimSpace(sr.Failure.Message)
		if s.SkipReason == "" {
			if sr.State.Is(types.SpecStatePending) {
				s.SkipReason = "pending"
			} else {
				s.SkipReason = "skipped without a reason"
			}
		}
	default:
		s.Outcome = Failed
		msg := strings.TrimSpace(sr.Failure.Message)
		if sr.Failure.ForwardedPanic != "" {
			msg = strings.TrimSpace(msg + "\npanic: " + sr.Failure.ForwardedPanic)
		}
		if msg == "" {
			msg = sr.State.String()
		}
		f := &Failure{Message: msg}
		if loc := sr.Failure.Location; loc.FileName != "" {
			f.Location = fmt.Sprintf("%s:%d", loc.FileName, loc.LineNumber)
		}
		s.Failure = f
	}
	for _, e := range sr.ReportEntries {
		s.Exchanges = append(s.Exchanges, exchangesFromEntry(e)...)
	}
	return s
}

// exchangesFromEntry reads HTTP exchanges out of a report entry. The suites'
// framework may store an Exchange itself, a slice of them, or its own struct
// that marshals to the same fields (flat, or nested under request/response);
// entries that are not exchanges are ignored.
func exchangesFromEntry(e types.ReportEntry) []Exchange {
	switch v := e.GetRawValue().(type) {
	case Exchange:
		return []Exchange{v}
	case *Exchange:
		if v != nil {
			return []Exchange{*v}
		}
		return nil
	case []Exchange:
		return v
	}
	data := []byte(e.Value.AsJSON)
	if raw := e.GetRawValue(); raw != nil {
		b, err := json.Marshal(raw)
		if err != nil {
			return nil
		}
		data = b
	}
	if len(data) == 0 {
		return nil
	}
	var list []looseExchange
	if err := json.Unmarshal(data, &list); err != nil {
		var one looseExchange
		if err := json.Unmarshal(data, &one); err != nil {
			return nil
		}
		list = []looseExchange{one}
	}
	var out []Exchange
	for _, l := range list {
		if x, ok := l.exchange(); ok {
			out = append(out, x)
		}
	}
	return out
}

type looseMessage struct {
	Method     string          `json:"method"`
	URL        string          `json:"url"`
	Status     int             `json:"status"`
	StatusCode int             `json:"statusCode"`
	Headers    json.RawMessage `json:"headers"`
	Body       json.RawMessage `json:"body"`
}

type looseExchange struct {
	looseMessage
	RequestHeaders  json.RawMessage `json:"requestHeaders"`
	RequestHeader   json.RawMessage `json:"requestHeader"` // suites/framework spelling
	RequestBody     json.RawMessage `json:"requestBody"`
	ResponseHeaders json.RawMessage `json:"responseHeaders"`
	ResponseHeader  json.RawMessage `json:"responseHeader"`
	ResponseBody    json.RawMessage `json:"responseBody"`
	Error           string          `json:"error"` // transport error instead of a response
	Note            string          `json:"note"`
	Request         *looseMessage   `json:"request"`
	Response        *looseMessage   `json:"response"`
}

func (l looseExchange) exchange() (Exchange, bool) {
	x := Exchange{
		Method:          l.Method,
		URL:             l.URL,
		Status:          firstNonZero(l.Status, l.StatusCode),
		RequestHeaders:  looseHeaders(l.RequestHeaders),
		RequestBody:     looseBody(l.RequestBody),
		ResponseHeaders: looseHeaders(l.ResponseHeaders),
		ResponseBody:    looseBody(l.ResponseBody),
		Note:            l.Note,
	}
	if x.RequestHeaders == nil {
		x.RequestHeaders = looseHeaders(l.RequestHeader)
	}
	if x.ResponseHeaders == nil {
		x.ResponseHeaders = looseHeaders(l.ResponseHeader)
	}
	if l.Error != "" {
		x.Note = strings.TrimSpace(x.Note + " transport error: " + l.Error)
	}
	if l.Request != nil {
		x.Method = firstNonEmpty(x.Method, l.Request.Method)
		x.URL = firstNonEmpty(x.URL, l.Request.URL)
		if x.RequestHeaders == nil {
			x.RequestHeaders = looseHeaders(l.Request.Headers)
		}
		x.RequestBody = firstNonEmpty(x.RequestBody, looseBody(l.Request.Body))
	}
	if l.Response != nil {
		x.Status = firstNonZero(x.Status, l.Response.Status, l.Response.StatusCode)
		if x.ResponseHeaders == nil {
			x.ResponseHeaders = looseHeaders(l.Response.Headers)
		}
		x.ResponseBody = firstNonEmpty(x.ResponseBody, looseBody(l.Response.Body))
	}
	// Flat "headers"/"body" belong to the response when a status is present.
	if x.ResponseHeaders == nil {
		x.ResponseHeaders = looseHeaders(l.Headers)
	}
	x.ResponseBody = firstNonEmpty(x.ResponseBody, looseBody(l.Body))
	return x, x.Method != "" && x.URL != ""
}

// looseHeaders accepts http.Header ({"A":["x"]}), a flat map ({"A":"x"}) or []Header.
func looseHeaders(raw json.RawMessage) []Header {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []Header
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var multi map[string][]string
	if json.Unmarshal(raw, &multi) == nil {
		return headersFromMap(multi)
	}
	var single map[string]string
	if json.Unmarshal(raw, &single) == nil {
		m := make(map[string][]string, len(single))
		for k, v := range single {
			m[k] = []string{v}
		}
		return headersFromMap(m)
	}
	return nil
}

func headersFromMap(m map[string][]string) []Header {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []Header
	for _, k := range names {
		for _, v := range m[k] {
			out = append(out, Header{Name: http.CanonicalHeaderKey(k), Value: v})
		}
	}
	return out
}

// looseBody accepts a JSON string, or an embedded JSON document kept as-is.
func looseBody(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstNonZero(vs ...int) int {
	for _, v := range vs {
		if v != 0 {
			return v
		}
	}
	return 0
}
