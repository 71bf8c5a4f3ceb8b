package faults

import "testing"

func TestParse(t *testing.T) {
	s, err := Parse(IgnoreRVMatchExact, NoWarningHeader)
	if err != nil || !s.Has(IgnoreRVMatchExact) || !s.Has(NoWarningHeader) || s.Has(DryRunPersists) {
		t.Fatalf("parse: %v %v", s, err)
	}
	if _, err := Parse("no-such-fault"); err == nil {
		t.Fatal("unknown faults must be refused")
	}
	var none Set
	if none.Has(IgnoreRVMatchExact) {
		t.Fatal("the nil set has no faults")
	}
	for _, n := range Names() {
		if Describe(n) == "" {
			t.Errorf("%s has no description", n)
		}
	}
}
