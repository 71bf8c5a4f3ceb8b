package faultcheck_test

// streamsMustFail: the watch and compatibility areas' rows of mustFail.
var streamsMustFail = map[string][]string{}
