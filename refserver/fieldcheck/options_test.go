package fieldcheck

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Observed on kube-apiserver v1.36.3 (POST/DELETE .../configmaps?<query>).
func TestValidateOptions(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		message string
	}{
		{"dryRun=All", ValidateCreateOptions(metav1.CreateOptions{DryRun: []string{"All"}}), ""},
		{"dryRun=All&dryRun=All", ValidateCreateOptions(metav1.CreateOptions{DryRun: []string{"All", "All"}}), ""},
		{"no options", ValidateUpdateOptions(metav1.UpdateOptions{}), ""},
		{"dryRun=Foo", ValidateCreateOptions(metav1.CreateOptions{DryRun: []string{"Foo"}}),
			`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`},
		{"bare dryRun", ValidateCreateOptions(metav1.CreateOptions{DryRun: []string{""}}),
			`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: [""]: supported values: "All"`},
		{"three bad options", ValidateCreateOptions(metav1.CreateOptions{DryRun: []string{"Foo"}, FieldValidation: "Bar", FieldManager: "a\x01b"}),
			`CreateOptions.meta.k8s.io "" is invalid: [fieldManager: Invalid value: "a\x01b": invalid character U+0001 (at position 1), dryRun: Unsupported value: ["Foo"]: supported values: "All", fieldValidation: Unsupported value: "Bar": supported values: "", "Ignore", "Strict", "Warn"]`},
		{"PUT fieldValidation=Nope", ValidateUpdateOptions(metav1.UpdateOptions{FieldValidation: "Nope"}),
			`UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Nope": supported values: "", "Ignore", "Strict", "Warn"`},
		{"DELETE dryRun=Foo", ValidateDeleteDryRun([]string{"Foo"}),
			`DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`},
	}
	for _, tc := range cases {
		if tc.message == "" {
			if tc.err != nil {
				t.Errorf("%s: %v", tc.name, tc.err)
			}
			continue
		}
		expectStatus(t, tc.err, 422, "Invalid", tc.message)
	}
}
