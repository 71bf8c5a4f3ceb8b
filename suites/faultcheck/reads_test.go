package faultcheck_test

import "github.com/apiconform/apiconform/refserver/faults"

// readsMustFail: the resourceVersion and paging areas' rows of mustFail.
var readsMustFail = map[string][]string{
	// Every page holds the whole collection: no page respects limit, none
	// carries a token, and the continue cells have no first page to go on from.
	faults.LimitIgnored: {"PAGE-LIMIT", "PAGE-CONTINUE-WHEN-MORE", "PAGE-CONTINUE-NEXT", "PAGE-CONSTANT-RV",
		"RV-LIST-UNSET-LIMIT-NORV"},
	// The first item of every later page repeats the last of the page before.
	faults.ContinueRepeatsLastItem: {"PAGE-CONTINUE-NEXT"},
	// A list holding the whole rest still carries a token.
	faults.ContinueOnLastPage:       {"PAGE-LAST-EMPTY-CONTINUE"},
	faults.RemainingCountZeroOnLast: {"PAGE-REMAINING-NONE-LAST"},
	faults.ContinuedPageCurrentRV:   {"PAGE-CONSTANT-RV", "PAGE-CONSISTENT-SNAPSHOT", "RV-SEM-CONTINUE-EXACT"},
	faults.MalformedContinue500:     {"PAGE-CONTINUE-MALFORMED"},
	// The offered token lists the first page's items again.
	faults.InconsistentTokenRestarts: {"PAGE-CONTINUE-INCONSISTENT-TOKEN"},
	faults.CompactedAnswers500:       {"RV-GONE-410", "RV-SEM-EXACT-GONE", "PAGE-CONTINUE-EXPIRED-410"},
	// Most Recent reads miss the last write (the list cells' fixture sees it first).
	faults.LaggingCacheReads: {"RV-GET-NORV", "RV-SEM-MOST-RECENT", "RV-LIST-UNSET-NOLIMIT-NORV", "RV-LIST-UNSET-LIMIT-NORV"},
	// Not older than reads show the state before the requested resourceVersion.
	faults.NotOlderThanUnwaited: {"RV-GET-RVN", "RV-SEM-NOT-OLDER-THAN", "RV-LIST-UNSET-NOLIMIT-RVN",
		"RV-LIST-NOTOLDERTHAN-NOLIMIT-RVN", "RV-LIST-NOTOLDERTHAN-LIMIT-RVN"},
	// Any reads answer 410 instead of a state.
	faults.RV0ReadAsRevision: {"RV-GET-RV0", "RV-SEM-ANY", "RV-LIST-UNSET-NOLIMIT-RV0", "RV-LIST-UNSET-LIMIT-RV0",
		"RV-LIST-NOTOLDERTHAN-NOLIMIT-RV0", "RV-LIST-NOTOLDERTHAN-LIMIT-RV0"},
	// The table's Invalid cells are served.
	faults.ListOptionsUnvalidated: {"RV-MATCH-REQUIRES-RV", "RV-LIST-EXACT-NOLIMIT-NORV", "RV-LIST-EXACT-NOLIMIT-RV0",
		"RV-LIST-EXACT-LIMIT-NORV", "RV-LIST-EXACT-LIMIT-RV0", "RV-LIST-NOTOLDERTHAN-NOLIMIT-NORV",
		"RV-LIST-NOTOLDERTHAN-LIMIT-NORV", "RV-LIST-UNSET-CONTINUE-RVN"},
	faults.FutureRVServed:     {"RV-UNAVAILABLE-504", "RV-UNAVAILABLE-RETRY-AFTER", "RV-TOO-LARGE-MESSAGE"},
	faults.ResourceVersionHex: {"RV-COMPARABLE"},

	// Faults of other areas that these areas' specs catch too (appended to
	// their rows by unionRows).
	faults.IgnoreRVMatchExact: {"RV-GONE-410"},         // the dropped version is served: no 410
	faults.WriteAnswerOldRV:   {"RV-CHANGES-ON-WRITE"}, // a patch answers the create's resourceVersion
}
