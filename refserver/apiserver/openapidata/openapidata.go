// Package openapidata is the shape of the OpenAPI data the reference server
// embeds: kube-apiserver's published definitions trimmed to the served kinds
// (written by refserver/apiserver/openapigen, read by refserver/apiserver).
package openapidata

// Data is the embedded file's shape.
type Data struct {
	V2 struct {
		Paths       map[string]any `json:"paths"`
		Definitions map[string]any `json:"definitions"`
		Parameters  map[string]any `json:"parameters"`
	} `json:"v2"`
	// V3 holds each built-in group-version's document, trimmed.
	V3 map[string]map[string]any `json:"v3"`
	// CRD holds the path templates per scope, and the v3 schemas they use.
	CRD struct {
		V2           map[string]map[string]any `json:"v2"`
		V3           map[string]map[string]any `json:"v3"`
		V3Components map[string]any            `json:"v3Components"`
	} `json:"crd"`
}
