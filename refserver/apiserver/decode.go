package apiserver

import (
	"fmt"
	"mime"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/refserver/fieldcheck"
	"github.com/apiconform/apiconform/refserver/registry"
)

// inputFormat is the format of a request body of Content-Type ct (protobuf
// is read as JSON after conversion); other media types are a 415.
func inputFormat(ct string) (format fieldcheck.Format, protobuf bool, err error) {
	if ct == "application/json" { // most bodies: what the parse below gives
		return fieldcheck.JSON, false, nil
	}
	if mt, _, _ := mime.ParseMediaType(ct); mt == protobufType {
		return fieldcheck.JSON, true, nil
	}
	switch f, ok := bodyFormat(ct); {
	case !ok:
		return 0, false, errUnsupportedMedia()
	case f == formatYAML:
		return fieldcheck.YAML, false, nil
	}
	return fieldcheck.JSON, false, nil
}

// bodyOf reads a request body in the given Content-Type as JSON or YAML.
func bodyOf(ct string, body []byte) ([]byte, fieldcheck.Format, error) {
	f, protobuf, err := inputFormat(ct)
	if err != nil || !protobuf {
		return body, f, err
	}
	j, err := protobufToJSON(body)
	return j, f, err
}

// toJSON converts a body that is not an object of the endpoint's kind
// (DeleteOptions, Scale), as bodyOf gives it, to JSON.
func toJSON(body []byte, f fieldcheck.Format) ([]byte, error) {
	if f == fieldcheck.JSON {
		return body, nil
	}
	j, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error converting YAML to JSON: %v", err))
	}
	return j, nil
}

// decoder decodes bodies of the request's kind and version.
func decoder(ri *requestInfo) fieldcheck.Decoder {
	gvk := schema.GroupVersionKind{Group: ri.kind.Group, Version: ri.version, Kind: ri.kind.Kind}
	return fieldcheck.Decoder{GVK: gvk, Schema: ri.kind.FieldSchema(ri.version)}
}

// decodeObject decodes the body of a create or update (JSON or YAML, as
// bodyOf gives it) at the request's level, and checks what fieldcheck leaves
// to the caller: a custom resource's apiVersion and kind.
func decodeObject(ri *requestInfo, body []byte, f fieldcheck.Format, level fieldcheck.Level) (registry.Object, []string, error) {
	obj, warnings, err := decoder(ri).Decode(body, f, level)
	if err != nil {
		return nil, nil, err
	}
	if err := checkTypeMeta(ri, obj); err != nil {
		return nil, nil, err
	}
	return obj, warnings, nil
}

// checkTypeMeta refuses a custom resource of another version (400) or kind
// (422, as validation does). fieldcheck already refused these for kinds
// with a Go type, and filled in a missing apiVersion and kind.
func checkTypeMeta(ri *requestInfo, obj registry.Object) error {
	apiVersion, _ := obj["apiVersion"].(string)
	if want := ri.kind.APIVersion(ri.version); apiVersion != want {
		return apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", apiVersion, want))
	}
	if kind, _ := obj["kind"].(string); kind != ri.kind.Kind {
		name, _ := registry.Meta(obj)["name"].(string)
		return apierrors.NewInvalid(schema.GroupKind{Group: ri.kind.Group, Kind: kind}, name, fieldErrs("kind", kind, "must be "+ri.kind.Kind))
	}
	return nil
}

// validateOptions checks the query options of a write as kube-apiserver
// does (422 naming CreateOptions, UpdateOptions or DeleteOptions), after
// the body's media type. PATCH options are the patch handler's.
func validateOptions(r *http.Request, verb string) error {
	q := query(r)
	switch verb {
	case "create":
		return fieldcheck.ValidateCreateOptions(metav1.CreateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")})
	case "update":
		return fieldcheck.ValidateUpdateOptions(metav1.UpdateOptions{DryRun: q["dryRun"], FieldManager: q.Get("fieldManager"), FieldValidation: q.Get("fieldValidation")})
	case "delete", "deletecollection":
		return fieldcheck.ValidateDeleteDryRun(q["dryRun"])
	}
	return nil
}

// level is the request's fieldValidation level; options names the options
// kind for the 422 of an unknown value.
func level(r *http.Request, options string) (fieldcheck.Level, error) {
	return fieldcheck.ParseLevel(query(r).Get("fieldValidation"), options)
}

// addWarnings sends warnings as Warning: 299 headers.
func (h *Handler) addWarnings(w http.ResponseWriter, warnings []string) {
	if h.cfg.Faults.Has(faults.NoWarningHeader) {
		return
	}
	for _, msg := range warnings {
		w.Header().Add("Warning", fmt.Sprintf("299 - %q", msg))
	}
}
