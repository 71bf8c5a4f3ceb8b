package faultcheck_test

// resourcesMustFail: the resources and deletion areas' rows of mustFail.
var resourcesMustFail = map[string][]string{}
