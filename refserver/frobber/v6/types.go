// Package v6 is the stable version of the Frobber example: the singular
// param of old clients and, added compatibly in the same version, the plural
// params (the changing-the-API document's "Still API v6" struct).
package v6

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Frobber is compat.apiconform.io/v6 Frobber. Its Go type gives decoding the
// field names and types (and kube-apiserver's type-error wording).
type Frobber struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// height of the frobber.
	Height int32 `json:"height"`
	// width of the frobber; defaults to 1.
	Width int32 `json:"width,omitempty"`
	// param is the first param (old clients know only this field).
	Param string `json:"param,omitempty"`
	// params are all of the params; params[0] equals param.
	Params []string `json:"params,omitempty"`
}

// FrobberList is a list of Frobbers.
type FrobberList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Frobber `json:"items"`
}
