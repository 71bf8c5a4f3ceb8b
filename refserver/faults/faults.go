// Package faults lists the deliberately broken behaviours the reference
// server can switch on for the suites' fault-injection test. They are
// test-only: no CLI flag exposes them.
package faults

import (
	"fmt"
	"sort"
)

// Fault names. Each one breaks exactly one documented behaviour.
const (
	// IgnoreRVMatchExact: a list with resourceVersionMatch=Exact reads the latest state.
	IgnoreRVMatchExact = "ignore-rv-match-exact"
	// WrongRemainingItemCount: remainingItemCount is off by one.
	WrongRemainingItemCount = "wrong-remaining-item-count"
	// NoWarningHeader: no Warning header is sent (e.g. for unknown fields).
	NoWarningHeader = "no-warning-header"
	// DryRunPersists: dryRun=All requests are written anyway.
	DryRunPersists = "dry-run-persists"
	// NoSyntheticAdded: a watch from resourceVersion unset or "0" skips the ADDED events for the current state.
	NoSyntheticAdded = "no-synthetic-added"
	// ContinueIgnoresSnapshot: continued pages read the latest state instead of the token's revision.
	ContinueIgnoresSnapshot = "continue-ignores-snapshot"
)

var known = map[string]string{
	IgnoreRVMatchExact:      "lists with resourceVersionMatch=Exact read the latest state",
	WrongRemainingItemCount: "remainingItemCount is off by one",
	NoWarningHeader:         "no Warning headers",
	DryRunPersists:          "dryRun=All writes are persisted",
	NoSyntheticAdded:        "watch from resourceVersion unset or 0 sends no initial ADDED events",
	ContinueIgnoresSnapshot: "continued pages read the latest state",
}

// Set is a set of switched-on faults. The nil Set has none.
type Set map[string]bool

// Has reports whether fault f is on.
func (s Set) Has(f string) bool { return s[f] }

// Parse builds a Set from names, rejecting unknown ones.
func Parse(names ...string) (Set, error) {
	s := Set{}
	for _, n := range names {
		if _, ok := known[n]; !ok {
			return nil, fmt.Errorf("unknown fault %q (known: %v)", n, Names())
		}
		s[n] = true
	}
	return s, nil
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
func Describe(n string) string { return known[n] }
