package loadgen

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	lat := make([]time.Duration, 100)
	for i := range lat {
		lat[i] = time.Duration(100-i) * time.Millisecond // reversed: summarize must sort
	}
	p := summarize("get", lat, 2*time.Second)
	if p.Ops != 100 || p.P50 != 51*time.Millisecond || p.P99 != 100*time.Millisecond || p.OpsPerSec != 50 {
		t.Fatalf("summarize = %+v", p)
	}
	if empty := summarize("none", nil, 0); empty.Ops != 0 || empty.OpsPerSec != 0 || empty.P50 != 0 {
		t.Fatalf("empty summarize = %+v", empty)
	}
}

func TestCompare(t *testing.T) {
	base := Result{Target: "refserver", Phases: []Phase{
		{Name: PhaseCreate, Ops: 10, OpsPerSec: 200, P50: time.Millisecond, P99: 2 * time.Millisecond},
		{Name: PhaseGet, Ops: 10, OpsPerSec: 100, P50: time.Millisecond, P99: time.Millisecond},
	}}
	other := Result{Target: "kube-apiserver", Phases: []Phase{
		{Name: PhaseCreate, Ops: 10, OpsPerSec: 100, P50: 4 * time.Millisecond, P99: 4 * time.Millisecond},
	}}
	ratios := Compare(base, other)
	if len(ratios) != 1 {
		t.Fatalf("want only the phase both have, got %+v", ratios)
	}
	r := ratios[0]
	if r.ThroughputX != 2 || r.P50X != 4 || r.P99X != 2 {
		t.Fatalf("ratios = %+v", r)
	}
	var buf bytes.Buffer
	if err := WriteComparison(&buf, base, other); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refserver ops/s", "kube-apiserver p99", "create", "2.00"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("comparison lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "\nget") {
		t.Errorf("a phase only one side has must not be printed:\n%s", buf.String())
	}
}

func TestPlanDefaults(t *testing.T) {
	p := Plan{Objects: 5}.WithDefaults()
	if p.Objects != 5 || p.PageSize != DefaultPlan.PageSize || p.Watchers != DefaultPlan.Watchers {
		t.Fatalf("WithDefaults = %+v", p)
	}
}
