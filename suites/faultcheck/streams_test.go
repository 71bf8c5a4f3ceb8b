package faultcheck_test

import "github.com/apiconform/apiconform/refserver/faults"

// streamsMustFail: the watch and compatibility areas' rows of mustFail.
var streamsMustFail = map[string][]string{
	// Every plain watch from N starts with the current state: the table's
	// Start at Exact cell sees synthetic ADDED events, the order spec the
	// state instead of the changes, a compacted N is served instead of 410,
	// and a future N delivers the sentinel made before it exists. (It
	// fails WATCH-RESUME too, but only after a 15 s wait for an event.)
	faults.WatchIgnoresResourceVersion: {"RV-WATCH-RVN", "WATCH-ORDER", "WATCH-CHANGES-AFTER-RV", "WATCH-GONE-410",
		"WATCH-UNRECOGNIZED-RV-WAIT"},
	// Bookmarks lose their kind too.
	faults.WatchEventsWithoutTypeMeta: {"WATCH-EVENT-SHAPE", "WATCH-BOOKMARK-METADATA-ONLY"},
	faults.BookmarkCarriesObject:      {"WATCH-BOOKMARK-METADATA-ONLY"},
	faults.WatchGoneInternalError:     {"WATCH-GONE-410"},
	faults.AllowWatchBookmarksRefused: {"WATCH-BOOKMARK-OPTIONAL"},
	faults.FrobberV6ParamIgnored: {"COMPAT-FROBBER-CREATE-SINGULAR", "COMPAT-FROBBER-CREATE-BOTH", "COMPAT-FROBBER-CREATE-PLURAL-ONLY",
		"COMPAT-FROBBER-UPDATE-CHANGE-SINGULAR", "COMPAT-FROBBER-UPDATE-CLEAR-SINGULAR", "COMPAT-FROBBER-UPDATE-OLD-CLIENT"},
	// The PUT and the merge patch that clear param both keep it.
	faults.FrobberV6ParamRefilled:   {"COMPAT-FROBBER-UPDATE-CLEAR-SINGULAR"},
	faults.FrobberV6ParamsTruncated: {"COMPAT-FROBBER-VERSIONS"},
	// The unmodified GET of another version names the stored version.
	faults.CRDNoVersionConversion: {"COMPAT-ROUND-TRIP", "COMPAT-GET-PUT"},
	// The unmodified GET carries uid, creationTimestamp and managedFields
	// (the custom resource spec is also a round trip).
	faults.PutRefusesServerSetFields: {"COMPAT-GET-PUT", "COMPAT-ROUND-TRIP"},
}
