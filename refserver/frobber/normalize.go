package frobber

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Normalize links param and params of a v6 object as the document's
// normalizeParams does, guessing what the user meant from what changed; new
// is changed in place, old is the stored object in the same version (nil on
// create). Only v6 has both fields: a v7beta1 object is left alone.
//
// Create: only param set (an old client) → params = [param].
// Update (including patch):
//   - params emptied, param unchanged → params = old params (an old client
//     that cannot send the field it does not know);
//   - param cleared, params unchanged → params cleared (an old client
//     clearing the field it knows);
//   - param changed (not cleared), params unchanged → params = [param].
//
// Everything else (both set, neither set, both changed) is left for Validate.
func Normalize(new, old map[string]any, version string) error {
	if err := checkVersion(version); err != nil {
		return err
	}
	if version != V6 {
		return nil
	}
	after, err := linked(new)
	if err != nil {
		return err
	}
	if old == nil {
		if after.param != "" && len(after.params) == 0 {
			setStrings(new, "params", []string{after.param})
		}
		return nil
	}
	before, err := linked(old)
	if err != nil {
		return err
	}
	if len(before.params) > 0 && len(after.params) == 0 && before.param == after.param {
		after.params = before.params
	}
	if before.param != after.param {
		unchangedPlural := slices.Equal(before.params, after.params)
		switch {
		case before.param != "" && after.param == "":
			if unchangedPlural {
				after.params = nil
			}
		case unchangedPlural:
			after.params = []string{after.param}
		}
	}
	setStrings(new, "params", after.params)
	return nil
}

type paramFields struct {
	param  string
	params []string
}

func linked(obj map[string]any) (paramFields, error) {
	p, err := stringField(obj, "param")
	if err != nil {
		return paramFields{}, err
	}
	ps, err := stringsField(obj, "params")
	if err != nil {
		return paramFields{}, err
	}
	return paramFields{p, ps}, nil
}

// Validate checks a Frobber in its version (named by its apiVersion) about
// to be written; old is the stored object in the same version (nil on
// create). In v6, params needs param, and params[0] must equal param (the
// document: any other case is an error and must be rejected); param without
// params is valid (reads fill params = [param]). In every
// version height may not be negative, width must be positive and no param
// may be empty.
func Validate(obj, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	version, err := versionOf(obj)
	if err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("apiVersion"), obj["apiVersion"], err.Error())}
	}
	for _, key := range []string{"height", "width"} {
		n, err := intField(obj, key)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(field.NewPath(key), obj[key], "must be an integer"))
		case key == "height" && n < 0:
			errs = append(errs, field.Invalid(field.NewPath(key), n, "must be greater than or equal to 0"))
		case key == "width" && n < 1:
			errs = append(errs, field.Invalid(field.NewPath(key), n, "must be greater than or equal to 1"))
		case n > 1<<31-1:
			errs = append(errs, field.Invalid(field.NewPath(key), n, fmt.Sprintf("must be less than or equal to %d", 1<<31-1)))
		}
	}
	params, err := stringsField(obj, "params")
	if err != nil {
		return append(errs, field.Invalid(field.NewPath("params"), obj["params"], "must be a list of strings"))
	}
	for i, p := range params {
		if p == "" {
			errs = append(errs, field.Required(field.NewPath("params").Index(i), "may not be empty"))
		}
	}
	if version != V6 {
		return errs
	}
	param, err := stringField(obj, "param")
	if err != nil {
		return append(errs, field.Invalid(field.NewPath("param"), obj["param"], "must be a string"))
	}
	switch {
	case len(params) > 0 && param == "":
		errs = append(errs, field.Required(field.NewPath("param"), "must be set when params is set (params[0] must equal param)"))
	case len(params) > 0 && params[0] != param:
		errs = append(errs, field.Invalid(field.NewPath("params").Index(0), params[0], fmt.Sprintf("must equal param (%q)", param)))
	}
	return errs
}
