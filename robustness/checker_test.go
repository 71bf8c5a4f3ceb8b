package robustness

import (
	"slices"
	"strconv"
	"testing"
)

func ev(typ, name, parity string, rv int64) event {
	var e event
	e.Type = typ
	e.Object.Metadata.Name = name
	e.Object.Metadata.ResourceVersion = strconv.FormatInt(rv, 10)
	e.Object.Metadata.Labels = map[string]string{"parity": parity}
	return e
}

// TestCheckerCatchesFaults: the history checks fail on every kind of
// fault they exist to find (each case breaks a correct stream once).
func TestCheckerCatchesFaults(t *testing.T) {
	hist := map[string][]ack{
		"a": {{typ: "ADDED", rv: 2, parity: "even"}, {typ: "MODIFIED", rv: 4, parity: "odd"}, {typ: "DELETED"}},
		"b": {{typ: "ADDED", rv: 3, parity: "odd"}, {typ: "MODIFIED", rv: 6, parity: "even"}},
	}
	good := []event{ev("ADDED", "a", "even", 2), ev("ADDED", "b", "odd", 3), ev("MODIFIED", "a", "odd", 4),
		ev("DELETED", "a", "odd", 5), ev("MODIFIED", "b", "even", 6)}
	full, err := checkReference(&watchResult{events: good}, hist)
	if err != nil {
		t.Fatalf("a correct stream fails: %v", err)
	}
	even := []event{ev("ADDED", "a", "even", 2), ev("DELETED", "a", "odd", 4), ev("ADDED", "b", "even", 6)}
	if err := checkWatcher(&watchResult{spec: watchSpec{start: 1, selector: "parity=even"}, events: even}, full, 6); err != nil {
		t.Fatalf("a correct selector stream fails: %v", err)
	}
	fromThree := []event{ev("MODIFIED", "a", "odd", 4), ev("DELETED", "a", "odd", 5), ev("MODIFIED", "b", "even", 6)}
	if err := checkWatcher(&watchResult{spec: watchSpec{start: 3}, events: fromThree}, full, 6); err != nil {
		t.Fatalf("a correct mid-stream start fails: %v", err)
	}
	streaming := []event{ev("ADDED", "b", "odd", 3), ev("ADDED", "a", "odd", 4), ev("DELETED", "a", "odd", 5), ev("MODIFIED", "b", "even", 6)}
	if err := checkWatcher(&watchResult{spec: watchSpec{start: 2, streaming: true}, events: streaming, initEnd: 4, initial: 2}, full, 6); err != nil {
		t.Fatalf("a correct streaming start fails: %v", err)
	}

	drop := func(evs []event, i int) []event { return slices.Delete(slices.Clone(evs), i, i+1) }
	tests := []struct {
		name  string
		check func() error
	}{
		{"reference: a gap", func() error { _, err := checkReference(&watchResult{events: drop(good, 2)}, hist); return err }},
		{"reference: a duplicate", func() error {
			_, err := checkReference(&watchResult{events: slices.Insert(slices.Clone(good), 1, good[0])}, hist)
			return err
		}},
		{"reference: out of order", func() error {
			evs := slices.Clone(good)
			evs[0], evs[1] = evs[1], evs[0]
			_, err := checkReference(&watchResult{events: evs}, hist)
			return err
		}},
		{"reference: wrong type", func() error {
			evs := slices.Clone(good)
			evs[2].Type = "ADDED"
			_, err := checkReference(&watchResult{events: evs}, hist)
			return err
		}},
		{"reference: unacknowledged write", func() error {
			_, err := checkReference(&watchResult{events: append(slices.Clone(good), ev("ADDED", "c", "odd", 7))}, hist)
			return err
		}},
		{"selector: missing synthetic DELETED", func() error {
			return checkWatcher(&watchResult{spec: watchSpec{start: 1, selector: "parity=even"}, events: drop(even, 1)}, full, 6)
		}},
		{"selector: MODIFIED instead of ADDED", func() error {
			evs := slices.Clone(even)
			evs[2].Type = "MODIFIED"
			return checkWatcher(&watchResult{spec: watchSpec{start: 1, selector: "parity=even"}, events: evs}, full, 6)
		}},
		{"mid-stream: replays the start revision", func() error {
			return checkWatcher(&watchResult{spec: watchSpec{start: 3}, events: append([]event{ev("ADDED", "b", "odd", 3)}, fromThree...)}, full, 6)
		}},
		{"streaming: initial state from the wrong revision", func() error {
			return checkWatcher(&watchResult{spec: watchSpec{start: 2, streaming: true}, events: streaming, initEnd: 5, initial: 2}, full, 6)
		}},
	}
	for _, tt := range tests {
		if tt.check() == nil {
			t.Errorf("%s: not caught", tt.name)
		}
	}
}
