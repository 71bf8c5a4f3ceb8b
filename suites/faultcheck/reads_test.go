package faultcheck_test

// readsMustFail: the resourceVersion and paging areas' rows of mustFail.
var readsMustFail = map[string][]string{}
