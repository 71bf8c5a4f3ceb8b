package apiserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
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
		return plainStatus(406, metav1.StatusReasonNotAcceptable, "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, application/json;stream=watch")
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

// writeObject renders v as JSON, or YAML when the client asked for it.
func writeObject(w http.ResponseWriter, r *http.Request, code int, v any) {
	body, err := marshalOrdered(v)
	if err != nil {
		code, body = 500, []byte(fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":%q,"reason":"InternalError","code":500}`, err.Error()))
	}
	ct := "application/json"
	if r != nil && wantsYAML(r.Header.Get("Accept")) {
		if y, err := yaml.JSONToYAML(body); err == nil {
			body, ct = y, "application/yaml"
		}
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

func wantsYAML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		switch mt {
		case "application/yaml":
			return true
		case "application/json", "*/*", "application/*":
			return false
		}
	}
	return false
}

// marshalOrdered writes kind, apiVersion and metadata first at the top level
// of a map (the order kube-apiserver gives typed objects), the rest sorted.
func marshalOrdered(v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return json.MarshalIndent(v, "", "  ")
	}
	var buf bytes.Buffer
	buf.WriteString("{")
	first := true
	write := func(k string, val any) error {
		b, err := json.MarshalIndent(val, "  ", "  ")
		if err != nil {
			return err
		}
		if !first {
			buf.WriteString(",")
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.WriteString("\n  ")
		buf.Write(kb)
		buf.WriteString(": ")
		buf.Write(b)
		return nil
	}
	lead := []string{"kind", "apiVersion", "metadata"}
	for _, k := range lead {
		if val, ok := m[k]; ok {
			if err := write(k, val); err != nil {
				return nil, err
			}
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		if k != "kind" && k != "apiVersion" && k != "metadata" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if err := write(k, m[k]); err != nil {
			return nil, err
		}
	}
	buf.WriteString("\n}")
	return buf.Bytes(), nil
}
