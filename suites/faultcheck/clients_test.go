package faultcheck_test

// clientsMustFail: the clients area's rows of mustFail.
var clientsMustFail = map[string][]string{}
