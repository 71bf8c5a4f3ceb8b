// Package faults lists the deliberate deviations the reference server can
// simulate: each breaks one documented behaviour the way an alternative
// server has been seen to (or a MUST sentence invites). suites/faultcheck
// switches them on one at a time to prove the suites catch them, and
// `apiconform serve --simulate-deviation NAME,...` offers them to people who
// want to see a failing report or test their own tooling.
//
// Most live at seams: an HTTP middleware in front of the API handler
// (http.go). The few that need the registry's inside (reads at a revision,
// the dry-run decision, synthetic ADDED events) are one-line checks there.
package faults

import (
	"fmt"
	"sort"
	"strings"
)

// Fault names.
const (
	// In the registry.
	IgnoreRVMatchExact      = "ignore-rv-match-exact"
	WrongRemainingItemCount = "wrong-remaining-item-count"
	DryRunPersists          = "dry-run-persists"
	NoSyntheticAdded        = "no-synthetic-added"
	ContinueIgnoresSnapshot = "continue-ignores-snapshot"
	// In the HTTP layer's decoder.
	NoWarningHeader = "no-warning-header"

	// At the HTTP seam (http.go).
	WatchListEndsWithError       = "watch-list-ends-with-error"
	WatchListNoEndAnnotation     = "watch-list-no-end-annotation"
	WatchListStaleBookmarkRV     = "watch-list-stale-bookmark-rv"
	IgnoreSendInitialEvents      = "ignore-send-initial-events"
	SendInitialEventsFalseSends  = "send-initial-events-false-sends-state"
	InitialEventsBookmarkUnasked = "initial-events-bookmark-unasked"
	WatchResumeReplays           = "watch-resume-replays"
	LabelSelectorIgnoredOnWatch  = "label-selector-ignored-on-watch"
	FieldSelectorIgnoredOnWatch  = "field-selector-ignored-on-watch"
	LabelNotEqualRequiresKey     = "label-not-equal-requires-key"
	SelectorIgnoredOnContinue    = "selector-ignored-on-continue"
	RemainingCountWithSelector   = "remaining-count-with-selector"
	EmptyListItemsNull           = "empty-list-items-null"
	ListKindWithoutSuffix        = "list-kind-without-suffix"
	ListMissingResourceVersion   = "list-missing-resource-version"
	ResourceVersionAsNumber      = "resource-version-as-number"
	CreateAnswers200             = "create-answers-200"
	StatusMissingReason          = "status-missing-reason"
	StatusMissingDetails         = "status-missing-details"
	UpdateIgnoresResourceVersion = "update-ignores-resource-version"
	StatusSubresourceWritesSpec  = "status-subresource-writes-spec"
	DeleteCollectionIgnoresSel   = "delete-collection-ignores-selector"
	DeleteIgnoresPreconditions   = "delete-ignores-preconditions"
	FinalizersIgnored            = "finalizers-ignored"
	GenerateNameUnsupported      = "generate-name-unsupported"
	FieldValidationStrictIgnored = "field-validation-strict-ignored"
	FieldValidationDefaultStrict = "field-validation-default-strict"
	FieldValidationIgnoreWarns   = "field-validation-ignore-warns"
	ApplyAlwaysForces            = "apply-always-forces"
	ApplyForceIgnored            = "apply-force-ignored"
	ApplyFieldManagerDefaulted   = "apply-field-manager-defaulted"
	JSONPatchTestIgnored         = "json-patch-test-ignored"
	StrategicMergeAsMerge        = "strategic-merge-as-merge"
	LabelSelectorIgnoredOnList   = "label-selector-ignored-on-list"
	FieldSelectorIgnoredOnList   = "field-selector-ignored-on-list"
	TableIgnoresIncludeObject    = "table-ignores-include-object"
	YAMLAnswersJSON              = "yaml-answers-json"
	ProtobufAnswersJSON          = "protobuf-answers-json"
	RVMatchUnchecked             = "rv-match-unchecked"
	WatchTrueIsList              = "watch-true-is-list"
	AllNamespacesListsDefault    = "all-namespaces-lists-default"
	ListIgnoresSendInitialEvents = "list-ignores-send-initial-events"
)

// Seams a fault can live at.
const (
	SeamRegistry = "registry"
	SeamDecoder  = "decoder"
	SeamHTTP     = "http"
)

type fault struct{ seam, what string }

// known is every fault; the areas with many keep theirs in their own file
// (resources.go, clients.go, reads.go, writes.go, streams.go).
var known = union(coreFaults, resourceFaults, clientFaults, readFaults, writeFaults, streamFaults)

func union(sets ...map[string]fault) map[string]fault {
	out := map[string]fault{}
	for _, s := range sets {
		for n, f := range s {
			if _, dup := out[n]; dup {
				panic("fault " + n + " is declared twice")
			}
			out[n] = f
		}
	}
	return out
}

var coreFaults = map[string]fault{
	IgnoreRVMatchExact:      {SeamRegistry, "lists with resourceVersionMatch=Exact read the latest state"},
	WrongRemainingItemCount: {SeamRegistry, "remainingItemCount is off by one"},
	DryRunPersists:          {SeamRegistry, "dryRun=All writes are persisted"},
	NoSyntheticAdded:        {SeamRegistry, "watch from resourceVersion unset sends no initial ADDED events"},
	ContinueIgnoresSnapshot: {SeamRegistry, "continued pages read the latest state"},
	NoWarningHeader:         {SeamDecoder, "no Warning headers"},

	WatchListEndsWithError:       {SeamHTTP, "a watch with sendInitialEvents=true ends with an ERROR event where the initial-events-end bookmark belongs (kube-apiserver on kine)"},
	WatchListNoEndAnnotation:     {SeamHTTP, "the initial-events-end bookmark lacks the k8s.io/initial-events-end annotation"},
	WatchListStaleBookmarkRV:     {SeamHTTP, "the initial-events-end bookmark carries resourceVersion 1 instead of the state's"},
	IgnoreSendInitialEvents:      {SeamHTTP, "watches ignore sendInitialEvents and resourceVersionMatch (an older server)"},
	SendInitialEventsFalseSends:  {SeamHTTP, "sendInitialEvents=false is served like true: the current state comes first"},
	InitialEventsBookmarkUnasked: {SeamHTTP, "sendInitialEvents=true without allowWatchBookmarks still gets bookmarks"},
	WatchResumeReplays:           {SeamHTTP, "a watch from resourceVersion N also replays the change at N"},
	LabelSelectorIgnoredOnWatch:  {SeamHTTP, "watches ignore labelSelector"},
	FieldSelectorIgnoredOnWatch:  {SeamHTTP, "watches ignore fieldSelector"},
	LabelNotEqualRequiresKey:     {SeamHTTP, "label selector key!=value excludes objects without the key"},
	SelectorIgnoredOnContinue:    {SeamHTTP, "continued pages ignore labelSelector and fieldSelector"},
	RemainingCountWithSelector:   {SeamHTTP, "lists with a selector still report remainingItemCount"},
	EmptyListItemsNull:           {SeamHTTP, "an empty list answers \"items\": null"},
	ListKindWithoutSuffix:        {SeamHTTP, "lists are of kind X instead of XList"},
	ListMissingResourceVersion:   {SeamHTTP, "lists carry no metadata.resourceVersion"},
	ResourceVersionAsNumber:      {SeamHTTP, "objects carry metadata.resourceVersion as a JSON number"},
	CreateAnswers200:             {SeamHTTP, "create answers 200 OK instead of 201 Created"},
	StatusMissingReason:          {SeamHTTP, "error Status bodies carry no reason"},
	StatusMissingDetails:         {SeamHTTP, "error Status bodies carry no details"},
	UpdateIgnoresResourceVersion: {SeamHTTP, "PUT ignores metadata.resourceVersion: the last writer wins"},
	StatusSubresourceWritesSpec:  {SeamHTTP, "writes to the status subresource write the whole object"},
	DeleteCollectionIgnoresSel:   {SeamHTTP, "deletecollection ignores labelSelector and fieldSelector"},
	DeleteIgnoresPreconditions:   {SeamHTTP, "DELETE ignores preconditions"},
	FinalizersIgnored:            {SeamHTTP, "DELETE removes an object at once, finalizers or not"},
	GenerateNameUnsupported:      {SeamHTTP, "create ignores metadata.generateName"},
	FieldValidationStrictIgnored: {SeamHTTP, "fieldValidation=Strict is ignored (unknown fields only warned about)"},
	FieldValidationDefaultStrict: {SeamHTTP, "without fieldValidation the server is Strict instead of Warn"},
	FieldValidationIgnoreWarns:   {SeamHTTP, "fieldValidation=Ignore still warns"},
	ApplyAlwaysForces:            {SeamHTTP, "server-side apply always forces: no conflicts"},
	ApplyForceIgnored:            {SeamHTTP, "server-side apply ignores force=true"},
	ApplyFieldManagerDefaulted:   {SeamHTTP, "server-side apply without fieldManager is accepted"},
	JSONPatchTestIgnored:         {SeamHTTP, "JSON patch test operations are skipped"},
	StrategicMergeAsMerge:        {SeamHTTP, "strategic merge patches are applied as JSON merge patches (lists replaced, no directives)"},
	LabelSelectorIgnoredOnList:   {SeamHTTP, "lists ignore labelSelector (an unparsable one too)"},
	FieldSelectorIgnoredOnList:   {SeamHTTP, "lists ignore fieldSelector (an unsupported one too)"},
	TableIgnoresIncludeObject:    {SeamHTTP, "Tables ignore includeObject (rows always carry object metadata)"},
	YAMLAnswersJSON:              {SeamHTTP, "Accept application/yaml is answered in JSON"},
	ProtobufAnswersJSON:          {SeamHTTP, "Accept application/vnd.kubernetes.protobuf is answered in JSON"},
	RVMatchUnchecked:             {SeamHTTP, "a resourceVersionMatch value other than Exact or NotOlderThan is ignored instead of refused"},
	WatchTrueIsList:              {SeamHTTP, "watch=true (rather than watch=1) is served as a list"},
	AllNamespacesListsDefault:    {SeamHTTP, "configmaps listed without a namespace come from namespace default only"},
	ListIgnoresSendInitialEvents: {SeamHTTP, "lists ignore sendInitialEvents instead of refusing it (it is for watches only)"},
}

// Set is a set of switched-on faults. The nil Set has none.
type Set map[string]bool

// Has reports whether fault f is on.
func (s Set) Has(f string) bool { return s[f] }

// Names lists the faults of s, sorted.
func (s Set) Names() []string {
	out := make([]string, 0, len(s))
	for n, on := range s {
		if on {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// Parse builds a Set from names, rejecting unknown ones.
func Parse(names ...string) (Set, error) {
	s := Set{}
	for _, n := range names {
		if _, ok := known[n]; !ok {
			return nil, fmt.Errorf("unknown deviation %q (known: %s)", n, strings.Join(Names(), ", "))
		}
		s[n] = true
	}
	return s, nil
}

// ParseList parses a comma-separated list ("" = none).
func ParseList(list string) (Set, error) {
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return Parse(names...)
}

// Names lists every fault name, sorted.
func Names() []string {
	out := make([]string, 0, len(known))
	for n := range known {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Describe says what fault n breaks ("" when unknown).
func Describe(n string) string { return known[n].what }

// Seam says where fault n is switched ("" when unknown).
func Seam(n string) string { return known[n].seam }
