package fieldcheck

import (
	"encoding/hex"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"

	"github.com/apiconform/apiconform/refserver/jsonvalue"
)

// Reading a request body's JSON and its apiVersion and kind.

// parse reads the body as a JSON object (in one pass when jsonvalue.Parse can,
// else with the library) and fills apiVersion and kind from the endpoint
// when missing.
// A custom resource is not filled in: without a kind (or as JSON null) it is
// unrecognized, and a missing apiVersion is left for the caller's version
// check ("the API version in the data () does not match ...").
func (d Decoder) parse(data, original []byte) (map[string]any, head, error) {
	obj, distinct, fast := jsonvalue.ParseDistinct(data, jsonvalue.PreserveInts)
	var err error
	if !fast || !fastChecks {
		obj, distinct = nil, false
		err = sigsjson.UnmarshalCaseSensitivePreserveInts(data, &obj)
	}
	h, ok := typeMeta(data, obj, distinct)
	if err != nil || !ok {
		// The body is not an object with string apiVersion and kind: the
		// typed read's error comes first, as kube-apiserver reports it.
		var typed typeMetaJSON
		if terr := sigsjson.UnmarshalCaseSensitivePreserveInts(data, &typed); terr != nil {
			return nil, head{}, d.unrecognized("couldn't get version/kind; json parse error: "+terr.Error(), original)
		}
		if err != nil && d.Schema.custom && typed.Kind != "" {
			// Valid JSON with apiVersion and kind whose object cannot be
			// read: a number beyond float64's range. kube-apiserver's second
			// pass, into an unstructured object, reports it.
			gv, _ := schema.ParseGroupVersion(typed.APIVersion)
			return nil, head{}, apierrors.NewBadRequest(d.prefix(head{version: gv.Version, kind: typed.Kind}) + err.Error())
		}
		if err != nil {
			return nil, head{}, d.unrecognized("couldn't get version/kind; json parse error: "+err.Error(), original)
		}
		h = typed
	}
	if d.Schema.custom && (obj == nil || h.Kind == "") {
		return nil, head{}, d.unrecognized(fmt.Sprintf("Object 'Kind' is missing in '%s'", original), original)
	}
	if obj == nil {
		obj = map[string]any{} // a JSON null is an empty object: defaults, then validation, decide
	}
	var added, filled int
	fill := func(key string, v any) {
		if _, ok := obj[key]; !ok {
			added++
		}
		filled++
		obj[key] = v
	}
	gv := d.GVK.GroupVersion()
	if h.APIVersion != "" {
		if p, err := schema.ParseGroupVersion(h.APIVersion); err == nil {
			gv = p
		}
	} else if !d.Schema.custom {
		fill("apiVersion", d.GVK.GroupVersion().String())
	}
	kind := h.Kind
	if kind == "" {
		kind = d.GVK.Kind
		fill("kind", kind)
	}
	out := head{version: gv.Version, kind: kind, added: added, filled: filled, distinct: distinct}
	if !d.Schema.custom && gv != d.GVK.GroupVersion() {
		// A built-in kind's scheme knows only the endpoint's version.
		return nil, head{}, apierrors.NewBadRequest(d.prefix(out) + fmt.Sprintf("no kind %q is registered for version %q in scheme \"pkg/runtime/scheme.go:111\"", kind, h.APIVersion))
	}
	return obj, out, nil
}

// typeMetaJSON is the apiVersion and kind of a body read as kube-apiserver's
// first pass reads them: an unnamed struct, as its errors name it.
type typeMetaJSON = struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// typeMeta takes apiVersion and kind from the decoded body, saving a second
// parse. ok is false when the typed read could answer otherwise: either is
// there but not a string or null (the typed read's error), or the body may
// name one of them twice (the typed read reports a wrong type in any copy).
// distinct: jsonvalue read obj from data and saw no key twice (nor a key
// with an escape, which it does not read), so the names are there once.
func typeMeta(data []byte, obj map[string]any, distinct bool) (typeMetaJSON, bool) {
	if !distinct && !typeMetaKeysOnce(data) {
		return typeMetaJSON{}, false
	}
	apiVersion, ok1 := stringOrNull(obj["apiVersion"])
	kind, ok2 := stringOrNull(obj["kind"])
	return typeMetaJSON{APIVersion: apiVersion, Kind: kind}, ok1 && ok2
}

// typeMetaKeysOnce scans the keys of data's top-level object (data is
// valid JSON) and reports whether apiVersion and kind each occur at most
// once. A top-level key with an escape (\u006bind is kind) answers false.
func typeMetaKeysOnce(data []byte) bool {
	var apiVersion, kind int
	depth, key := 0, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '{', '[':
			depth++
			key = depth == 1 && c == '{'
		case '}', ']':
			depth--
		case ',':
			key = depth == 1
		case '"':
			start, escaped := i+1, false
			for i += 1 + jsonvalue.PlainRun(data[i+1:]); i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					escaped = true
					i++
				}
			}
			if !key {
				continue
			}
			key = false
			if escaped {
				return false
			}
			switch string(data[start:min(i, len(data))]) {
			case "apiVersion":
				apiVersion++
			case "kind":
				kind++
			}
		}
	}
	return apiVersion <= 1 && kind <= 1
}

func stringOrNull(v any) (string, bool) {
	if v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}

// head is what parse read of a body's apiVersion and kind.
type head struct {
	version, kind string // as the body gives them, or the endpoint's
	added         int    // keys parse added to the object (the body has no such key)
	filled        int    // keys parse set (added, or a null or "" replaced)
	distinct      bool   // the body's objects are known to repeat no key
}

// prefix is kube-apiserver's lead-in for decoding errors of a body with
// head h ("ConfigMap in version "v1" cannot be handled as a ConfigMap: "),
// made only when there is an error.
func (d Decoder) prefix(h head) string {
	return fmt.Sprintf("%s in version %q cannot be handled as a %s: ", h.kind, h.version, d.GVK.Kind)
}

// unrecognized is kube-apiserver's 400 for a body it cannot even read.
func (d Decoder) unrecognized(msg string, body []byte) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %s (%s)", d.GVK.Kind, msg, summarize(body, 30)))
}

// summarize shows the start of a body: as text when it looks like a JSON
// object, in hex otherwise (kube-apiserver's choice).
func summarize(b []byte, max int) string {
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	default:
		if len(b) > max {
			return hex.EncodeToString(b[:max]) + " ..."
		}
		return hex.EncodeToString(b)
	}
}
