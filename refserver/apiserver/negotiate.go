package apiserver

import (
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/munnerz/goautoneg"

	"github.com/apiconform/apiconform/refserver/registry"
)

// format is the representation chosen for a response.
type format int

const (
	formatJSON format = iota
	formatYAML
	formatTable
	formatProtobuf
)

// accepts parses an Accept header in kube-apiserver's order: by q, then by
// specificity, stable otherwise.
func accepts(accept string) []goautoneg.Accept {
	if a, ok := commonAccepts[accept]; ok {
		return a
	}
	return goautoneg.ParseAccept(accept)
}

// commonAccepts are the parsed forms of the Accept headers clients send
// most, parsed once (every parse allocates); shared, so read-only.
var commonAccepts = func() map[string][]goautoneg.Accept {
	m := map[string][]goautoneg.Accept{}
	for _, a := range []string{"application/json", "application/json, */*", "*/*"} {
		m[a] = goautoneg.ParseAccept(a)
	}
	return m
}()

// negotiateFor picks the first Accept entry the server can serve; protobuf
// only when the kind has a protobuf form. Tables are JSON only.
func negotiateFor(accept string, protobufOK bool) (format, bool) {
	if strings.TrimSpace(accept) == "" {
		return formatJSON, true
	}
	for _, a := range accepts(accept) {
		mt := a.Type + "/" + a.SubType
		as := a.Params["as"]
		switch mt {
		case "application/json", "*/*", "application/*":
			switch as {
			case "":
				return formatJSON, true
			case "Table":
				if a.Params["g"] == "meta.k8s.io" && (a.Params["v"] == "v1" || a.Params["v"] == "v1beta1") {
					return formatTable, true
				}
			}
		case "application/yaml":
			if as == "" {
				return formatYAML, true
			}
		case protobufType:
			if as == "" && protobufOK {
				return formatProtobuf, true
			}
		}
	}
	return formatJSON, false
}

// negotiateKind is the early Accept check of a resource request: a custom
// resource has no protobuf form, and its 406 is the custom resource
// handler's (kube-apiserver answers it before acting, even for a create).
func negotiateKind(accept string, k *registry.Kind, version string) (format, error) {
	pb := kindHasProtobuf(k.Group, version, k.Kind)
	f, ok := negotiateFor(accept, pb)
	switch {
	case ok:
		return f, nil
	case pb:
		return f, errNotAcceptable()
	}
	return f, errNotAcceptableCustom()
}

// isPretty reports whether JSON is indented: ?pretty=<true> (strconv's
// booleans), else a browser, curl or wget User-Agent, as kube-apiserver's
// negotiation decides; the media type's pretty=1 parameter too.
func isPretty(r *http.Request) bool {
	if r == nil {
		return false
	}
	if strings.Contains(r.URL.RawQuery, "pretty") {
		if pp := query(r).Get("pretty"); pp != "" {
			b, _ := strconv.ParseBool(pp)
			return b
		}
	}
	ua := r.UserAgent()
	return strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
}

// bodyFormat classifies a request Content-Type: json, yaml, or unsupported.
func bodyFormat(ct string) (format, bool) {
	if ct == "" || ct == "application/json" { // what parsing the latter gives
		return formatJSON, true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return formatJSON, false
	}
	switch mt {
	case "application/json", "*/*":
		return formatJSON, true
	case "application/yaml":
		return formatYAML, true
	}
	return formatJSON, false
}
