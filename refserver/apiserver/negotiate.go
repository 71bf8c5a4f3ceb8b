package apiserver

import (
	"mime"
	"strings"
)

// format is the representation chosen for a response.
type format int

const (
	formatJSON format = iota
	formatYAML
	formatTable
)

// negotiate picks the first Accept entry the server can serve.
func negotiate(accept string) (format, bool) {
	if strings.TrimSpace(accept) == "" {
		return formatJSON, true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "application/json", "*/*", "application/*":
			switch params["as"] {
			case "":
				return formatJSON, true
			case "Table":
				if params["g"] == "meta.k8s.io" && (params["v"] == "v1" || params["v"] == "v1beta1") {
					return formatTable, true
				}
			}
		case "application/yaml":
			if params["as"] == "" {
				return formatYAML, true
			}
		}
	}
	return formatJSON, false
}

// bodyFormat classifies a request Content-Type: json, yaml, or unsupported.
func bodyFormat(ct string) (format, bool) {
	if ct == "" {
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
