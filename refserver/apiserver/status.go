package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/apiconform/apiconform/refserver/registry"
)

// statusOf turns any error into the Status kube-apiserver would send.
func statusOf(err error) metav1.Status {
	var se *apierrors.StatusError
	if errors.As(err, &se) {
		st := se.ErrStatus
		st.Kind, st.APIVersion = "Status", "v1"
		st.Status = metav1.StatusFailure
		if st.Code == 0 {
			st.Code = http.StatusInternalServerError
		}
		return st
	}
	return statusOf(apierrors.NewInternalError(err))
}

// plainStatus builds the generic Status kube-apiserver sends for routing errors.
func plainStatus(code int, reason metav1.StatusReason, msg string) *apierrors.StatusError {
	return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg, Details: &metav1.StatusDetails{}}}
}

var (
	errNotFoundResource = func() error {
		return plainStatus(404, metav1.StatusReasonNotFound, "the server could not find the requested resource")
	}
	errMethodNotAllowed = func() error {
		return plainStatus(405, metav1.StatusReasonMethodNotAllowed, "the server does not allow this method on the requested resource")
	}
	// errUnsupportedMedia is the 415 for a create, update or delete body
	// (kube-apiserver's has no details).
	errUnsupportedMedia = func() error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 415, Reason: metav1.StatusReasonUnsupportedMediaType,
			Message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"}}
	}
	errNotAcceptable = func() error {
		return plainStatus(406, metav1.StatusReasonNotAcceptable, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch")
	}
	// errNotAcceptableCustom is the custom resource handler's 406 (no details).
	errNotAcceptableCustom = func() error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 406, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"}}
	}
	// errNotAcceptableWatch: a watch has only the stream media types.
	errNotAcceptableWatch = func() error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 406, Reason: metav1.StatusReasonNotAcceptable,
			Message: "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"}}
	}
	errUnauthorized = func() error {
		return &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 401, Reason: metav1.StatusReasonUnauthorized, Message: "Unauthorized"}}
	}
)

// writeStatus renders err as a Status in the negotiated format.
func writeStatus(w http.ResponseWriter, r *http.Request, err error) {
	st := statusOf(err)
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	writeObject(w, r, int(st.Code), st)
}

// writeObject renders v in the negotiated media type: JSON (compact unless
// isPretty), YAML, or protobuf for kinds that have a protobuf form. A client
// that accepts only protobuf for a value without one gets the custom
// resource handler's 406.
func writeObject(w http.ResponseWriter, r *http.Request, code int, v any) {
	ct, pretty, ok := responseType(r, v)
	if !ok {
		writeStatus(w, r, errNotAcceptableCustom())
		return
	}
	var body []byte
	if ct == protobufType {
		body, _ = encodeProtobuf(v)
	} else {
		var err error
		body, err = marshalOrdered(v, pretty)
		if err != nil {
			code, body = 500, []byte(fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":"InternalError","code":500}`, err.Error()))
			ct = "application/json"
		}
		if ct == "application/yaml" {
			if y, err := yaml.JSONToYAML(body); err == nil {
				body = y
			} else {
				ct = "application/json"
			}
		}
	}
	if ct == "application/json" {
		setJSONHeaders(w.Header()) // the shared values: no allocation
	} else {
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-cache, private")
	}
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// writeIndented renders v as indented JSON whatever the request says, as
// kube-apiserver does for / and /version.
func writeIndented(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code, body = 500, []byte(err.Error())
	}
	setJSONHeaders(w.Header())
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// responseType picks the media type for v from the request's Accept; ok is
// false when protobuf was the only acceptable type and v has none.
func responseType(r *http.Request, v any) (ct string, pretty bool, ok bool) {
	pretty = isPretty(r)
	if r == nil || strings.TrimSpace(r.Header.Get("Accept")) == "" {
		return "application/json", pretty, true
	}
	refused := false
	for _, a := range accepts(r.Header.Get("Accept")) {
		switch a.Type + "/" + a.SubType {
		case "application/json", "*/*", "application/*":
			return "application/json", pretty || a.Params["pretty"] == "1", true
		case "application/yaml":
			if a.Params["as"] == "" {
				return "application/yaml", pretty, true
			}
		case protobufType:
			if a.Params["as"] != "" {
				continue
			}
			if _, can := typedOf(v); can {
				return protobufType, false, true
			}
			refused = true
		}
	}
	return "application/json", pretty, !refused
}

// marshalOrdered writes kind, apiVersion and metadata first at the top level
// of a map (the order kube-apiserver gives typed objects), the rest sorted;
// indented as json.MarshalIndent does, or compact with the trailing newline
// of kube-apiserver's encoder.
func marshalOrdered(v any, pretty bool) ([]byte, error) {
	m, ok := v.(map[string]any)
	if ok && !pretty {
		return registry.MarshalObject(m)
	}
	if st, isStatus := v.(metav1.Status); isStatus && !pretty {
		return append(appendStatus(make([]byte, 0, 256), &st), '\n'), nil
	}
	if !ok {
		if pretty {
			return json.MarshalIndent(v, "", "  ")
		}
		b, err := json.Marshal(v)
		return append(b, '\n'), err
	}
	var buf bytes.Buffer
	buf.WriteString("{")
	first := true
	write := func(k string, val any) error {
		var b []byte
		var err error
		if pretty {
			b, err = json.MarshalIndent(val, "  ", "  ")
		} else {
			b, err = json.Marshal(val)
		}
		if err != nil {
			return err
		}
		if !first {
			buf.WriteString(",")
		}
		first = false
		kb, _ := json.Marshal(k)
		if pretty {
			buf.WriteString("\n  ")
		}
		buf.Write(kb)
		if pretty {
			buf.WriteString(": ")
		} else {
			buf.WriteString(":")
		}
		buf.Write(b)
		return nil
	}
	for _, k := range registry.ObjectKeys(m) {
		if err := write(k, m[k]); err != nil {
			return nil, err
		}
	}
	if pretty {
		buf.WriteString("\n}")
	} else {
		buf.WriteString("}\n")
	}
	return buf.Bytes(), nil
}
