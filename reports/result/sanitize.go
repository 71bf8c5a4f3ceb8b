package result

import (
	"maps"
	"net/http"
	"slices"

	"github.com/apiconform/apiconform/reports/redact"
)

// Sanitize returns a deep copy of r with every credential removed from every
// text field. Exchanges are redacted where they are recorded; Sanitize guards
// the result's own boundaries (Write, Read, and the report model), so a
// renderer cannot print a secret even if a result file carries one.
func Sanitize(r Result) Result {
	out := r
	out.Target.Name = redact.String(r.Target.Name)
	out.Target.Server = redact.String(r.Target.Server)
	out.Target.Version = redact.String(r.Target.Version)
	out.Target.Capabilities = maps.Clone(r.Target.Capabilities)
	if r.Target.Labels != nil {
		out.Target.Labels = make(map[string]string, len(r.Target.Labels))
		for k, v := range r.Target.Labels {
			out.Target.Labels[redact.String(k)] = redact.String(v)
		}
	}
	if r.Incomplete != nil {
		inc := *r.Incomplete
		inc.Detail = redact.String(inc.Detail)
		out.Incomplete = &inc
	}
	if r.Specs != nil {
		out.Specs = make([]SpecResult, len(r.Specs))
	}
	for i, s := range r.Specs {
		c := s
		c.Name = redact.String(s.Name)
		c.Area = redact.String(s.Area)
		c.Requirements = append([]string(nil), s.Requirements...)
		c.SkipReason = redact.String(s.SkipReason)
		c.Verdict = redact.String(s.Verdict)
		if s.Failure != nil {
			c.Failure = &Failure{Message: redact.String(s.Failure.Message), Location: redact.String(s.Failure.Location)}
		}
		if s.Observations != nil {
			c.Observations = make([]Observation, len(s.Observations))
			for j, o := range s.Observations {
				c.Observations[j] = Observation{Name: redact.String(o.Name), Text: redact.String(o.Text)}
			}
		}
		if s.Exchanges != nil {
			c.Exchanges = make([]Exchange, len(s.Exchanges))
			for j, e := range s.Exchanges {
				c.Exchanges[j] = e.Redacted()
			}
		}
		out.Specs[i] = c
	}
	return out
}

// Redacted returns a copy of e with every credential removed: the one
// function that redacts an exchange, used where suites record it and again
// wherever a result crosses a boundary.
func (e Exchange) Redacted() Exchange {
	return Exchange{
		Method:          redact.String(e.Method),
		URL:             redact.String(e.URL),
		RequestHeaders:  redactHeaders(e.RequestHeaders),
		RequestBody:     redact.String(e.RequestBody),
		Status:          e.Status,
		ResponseHeaders: redactHeaders(e.ResponseHeaders),
		ResponseBody:    redact.String(e.ResponseBody),
		Note:            redact.String(e.Note),
		Role:            e.Role,
	}
}

func redactHeaders(hs []Header) []Header {
	if hs == nil {
		return nil
	}
	out := make([]Header, len(hs))
	for i, h := range hs {
		out[i] = Header{Name: redact.String(h.Name), Value: redact.HeaderValue(h.Name, h.Value)}
	}
	return out
}

// HeadersOf lists an http.Header as header lines, names canonical and sorted,
// repeated names in their order.
func HeadersOf(h http.Header) []Header {
	if len(h) == 0 {
		return nil
	}
	names := slices.Sorted(maps.Keys(h))
	var out []Header
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, Header{Name: http.CanonicalHeaderKey(k), Value: v})
		}
	}
	return out
}
