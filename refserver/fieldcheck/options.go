package fieldcheck

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateCreateOptions checks a POST's query options (fieldManager, dryRun,
// fieldValidation) and returns kube-apiserver's 422, all problems in one:
//
//	CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"
//
// dryRun holds every value of the parameter; note that a bare `?dryRun` is
// [""], which kube-apiserver v1.36.3 refuses like any other unknown value.
// (Patches: apply.ValidatePatchOptions.)
func ValidateCreateOptions(o metav1.CreateOptions) error {
	if noOptions(o.DryRun, o.FieldManager, o.FieldValidation) {
		return nil
	}
	return optionsError("CreateOptions", metavalidation.ValidateCreateOptions(&o))
}

// ValidateUpdateOptions is ValidateCreateOptions for a PUT (UpdateOptions).
func ValidateUpdateOptions(o metav1.UpdateOptions) error {
	if noOptions(o.DryRun, o.FieldManager, o.FieldValidation) {
		return nil
	}
	return optionsError("UpdateOptions", metavalidation.ValidateUpdateOptions(&o))
}

// noOptions reports a write that gives none of the options: nothing to
// refuse, which the library's validation finds only after building the
// path of each (most writes; 2–3% of an update's allocations went there).
func noOptions(dryRun []string, fieldManager, fieldValidation string) bool {
	return dryRun == nil && fieldManager == "" && fieldValidation == ""
}

// ValidateDeleteDryRun checks a DELETE's dryRun values (DeleteOptions).
func ValidateDeleteDryRun(dryRun []string) error {
	return optionsError("DeleteOptions", metavalidation.ValidateDryRun(field.NewPath("dryRun"), dryRun))
}

func optionsError(kind string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: kind}, "", errs)
}
