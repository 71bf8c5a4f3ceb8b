// Package v7beta1 is the newer version of the Frobber example, forked from
// the internal form: only the plural params (the singular field is gone, as
// the changing-the-API document allows a new version to do).
package v7beta1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Frobber is compat.apiconform.io/v7beta1 Frobber.
type Frobber struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// height of the frobber.
	Height int32 `json:"height"`
	// width of the frobber; defaults to 1.
	Width int32 `json:"width,omitempty"`
	// params are all of the params.
	Params []string `json:"params,omitempty"`
}

// FrobberList is a list of Frobbers.
type FrobberList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Frobber `json:"items"`
}
