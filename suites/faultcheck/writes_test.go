package faultcheck_test

// writesMustFail: the conventions, dry-run, field-validation and apply areas' rows of mustFail.
var writesMustFail = map[string][]string{}
