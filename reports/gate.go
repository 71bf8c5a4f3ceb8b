package reports

import (
	"fmt"
	"strings"

	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

// ParseFailOn reads the level whose failures fail a run: must, should or may,
// or none (the empty level: nothing fails the run).
func ParseFailOn(s string) (catalog.Level, error) {
	if strings.EqualFold(strings.TrimSpace(s), "none") {
		return "", nil
	}
	l, err := catalog.ParseLevel(s)
	if err != nil {
		return "", fmt.Errorf("%q: want must, should, may or none", s)
	}
	return l, nil
}

// Gate says whether res fails a run gated at level min ("" gates nothing),
// and why. A failed spec counts when its strongest requirement in cat is at
// min or above, and always when it names no catalogued requirement (a broken
// suite setup: the run cannot vouch for anything then). With
// allowKnownDeviations, a spec whose every requirement has a catalogued
// kube-apiserver deviation does not count.
func Gate(cat Catalogue, res result.Result, min catalog.Level, allowKnownDeviations bool) error {
	if min == "" {
		return nil
	}
	byID := make(map[string]catalog.Requirement, len(cat.Requirements))
	for _, r := range cat.Requirements {
		byID[r.ID] = r
	}
	var failing []string
	for _, s := range res.Specs {
		if s.Outcome != result.Failed || (allowKnownDeviations && allDeviate(byID, s.Requirements)) {
			continue
		}
		known, counts := false, false
		for _, id := range s.Requirements {
			if r, ok := byID[id]; ok {
				known = true
				counts = counts || r.Level.AtLeast(min)
			}
		}
		if !known || counts {
			failing = append(failing, s.Name)
		}
	}
	if len(failing) == 0 {
		return nil
	}
	return fmt.Errorf("%d failed spec(s) at or above %s, first: %s", len(failing), strings.ToLower(string(min)), failing[0])
}

// allDeviate reports whether every requirement has a catalogued kube-apiserver deviation.
func allDeviate(byID map[string]catalog.Requirement, ids []string) bool {
	for _, id := range ids {
		if r, ok := byID[id]; !ok || r.Deviation == nil {
			return false
		}
	}
	return len(ids) > 0
}
