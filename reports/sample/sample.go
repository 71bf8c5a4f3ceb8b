// Package sample holds a small hand-made catalogue and results used by the
// renderers' golden tests and by the screenshot helper. It is deliberately
// independent of spec/catalog's contents so goldens do not churn.
package sample

import (
	"time"

	"github.com/apiconform/apiconform/reports"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
	"github.com/apiconform/apiconform/spec/coverage"
)

const (
	concepts   = "000_3a1b3094088024c1.txt"
	apiChanges = "004_e6d3ce6622f9ab07.txt"
)

// Catalogue is a fixture catalogue: four areas, every level, one known
// kube-apiserver deviation, one untestable requirement, one no run has a
// spec of, three tables and a coverage map of four documents.
func Catalogue() reports.Catalogue {
	return reports.Catalogue{
		Coverage: coverageMap(),
		Areas:    []string{"resourceversion", "paging", "watch", "compatibility"},
		Requirements: []catalog.Requirement{
			{ID: "RV-GET-UNSET-MOST-RECENT", Area: "resourceversion", Level: catalog.Must,
				Title:  "get without resourceVersion returns the most recent object",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for get and list", Quote: "Most Recent"}},
			{ID: "RV-GET-ZERO-ANY", Area: "resourceversion", Level: catalog.May,
				Title:  "get with resourceVersion=0 may return any version",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for get and list", Quote: "Any"}},
			{ID: "RV-LIST-EXACT-LIMIT", Area: "resourceversion", Level: catalog.Must,
				Title:  "list with limit and an exact resourceVersion serves that revision",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for get and list", Quote: "Exact"}},
			{ID: "RV-LIST-MATCH-WITHOUT-RV", Area: "resourceversion", Level: catalog.Must,
				Title:  "resourceVersionMatch without resourceVersion is rejected",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for get and list", Quote: "Setting the resourceVersionMatch parameter without setting resourceVersion is not valid."},
				Deviation: &catalog.Deviation{
					Observed: "422 Invalid with message \"resourceVersionMatch is forbidden unless resourceVersion is provided\"",
					DocSays:  "Setting the resourceVersionMatch parameter without setting resourceVersion is not valid.",
					Version:  "v1.36.3"}},
			{ID: "RV-LIST-CONTINUE-RV-400", Area: "resourceversion", Level: catalog.Must,
				Title:  "continue with a non-zero resourceVersion is rejected with 400",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for get and list", Quote: "Invalid, HTTP 400 Bad Request"}},
			// No sample run has a spec of it: a requirement outside the run's focus.
			{ID: "RV-GONE-410", Area: "resourceversion", Level: catalog.Must,
				Title:  "a list at a compacted resourceVersion gets 410 Gone",
				Source: catalog.Source{Doc: concepts, Section: `"410 Gone" responses`}},
			{ID: "PAGE-CONTINUE-CONSISTENT", Area: "paging", Level: catalog.Must,
				Title:  "all pages of a list are served from one snapshot",
				Source: catalog.Source{Doc: concepts, Section: "Retrieving large results sets in chunks"}},
			{ID: "PAGE-EXPIRED-410", Area: "paging", Level: catalog.Should,
				Title:  "an expired continue token gets 410 Gone with a fresh token",
				Source: catalog.Source{Doc: concepts, Section: "Retrieving large results sets in chunks"}},
			{ID: "PAGE-LIMIT-HINT", Area: "paging", Level: catalog.May,
				Title:      "servers may return fewer items than limit",
				Source:     catalog.Source{Doc: concepts, Section: "Retrieving large results sets in chunks"},
				Untestable: "a server is free to return any number up to limit; no response can violate it"},
			{ID: "WATCH-RV-UNSET-MOST-RECENT", Area: "watch", Level: catalog.Must,
				Title:  "watch without resourceVersion starts with synthetic ADDED events",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for watch", Quote: "Get State and Start at Most Recent"}},
			{ID: "WATCH-RV-EXACT", Area: "watch", Level: catalog.Must,
				Title:  "watch from an exact resourceVersion sends only later changes",
				Source: catalog.Source{Doc: concepts, Section: "Semantics for watch", Quote: "Start at Exact"}},
			{ID: "WATCH-BOOKMARKS", Area: "watch", Level: catalog.Should,
				Title:  "allowWatchBookmarks yields BOOKMARK events",
				Source: catalog.Source{Doc: concepts, Section: "Watch bookmarks"}},
			// A requirement from a Chinese document: English rendering and upstream link.
			{ID: "COMPAT-ROUND-TRIP", Area: "compatibility", Level: catalog.Must,
				Title: "an object written in one version reads back in every served version without loss",
				Source: catalog.Source{Doc: apiChanges, Section: "关于兼容性", SectionEn: "On compatibility",
					Quote:   "必须能够往返更改(转换为不同的 API 版本并返回)而不会丢失信息。",
					QuoteEn: "It must be possible to round-trip the change (convert to different API versions and back) with no loss of information."}},
		},
		Tables: []reports.DocTable{
			{ID: "rv-get", Title: "resourceVersion for get", Header: []string{"resourceVersion unset", `resourceVersion="0"`, `resourceVersion="{value other than 0}"`},
				Rows: [][]reports.DocCell{{
					{Text: "Most Recent", Requirements: []string{"RV-GET-UNSET-MOST-RECENT"}},
					{Text: "Any", Requirements: []string{"RV-GET-ZERO-ANY"}},
					{Text: "Not older than"},
				}}},
			{ID: "rv-list", Title: "resourceVersionMatch and paging parameters for list",
				Header: []string{"resourceVersionMatch param", "paging params", "resourceVersion not set", `resourceVersion="0"`, `resourceVersion="{value other than 0}"`},
				Rows: [][]reports.DocCell{
					{{Text: "unset"}, {Text: "limit=<n>, continue unset"}, {Text: "Most Recent"}, {Text: "Any"}, {Text: "Exact", Requirements: []string{"RV-LIST-EXACT-LIMIT"}}},
					{{Text: "unset"}, {Text: "limit=<n>, continue=<token>"}, {Text: "Continue Token, Exact", Requirements: []string{"PAGE-CONTINUE-CONSISTENT"}}, {Text: "Invalid, treated as Continue Token, Exact"}, {Text: "Invalid, HTTP 400 Bad Request", Requirements: []string{"RV-LIST-CONTINUE-RV-400"}}},
					{{Text: "resourceVersionMatch=Exact"}, {Text: "limit unset"}, {Text: "Invalid", Requirements: []string{"RV-LIST-MATCH-WITHOUT-RV"}}, {Text: "Invalid"}, {Text: "Exact"}},
				}},
			{ID: "rv-watch", Title: "resourceVersion for watch", Header: []string{"resourceVersion unset", `resourceVersion="0"`, `resourceVersion="{value other than 0}"`},
				Rows: [][]reports.DocCell{{
					{Text: "Get State and Start at Most Recent", Requirements: []string{"WATCH-RV-UNSET-MOST-RECENT"}},
					{Text: "Get State and Start at Any"},
					{Text: "Start at Exact", Requirements: []string{"WATCH-RV-EXACT"}},
				}}},
		},
	}
}

// coverageMap is a small coverage map over the fixture's requirements:
// sections with a failing, a skipped and an unrun requirement, one whose
// requirements all pass, static, untestable and gap sections, and a Chinese
// rendering mapped onto English sections.
func coverageMap() coverage.Map {
	const conventions, rv = "001_1514b8991cf2916c.txt", "002_c4e072c22cec5db1.txt"
	covered := func(doc, title, parent string, reqs ...string) coverage.Section {
		return coverage.Section{Doc: doc, Title: title, Parent: parent, Status: coverage.Covered, Requirements: reqs}
	}
	getList := []string{"RV-GET-UNSET-MOST-RECENT", "RV-GET-ZERO-ANY", "RV-LIST-CONTINUE-RV-400", "RV-LIST-EXACT-LIMIT", "RV-LIST-MATCH-WITHOUT-RV"}
	watch := []string{"WATCH-RV-EXACT", "WATCH-RV-UNSET-MOST-RECENT"}
	params := covered(rv, "ResourceVersion 相关参数", "", append(append([]string{}, getList...), watch...)...)
	params.SameAs = []string{"Semantics for get and list", "Semantics for watch"}
	return coverage.Map{
		Documents: []coverage.Document{{Doc: concepts, Title: "Kubernetes API Concepts"}, {Doc: conventions, Title: "API Conventions"},
			{Doc: rv, Title: "Resource Version (Chinese)"}, {Doc: apiChanges, Title: "Changing the API (Chinese)"}},
		Sections: []coverage.Section{
			covered(concepts, "Watch bookmarks", "Efficient detection of changes", "WATCH-BOOKMARKS"),
			covered(concepts, "Retrieving large results sets in chunks", "", "PAGE-CONTINUE-CONSISTENT", "PAGE-EXPIRED-410", "PAGE-LIMIT-HINT"),
			{Doc: concepts, Title: "Resource versions", Status: coverage.Untestable, Untestable: "introduction: states no behaviour"},
			covered(concepts, "Semantics for get and list", "Resource versions", getList...),
			covered(concepts, "Semantics for watch", "Resource versions", watch...),
			covered(concepts, `"410 Gone" responses`, "Resource versions", "RV-GONE-410"),
			{Doc: conventions, Title: "Units", Status: coverage.Static, Static: []string{"duration-seconds"}},
			{Doc: conventions, Title: "Events", Status: coverage.Untestable, Untestable: "concerns the components that emit events, not the API machinery that stores them"},
			{Doc: conventions, Title: "Validation", Status: coverage.Gap, Gap: "testable, not yet catalogued (issue #99)"},
			params,
			covered(apiChanges, "关于兼容性", "", "COMPAT-ROUND-TRIP"),
			{Doc: apiChanges, Title: "生成代码", Status: coverage.Untestable, Untestable: "about code generation in Kubernetes' source tree"},
		},
	}
}

var start = time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC)

func spec(area, name string, outcome result.Outcome, reqs ...string) result.SpecResult {
	return result.SpecResult{Name: area + " " + name, Area: area, Requirements: reqs, Outcome: outcome,
		Duration: result.Duration(120 * time.Millisecond)}
}

// RefServer is a run against the reference server: one failure with exchanges, one skip,
// three specs that recorded what they saw.
func RefServer() result.Result {
	failed := spec("paging", "serves every page from the first page's snapshot", result.Failed, "PAGE-CONTINUE-CONSISTENT")
	failed.Failure = &result.Failure{
		Message:  "page 2 contains pod \"p-7\" created after page 1 was served\nExpected\n    <[]string | len:3>: [p-5, p-6, p-7]\nnot to contain element\n    <string>: p-7",
		Location: "suites/paging/continue_test.go:88",
	}
	failed.Verdict = "page 2 lists p-7, created after page 1 was served (GET /api/v1/namespaces/ac-paging-x7/pods?limit=2&continue=…)"
	failed.Exchanges = []result.Exchange{
		{Method: "POST", URL: "http://127.0.0.1:38211/api/v1/namespaces", Role: result.Setup,
			RequestBody: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"ac-paging-x7"}}`, Status: 201,
			ResponseBody: `{"kind":"Namespace","apiVersion":"v1","metadata":{"name":"ac-paging-x7","resourceVersion":"40","managedFields":[{"manager":"apiconform","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{}}}}]},"status":{"phase":"Active"}}`},
		{Method: "GET", URL: "http://127.0.0.1:38211/api/v1/namespaces/ac-paging-x7/pods?limit=2",
			RequestHeaders: []result.Header{{Name: "Accept", Value: "application/json"}, {Name: "Authorization", Value: "Bearer sample-not-a-secret"}},
			Status:         200, ResponseHeaders: []result.Header{{Name: "Content-Type", Value: "application/json"}},
			ResponseBody: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"41","continue":"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDF9"},"items":[{"metadata":{"name":"p-1"}},{"metadata":{"name":"p-2"}}]}`},
		{Method: "GET", URL: "http://127.0.0.1:38211/api/v1/namespaces/ac-paging-x7/pods?limit=2&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDF9",
			RequestHeaders: []result.Header{{Name: "Accept", Value: "application/json"}},
			Status:         200, ResponseHeaders: []result.Header{{Name: "Content-Type", Value: "application/json"}},
			ResponseBody: `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"44"},"items":[{"metadata":{"name":"p-5"}},{"metadata":{"name":"p-7"}}]}`,
			Role:         result.Decisive},
		{Method: "DELETE", URL: "http://127.0.0.1:38211/api/v1/namespaces/ac-paging-x7", Role: result.Teardown, Status: 200},
	}
	failed.Observations = []result.Observation{{Name: "snapshot", Text: "page 1 at resourceVersion 41, page 2 at 44"}}
	anyRV := spec("resourceversion", "get with resourceVersion=0 answers", result.Passed, "RV-GET-ZERO-ANY")
	anyRV.Observations = []result.Observation{{Name: "Any", Text: "served 40; latest is 41"}}
	expired := spec("paging", "answers 410 Gone for a compacted continue token", result.Passed, "PAGE-EXPIRED-410", "PAGE-CONTINUE-CONSISTENT")
	expired.Observations = []result.Observation{
		{Name: "expired token", Text: "410 Expired: The provided continue parameter is too old to display a consistent list result."},
		{Name: "inconsistent token", Text: "offered; it listed 3 items from the latest state"},
	}
	skipped := spec("watch", "sends BOOKMARK events when asked", result.Skipped, "WATCH-BOOKMARKS")
	skipped.SkipReason = "target does not advertise watch bookmarks"
	return result.Result{
		SchemaVersion: result.SchemaVersion,
		Target: result.Target{Name: "refserver", Server: "http://127.0.0.1:38211", Version: "v0.1.0-apiconform",
			Capabilities: map[string]bool{"watchList": false, "bookmarks": false, "dryRun": true}},
		StartedAt: start,
		Duration:  result.Duration(41*time.Second + 300*time.Millisecond),
		Specs: []result.SpecResult{
			spec("resourceversion", "get without resourceVersion returns the latest write", result.Passed, "RV-GET-UNSET-MOST-RECENT"),
			anyRV,
			spec("resourceversion", "list with limit at an old resourceVersion serves that revision", result.Passed, "RV-LIST-EXACT-LIMIT"),
			spec("resourceversion", "rejects resourceVersionMatch without resourceVersion", result.Passed, "RV-LIST-MATCH-WITHOUT-RV"),
			spec("resourceversion", "rejects continue with resourceVersion=5", result.Passed, "RV-LIST-CONTINUE-RV-400"),
			failed,
			expired,
			spec("watch", "starts with ADDED events when resourceVersion is unset", result.Passed, "WATCH-RV-UNSET-MOST-RECENT"),
			spec("watch", "sends only later changes from an exact resourceVersion", result.Passed, "WATCH-RV-EXACT"),
			skipped,
			spec("compatibility", "round-trips a Frobber through v6 and v7beta1", result.Passed, "COMPAT-ROUND-TRIP"),
		},
	}
}

// Erroring is a run in which the harness could not finish one check (a
// transport error: not a conformance failure) and one requirement does not
// apply to the target.
func Erroring() result.Result {
	r := RefServer()
	r.Target.Name = "cluster"
	r.Target.Server = "https://10.0.0.1:6443"
	for i := range r.Specs {
		s := &r.Specs[i]
		switch s.Requirements[0] {
		case "WATCH-RV-EXACT":
			s.Outcome = result.Errored
			s.Failure = &result.Failure{Message: "transport error: GET /api/v1/namespaces/ac-watch-q1/configmaps?watch=1&resourceVersion=17: read: connection reset by peer",
				Location: "suites/watch/watch.go:57"}
			s.Exchanges = []result.Exchange{{Method: "GET", URL: "https://10.0.0.1:6443/api/v1/namespaces/ac-watch-q1/configmaps?watch=1&resourceVersion=17",
				Note: "transport error: read: connection reset by peer", Role: result.Decisive}}
		case "COMPAT-ROUND-TRIP":
			s.Outcome = result.NotApplicable
			s.SkipReason = "the Frobber group (compat.apiconform.io) is served only by the reference server"
		}
	}
	return r
}

// Incomplete is a run interrupted after 7 of 11 specs: the spec running at
// the interrupt is an error, the ones after it never ran.
func Incomplete() result.Result {
	r := RefServer()
	r.Duration = result.Duration(9 * time.Second)
	r.Incomplete = &result.Incomplete{Cause: result.Interrupted, Done: 7, Total: len(r.Specs)}
	for i := range r.Specs {
		s := &r.Specs[i]
		switch {
		case i == 7:
			s.Outcome = result.Errored
			s.Failure = &result.Failure{Message: "the harness stopped this spec (interrupted): interrupted by signal"}
		case i > 7:
			s.Outcome, s.SkipReason, s.Failure, s.Exchanges = result.NotRun, "the run was interrupted before this spec started", nil, nil
		}
	}
	return r
}

// KubeAPIServer is a run against kube-apiserver: paging passes, the exact
// watch regresses, bookmarks pass.
func KubeAPIServer() result.Result {
	r := RefServer()
	r.Target = result.Target{Name: "kube-apiserver", Server: "https://127.0.0.1:6443", Version: "v1.36.3",
		Capabilities: map[string]bool{"watchList": true, "bookmarks": true, "dryRun": true}}
	r.StartedAt = start.Add(5 * time.Minute)
	r.Duration = result.Duration(58*time.Second + 900*time.Millisecond)
	specs := make([]result.SpecResult, 0, len(r.Specs))
	for _, s := range r.Specs {
		s.Failure, s.Exchanges, s.SkipReason = nil, nil, ""
		s.Outcome = result.Passed
		specs = append(specs, s)
	}
	w := &specs[8]
	w.Outcome = result.Failed
	w.Failure = &result.Failure{
		Message:  "expected no event for revision 52, got MODIFIED pod \"w-1\" at resourceVersion 52",
		Location: "suites/watch/exact_test.go:41",
	}
	w.Exchanges = []result.Exchange{{Method: "GET", URL: "https://127.0.0.1:6443/api/v1/namespaces/ac-watch-k2/pods?watch=true&resourceVersion=52",
		Status: 200, ResponseHeaders: []result.Header{{Name: "Content-Type", Value: "application/json"}},
		ResponseBody: `{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"w-1","resourceVersion":"52"}}}`,
		Note:         "watch stream, first event"}}
	r.Specs = specs
	return r
}
