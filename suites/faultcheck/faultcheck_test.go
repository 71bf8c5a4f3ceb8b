package faultcheck_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver"
	"github.com/apiconform/apiconform/refserver/faults"
	"github.com/apiconform/apiconform/spec/catalog"
	_ "github.com/apiconform/apiconform/suites/all"
	"github.com/apiconform/apiconform/suites/faultcheck"
	"github.com/apiconform/apiconform/suites/framework"
	"github.com/apiconform/apiconform/suites/runner"
)

// mustFail says, for every simulated deviation of the reference server,
// which requirements have specs that must fail when it is on (a skip does
// not count). Each child run selects exactly these requirements, so the
// list is also what it runs. Areas with many deviations keep their rows in
// their own file (resources_test.go, clients_test.go, reads_test.go,
// writes_test.go, streams_test.go).
var mustFail = unionRows(coreMustFail, resourcesMustFail, clientsMustFail, readsMustFail, writesMustFail, streamsMustFail)

func unionRows(tables ...map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, t := range tables {
		for f, ids := range t {
			out[f] = append(out[f], ids...)
		}
	}
	return out
}

var coreMustFail = map[string][]string{
	// Exact reads at an older revision come back with the latest state, and
	// an Exact read of a compacted revision no longer answers 410.
	faults.IgnoreRVMatchExact: {"RV-LIST-EXACT-NOLIMIT-RVN", "RV-LIST-EXACT-LIMIT-RVN", "RV-LIST-UNSET-LIMIT-RVN",
		"RV-SEM-EXACT", "RV-SEM-EXACT-GONE"},
	// remainingItemCount is one too many on every non-last page.
	faults.WrongRemainingItemCount: {"PAGE-REMAINING-COUNT"},
	// Unknown fields are dropped silently instead of warned about.
	faults.NoWarningHeader: {"FV-WARN", "FV-WARN-DEFAULT", "FV-NESTED-UNKNOWN", "COMPAT-NEWER-CLIENT"},
	// Every dry-run write lands in storage (and so in watches).
	faults.DryRunPersists: {"DRYRUN-CREATE", "DRYRUN-GENERATED-FIELDS", "DRYRUN-UPDATE", "DRYRUN-PATCH", "DRYRUN-APPLY",
		"DRYRUN-DELETE", "DRYRUN-DELETE-COLLECTION", "DRYRUN-NO-SIDE-EFFECTS"},
	// A watch without resourceVersion starts with no ADDED events. (With
	// resourceVersion=0 the server still sends them: that is another mode.)
	faults.NoSyntheticAdded: {"RV-WATCH-NORV", "RV-WATCH-RV0"},
	// Continued pages show changes made after the first page, and a token
	// of a compacted revision no longer answers 410.
	faults.ContinueIgnoresSnapshot: {"PAGE-CONSISTENT-SNAPSHOT", "PAGE-CONTINUE-EXPIRED-410", "RV-SEM-CONTINUE-EXACT",
		"RV-LIST-UNSET-CONTINUE-NORV", "RV-LIST-UNSET-CONTINUE-RV0", "CLIENT-PAGER-410-FALLBACK"},

	// Streaming lists: the capability is claimed, so a broken protocol fails
	// instead of skipping (capability rules in framework/configure.go): the
	// streaming table's sendInitialEvents=true cells see the broken
	// bookmark themselves, its other accepted cells (sendInitialEvents=false,
	// and unset with its default) fail with the capability's problem.
	faults.WatchListEndsWithError: {"WATCH-SEND-INITIAL-EVENTS", "WATCH-SEND-INITIAL-EVENTS-FALSE",
		"WATCH-SEND-INITIAL-EVENTS-DEFAULT", "CLIENT-INFORMER-WATCHLIST"},
	faults.WatchListNoEndAnnotation: {"WATCH-SEND-INITIAL-EVENTS", "WATCH-SEND-INITIAL-EVENTS-FALSE",
		"WATCH-SEND-INITIAL-EVENTS-DEFAULT", "CLIENT-INFORMER-WATCHLIST"},
	faults.WatchListStaleBookmarkRV: {"WATCH-SEND-INITIAL-EVENTS", "WATCH-SEND-INITIAL-EVENTS-FALSE",
		"WATCH-SEND-INITIAL-EVENTS-DEFAULT", "CLIENT-INFORMER-WATCHLIST"},
	// An older server: the capability is absent (wantCaps), so the accepted
	// cells skip, and the streaming table's rejected watch cells are accepted.
	faults.IgnoreSendInitialEvents: {"WATCH-SEND-INITIAL-EVENTS-REQUIRES-NOTOLDERTHAN", "WATCH-MATCH-REQUIRES-SEND-INITIAL-EVENTS"},
	// The streaming table's sendInitialEvents=false cells get the state.
	faults.SendInitialEventsFalseSends: {"WATCH-SEND-INITIAL-EVENTS-FALSE"},
	// Every streaming-table watch asks for bookmarks; the bookmarks spec
	// asks for none.
	faults.InitialEventsBookmarkUnasked: {"WATCH-BOOKMARK-NOT-WITHOUT-OPT-IN"},
	faults.ListIgnoresSendInitialEvents: {"WATCH-SEND-INITIAL-EVENTS-NOT-FOR-LIST"},
	faults.WatchResumeReplays:           {"WATCH-RESUME", "WATCH-CHANGES-AFTER-RV"},
	faults.LabelSelectorIgnoredOnWatch:  {"WATCH-SELECTOR-TRANSITIONS"},
	faults.FieldSelectorIgnoredOnWatch:  {"RES-FIELD-SELECTOR-NAME-WATCH"},
	faults.LabelNotEqualRequiresKey:     {"RES-LABEL-SELECTOR-OPERATORS"},
	faults.SelectorIgnoredOnContinue:    {"PAGE-REMAINING-NONE-SELECTOR"},
	faults.RemainingCountWithSelector:   {"PAGE-REMAINING-NONE-SELECTOR"},
	faults.EmptyListItemsNull:           {"RES-LIST-EMPTY-ITEMS"},
	faults.ListKindWithoutSuffix:        {"RES-LIST-KIND"},
	faults.ListMissingResourceVersion:   {"RV-LIST-METADATA", "RES-LIST-METADATA"},
	faults.ResourceVersionAsNumber:      {"RV-OBJECT-STRING"},
	faults.CreateAnswers200:             {"RES-SUCCESS-CODES"},
	faults.StatusMissingReason:          {"CONV-STATUS-NOT-FOUND", "CONV-STATUS-ALREADY-EXISTS", "CONV-STATUS-CONFLICT"},
	faults.StatusMissingDetails:         {"CONV-STATUS-NOT-FOUND", "CONV-STATUS-ALREADY-EXISTS"},
	faults.UpdateIgnoresResourceVersion: {"CONV-STATUS-CONFLICT"},
	faults.StatusSubresourceWritesSpec:  {"CONV-STATUS-SUBRESOURCE"},
	faults.DeleteCollectionIgnoresSel:   {"DEL-COLLECTION-SELECTOR"},
	faults.DeleteIgnoresPreconditions:   {"DEL-PRECONDITION-UID", "DEL-PRECONDITION-RESOURCE-VERSION"},
	faults.FinalizersIgnored:            {"CONV-DELETE-FINALIZERS-LAST", "DEL-FINALIZERS-ANY-ORDER"},
	faults.GenerateNameUnsupported:      {"CONV-META-GENERATE-NAME"},
	faults.FieldValidationStrictIgnored: {"FV-STRICT-CREATE", "FV-STRICT-UPDATE", "FV-STRICT-PATCH"},
	faults.FieldValidationDefaultStrict: {"FV-WARN-DEFAULT"},
	faults.FieldValidationIgnoreWarns:   {"FV-IGNORE"},
	faults.ApplyAlwaysForces:            {"APPLY-CONFLICT", "CLIENT-DYNAMIC-SSA"},
	faults.ApplyForceIgnored:            {"APPLY-FORCE", "CLIENT-DYNAMIC-SSA"},
	faults.ApplyFieldManagerDefaulted:   {"APPLY-FIELD-MANAGER-REQUIRED"},
	faults.JSONPatchTestIgnored:         {"CONV-PATCH-JSON-TEST-FAILS"},
	faults.LabelSelectorIgnoredOnList:   {"RES-LABEL-SELECTOR-OPERATORS", "RES-LABEL-SELECTOR-INVALID"},
	faults.FieldSelectorIgnoredOnList:   {"RES-FIELD-SELECTOR-NAME-LIST", "RES-FIELD-SELECTOR-NOT-EQUAL", "RES-FIELD-SELECTOR-UNSUPPORTED"},
	faults.TableIgnoresIncludeObject:    {"RES-TABLE-INCLUDE-OBJECT"},
	faults.YAMLAnswersJSON:              {"RES-YAML"},
	faults.ProtobufAnswersJSON:          {"RES-PROTOBUF-ENVELOPE"},
	faults.RVMatchUnchecked:             {"RES-RV-MATCH-UNSUPPORTED"},
	faults.WatchTrueIsList:              {"RES-WATCH-PARAM"},
	faults.AllNamespacesListsDefault:    {"RES-URI-ALL-NAMESPACES"},
	faults.StrategicMergeAsMerge: {"RES-SMP-DELETE-BY-KEY", "RES-SMP-DELETE-FROM-PRIMITIVE-LIST", "RES-SMP-MERGE-PRIMITIVE-LIST",
		"RES-SMP-SET-ELEMENT-ORDER"},
}

// wantWatchList is what capability detection must conclude under a fault:
// supported, absent (a server without the feature), or broken (a problem
// that fails the specs). Faults not listed leave it supported.
var wantWatchList = map[string]string{
	faults.WatchListEndsWithError:   "broken",
	faults.WatchListNoEndAnnotation: "broken",
	faults.WatchListStaleBookmarkRV: "broken",
	faults.IgnoreSendInitialEvents:  "absent",
}

func watchListState(s faultcheck.Summary) string {
	switch {
	case s.WatchListProblem != "":
		return "broken"
	case s.Caps["watchList"]:
		return "supported"
	}
	return "absent"
}

// The child process reads its orders from the environment.
const (
	envFault = "APICONFORM_FAULTCHECK_FAULT" // a fault name, or controlRun
	envReqs  = "APICONFORM_FAULTCHECK_REQS"  // comma-separated requirement IDs to run
	envOut   = "APICONFORM_FAULTCHECK_OUT"   // where to write the JSON summary

	controlRun = "none"
	childTest  = "TestFaultChild"

	// childTimeout bounds one child process; the specs get a little less so
	// that a slow run still reports which specs it finished.
	childTimeout = 2 * time.Minute
	specTimeout  = childTimeout - 20*time.Second
)

// TestTableCoversEveryFault keeps a new fault switch from going untested and
// the table from naming requirements that do not exist.
func TestTableCoversEveryFault(t *testing.T) {
	for _, name := range faults.Names() {
		if len(mustFail[name]) == 0 {
			t.Errorf("fault %q (%s) has no requirements in mustFail", name, faults.Describe(name))
		}
	}
	for name, ids := range mustFail {
		if faults.Describe(name) == "" {
			t.Errorf("mustFail names unknown fault %q (known: %v)", name, faults.Names())
		}
		for _, id := range ids {
			if _, ok := catalog.ByID(id); !ok {
				t.Errorf("mustFail[%q] names unknown requirement %s", name, id)
			}
		}
	}
}

// TestEveryRequirementCanFail keeps the mutation score whole: every
// requirement a spec can check is failed by at least one deviation, so no
// spec is left that could pass whatever the server does.
func TestEveryRequirementCanFail(t *testing.T) {
	proven := map[string]bool{}
	for _, ids := range mustFail {
		for _, id := range ids {
			proven[id] = true
		}
	}
	for _, r := range catalog.All() {
		if r.Untestable == "" && !proven[r.ID] {
			t.Errorf("requirement %s (%s) is in no mustFail row: add a deviation its specs catch", r.ID, r.Title)
		}
	}
}

// TestFaultsFailTheirSpecs runs, each in its own child process against a
// fresh embedded reference server, the specs of every fault once with no
// fault (the control) and once with that fault on.
func TestFaultsFailTheirSpecs(t *testing.T) {
	if os.Getenv(envFault) != "" {
		t.Skip("inside a child run")
	}
	var union []string
	for _, ids := range mustFail {
		union = append(union, ids...)
	}
	sort.Strings(union)
	union = runnable(t, slices.Compact(union)) // clients_test.go: without kubectl, its specs are left out

	t.Run("control", func(t *testing.T) {
		t.Parallel()
		s := runChild(t, controlRun, union)
		for _, sp := range s.Specs {
			if sp.Failed {
				t.Errorf("without faults, spec %q %v %s: %s", sp.Text, sp.Reqs, sp.State, sp.Message)
			}
		}
		if got := watchListState(s); got != "supported" {
			t.Errorf("without faults, watch-list capability detected as %s (%s)", got, s.WatchListProblem)
		}
		passed := s.PassedReqs()
		for _, id := range union {
			if !slices.Contains(passed, id) {
				t.Errorf("without faults, no spec labelled req:%s passed (%s)", id, statesOf(s, id))
			}
		}
		if !s.SuiteSucceeded && len(s.SuiteProblems) > 0 {
			t.Errorf("without faults, the run did not succeed: %s", strings.Join(s.SuiteProblems, "; "))
		}
	})
	for _, name := range faults.Names() {
		ids := mustFail[name]
		if len(ids) == 0 {
			continue // TestTableCoversEveryFault reports it
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if ids = runnable(t, ids); len(ids) == 0 {
				t.Skip(kubectlMissing)
			}
			s := runChild(t, name, ids)
			failed := s.FailedReqs()
			for _, id := range ids {
				if !slices.Contains(failed, id) {
					t.Errorf("fault %s (%s) went unnoticed: no spec labelled req:%s failed (%s)",
						name, faults.Describe(name), id, statesOf(s, id))
				}
			}
			want := wantWatchList[name]
			if want == "" {
				want = "supported"
			}
			if got := watchListState(s); got != want {
				t.Errorf("fault %s: watch-list capability detected as %s, want %s (%s)", name, got, want, s.WatchListProblem)
			}
			t.Logf("fault %s fails %v", name, failed)
		})
	}
}

// statesOf says how the specs of one requirement ended, for messages.
func statesOf(s faultcheck.Summary, id string) string {
	var parts []string
	for _, sp := range s.Specs {
		if slices.Contains(sp.Reqs, id) {
			parts = append(parts, fmt.Sprintf("%q %s", sp.Text, sp.State))
		}
	}
	if len(parts) == 0 {
		return "no spec selected"
	}
	return strings.Join(parts, "; ")
}

// runChild re-executes this test binary to run the specs of reqs with fault
// on (or none for controlRun) and returns the child's summary.
func runChild(t *testing.T, fault string, reqs []string) faultcheck.Summary {
	t.Helper()
	out := filepath.Join(t.TempDir(), "summary.json")
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run=^"+childTest+"$", "-test.count=1", "-test.timeout="+childTimeout.String())
	cmd.Env = append(os.Environ(), envFault+"="+fault, envReqs+"="+strings.Join(reqs, ","), envOut+"="+out)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	t.Logf("child %s ran %v in %s", fault, reqs, time.Since(start).Round(time.Millisecond))
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("child %s did not finish within %s:\n%s", fault, childTimeout, log.String())
	}
	if err != nil {
		t.Fatalf("child %s: %v\n%s", fault, err, log.String())
	}
	s, err := faultcheck.ReadFile(out)
	if err != nil {
		t.Fatalf("child %s wrote no summary: %v\n%s", fault, err, log.String())
	}
	if s.Fault != fault {
		t.Fatalf("child summary is for fault %q, want %q", s.Fault, fault)
	}
	return s
}

// TestFaultChild is the child side: it does nothing unless started by
// runChild. It starts the embedded reference server with the named fault,
// runs the named requirements' specs and writes the summary. Spec failures
// are results, not errors of the child.
func TestFaultChild(t *testing.T) {
	fault, out := os.Getenv(envFault), os.Getenv(envOut)
	if fault == "" || out == "" {
		t.Skip("runs only as a child of TestFaultsFailTheirSpecs")
	}
	var set faults.Set
	if fault != controlRun {
		var err error
		if set, err = faults.Parse(fault); err != nil {
			t.Fatal(err)
		}
	}
	reqs := strings.Split(os.Getenv(envReqs), ",")
	ctx, cancel := context.WithTimeout(context.Background(), childTimeout)
	defer cancel()
	srv, err := refserver.StartEmbedded(ctx, func(c *refserver.Config) { c.Faults = set })
	if err != nil {
		t.Fatalf("start the reference server: %v", err)
	}
	defer func() { _ = srv.Close() }()
	url := srv.URL()
	if url == "" {
		url = srv.InsecureURL()
	}
	report, err := runner.Run(ctx, runner.Config{
		Target:       framework.Target{Server: url, Token: srv.Token(), Name: "refserver+" + fault},
		Requirements: reqs,
		Timeout:      specTimeout,
	})
	if err != nil {
		t.Fatalf("run the specs: %v", err)
	}
	sum := faultcheck.Summarize(fault, report)
	caps := framework.Caps()
	sum.Caps, sum.WatchListProblem = caps.CapabilityMap(), caps.WatchListProblem
	if err := sum.WriteFile(out); err != nil {
		t.Fatal(err)
	}
}
