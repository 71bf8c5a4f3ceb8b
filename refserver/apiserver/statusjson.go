package apiserver

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// appendStatus appends what json.Marshal writes for s, field by field in
// the struct's order, each left out where its omitempty tag leaves it out:
// every DELETE that removes an object and every error answers a Status,
// and reflection was most of the cost of writing one.
// TestAppendStatusMatchesLibrary and FuzzAppendStatus hold it to json.Marshal.
func appendStatus(dst []byte, s *metav1.Status) []byte {
	o := jsonObject{dst: append(dst, '{')}
	o.str("kind", s.Kind)
	o.str("apiVersion", s.APIVersion)
	o.key("metadata") // a struct: omitempty never leaves it out
	m := jsonObject{dst: append(o.dst, '{')}
	m.str("selfLink", s.SelfLink)
	m.str("resourceVersion", s.ResourceVersion)
	m.str("continue", s.Continue)
	if s.RemainingItemCount != nil {
		m.key("remainingItemCount")
		m.dst = strconv.AppendInt(m.dst, *s.RemainingItemCount, 10)
	}
	o.dst = append(m.dst, '}')
	o.str("status", s.Status)
	o.str("message", s.Message)
	o.str("reason", string(s.Reason))
	if d := s.Details; d != nil {
		o.key("details")
		o.dst = appendStatusDetails(o.dst, d)
	}
	o.int("code", int64(s.Code))
	return append(o.dst, '}')
}

func appendStatusDetails(dst []byte, d *metav1.StatusDetails) []byte {
	o := jsonObject{dst: append(dst, '{')}
	o.str("name", d.Name)
	o.str("group", d.Group)
	o.str("kind", d.Kind)
	o.str("uid", string(d.UID))
	if len(d.Causes) > 0 {
		o.key("causes")
		o.dst = append(o.dst, '[')
		for i, c := range d.Causes {
			if i > 0 {
				o.dst = append(o.dst, ',')
			}
			cause := jsonObject{dst: append(o.dst, '{')}
			cause.str("reason", string(c.Type))
			cause.str("message", c.Message)
			cause.str("field", c.Field)
			o.dst = append(cause.dst, '}')
		}
		o.dst = append(o.dst, ']')
	}
	o.int("retryAfterSeconds", int64(d.RetryAfterSeconds))
	return append(o.dst, '}')
}

// jsonObject writes the members of a JSON object after its opening brace.
type jsonObject struct {
	dst     []byte
	written bool // a member is written: the next follows a comma
}

// key writes a member's name (one needing no escape) and its colon.
func (o *jsonObject) key(name string) {
	if o.written {
		o.dst = append(o.dst, ',')
	}
	o.written = true
	o.dst = append(append(append(o.dst, '"'), name...), '"', ':')
}

// str writes a string member, left out when empty (omitempty).
func (o *jsonObject) str(name, v string) {
	if v != "" {
		o.key(name)
		o.dst = jsonvalue.AppendString(o.dst, v)
	}
}

// int writes an integer member, left out when zero (omitempty).
func (o *jsonObject) int(name string, v int64) {
	if v != 0 {
		o.key(name)
		o.dst = strconv.AppendInt(o.dst, v, 10)
	}
}
