package apiserver

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/apiconform/apiconform/refserver/registry"
)

// toJSON converts a request body in the given Content-Type to JSON.
func toJSON(ct string, body []byte) ([]byte, error) {
	if mt, _, _ := mime.ParseMediaType(ct); mt == protobufType {
		return protobufToJSON(body)
	}
	f, ok := bodyFormat(ct)
	if !ok {
		return nil, errUnsupportedMedia()
	}
	if f == formatYAML {
		j, err := yaml.YAMLToJSON(body)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("error converting YAML to JSON: %v", err))
		}
		return j, nil
	}
	return body, nil
}

func snippet(b []byte) string {
	if len(b) > 256 {
		return string(b[:256]) + "..."
	}
	return string(b)
}

// DecodeObject turns a request body into an object of kind k at version,
// with kube-apiserver's errors, and returns the unknown fields it dropped.
func DecodeObject(k *registry.Kind, version string, raw []byte) (registry.Object, []string, error) {
	var obj registry.Object
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		msg := "Object 'Kind' is missing in '" + snippet(raw) + "'"
		if err != nil {
			msg = fmt.Sprintf("couldn't get version/kind; json parse error: %v (%s)", err, snippet(raw))
		}
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s", k.Kind, msg))
	}
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	switch {
	case kind == "":
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("Object 'Kind' is missing in '%s'", snippet(raw)))
	case apiVersion == "":
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("Object 'apiVersion' is missing in '%s'", snippet(raw)))
	case kind != k.Kind:
		gv := apiVersion
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s) to (%s): unknown conversion",
			kind, versionOf(gv), k.Kind, versionOf(gv)+"."+kind, "core."+k.Kind))
	case apiVersion != k.APIVersion(version):
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, k.APIVersion(version)))
	}
	if _, ok := obj["metadata"]; ok {
		if _, ok := obj["metadata"].(map[string]any); !ok {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: json: cannot unmarshal %s into Go struct field %s.metadata of type v1.ObjectMeta", k.Kind, version, k.Kind, jsonKind(obj["metadata"]), k.Kind))
		}
	}
	var unknown []string
	if newTyped := k.TypedOf(version); newTyped != nil {
		typed := newTyped()
		if err := json.Unmarshal(raw, typed); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", k.Kind, version, k.Kind, err))
		}
		if strict, err := sigsjson.UnmarshalStrict(raw, newTyped()); err == nil {
			for _, e := range strict {
				unknown = append(unknown, strings.TrimPrefix(e.Error(), "json: "))
			}
		}
		// Round trip through the Go type drops unknown fields, as kube-apiserver does.
		b, _ := json.Marshal(typed)
		var clean registry.Object
		_ = json.Unmarshal(b, &clean)
		m, _ := clean["metadata"].(map[string]any)
		if m != nil && m["creationTimestamp"] == nil {
			delete(m, "creationTimestamp")
		}
		if st, ok := clean["status"].(map[string]any); ok && len(st) == 0 {
			delete(clean, "status")
		}
		if sp, ok := clean["spec"].(map[string]any); ok && len(sp) == 0 {
			delete(clean, "spec")
		}
		obj = clean
	} else {
		if errs := checkMetaTypes(registry.Meta(obj)); errs != "" {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", k.Kind, version, k.Kind, errs))
		}
		// Duplicate fields anywhere, and unknown metadata fields.
		var loose map[string]any
		if strict, err := sigsjson.UnmarshalStrict(raw, &loose); err == nil {
			for _, e := range strict {
				unknown = append(unknown, strings.TrimPrefix(e.Error(), "json: "))
			}
		}
		if mb, err := json.Marshal(obj["metadata"]); err == nil && obj["metadata"] != nil {
			var om metav1.ObjectMeta
			if strict, err := sigsjson.UnmarshalStrict(mb, &om); err == nil {
				for _, e := range strict {
					msg := strings.TrimPrefix(e.Error(), "json: ")
					unknown = append(unknown, strings.Replace(msg, "field \"", "field \"metadata.", 1))
				}
				clean, _ := json.Marshal(&om)
				var m map[string]any
				_ = json.Unmarshal(clean, &m)
				if m["creationTimestamp"] == nil {
					delete(m, "creationTimestamp")
				}
				obj["metadata"] = m
			}
		}
	}
	if k.Prune != nil {
		for _, p := range k.Prune(obj) {
			unknown = append(unknown, fmt.Sprintf("unknown field %q", p))
		}
	}
	return obj, unknown, nil
}

// checkMetaTypes rejects metadata fields of the wrong JSON type.
func checkMetaTypes(m map[string]any) string {
	for _, f := range []string{"name", "generateName", "namespace", "resourceVersion", "uid"} {
		if v, ok := m[f]; ok && v != nil {
			if _, ok := v.(string); !ok {
				return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s of type string", jsonKind(v), f)
			}
		}
	}
	for _, f := range []string{"labels", "annotations"} {
		if v, ok := m[f]; ok && v != nil {
			mm, ok := v.(map[string]any)
			if !ok {
				return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s of type map[string]string", jsonKind(v), f)
			}
			for _, x := range mm {
				if _, ok := x.(string); !ok {
					return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s of type string", jsonKind(x), f)
				}
			}
		}
	}
	if v, ok := m["finalizers"]; ok && v != nil {
		arr, ok := v.([]any)
		if !ok {
			return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.finalizers of type []string", jsonKind(v))
		}
		for _, x := range arr {
			if _, ok := x.(string); !ok {
				return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.finalizers of type string", jsonKind(x))
			}
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

func versionOf(gv string) string {
	if i := strings.LastIndex(gv, "/"); i >= 0 {
		return gv[i+1:]
	}
	return gv
}

// fieldValidation applies the fieldValidation directive to unknown fields:
// Strict → 400, Warn (default) → Warning headers, Ignore → nothing.
// patched, when set, is the patched object: Strict then answers 422 as
// kube-apiserver does for patches.
func (h *Handler) fieldValidation(w http.ResponseWriter, r *http.Request, ri *requestInfo, unknown []string, patched []byte) error {
	switch r.URL.Query().Get("fieldValidation") {
	case "", "Warn":
		for _, u := range unknown {
			addWarning(w, h, u)
		}
	case "Strict":
		if len(unknown) == 0 {
			return nil
		}
		msg := "strict decoding error: " + strings.Join(unknown, ", ")
		if patched != nil {
			return apierrors.NewInvalid(schemaGK("", ""), "", fieldErrs("patch", string(patched), msg))
		}
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", ri.kind.Kind, ri.version, ri.kind.Kind, msg))
	}
	return nil
}

// checkOptions validates dryRun and fieldValidation as kube-apiserver does,
// naming the options kind (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions).
func checkOptions(r *http.Request, optionsKind string) error {
	q := r.URL.Query()
	var errs field.ErrorList
	if vals, ok := q["dryRun"]; ok {
		for _, v := range vals {
			if v != "All" {
				errs = append(errs, field.NotSupported(field.NewPath("dryRun"), vals, []string{"All"}))
				break
			}
		}
	}
	if optionsKind != "DeleteOptions" {
		switch v := q.Get("fieldValidation"); v {
		case "", "Ignore", "Warn", "Strict":
		default:
			errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), v, []string{"", "Ignore", "Strict", "Warn"}))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	se := apierrors.NewInvalid(schemaGK("meta.k8s.io", optionsKind), "", errs)
	se.ErrStatus.Details.Group = "meta.k8s.io"
	return se
}

func addWarning(w http.ResponseWriter, h *Handler, msg string) {
	if h.cfg.Faults.Has("no-warning-header") {
		return
	}
	w.Header().Add("Warning", fmt.Sprintf("299 - %q", msg))
}
