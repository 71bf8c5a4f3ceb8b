package loadgen

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// Ratio compares one phase on two targets: Factor > 1 means Base is faster.
type Ratio struct {
	Phase       string
	Base, Other Phase
	ThroughputX float64 // Base ops/s ÷ Other ops/s
	P50X, P99X  float64 // Other latency ÷ Base latency
}

// Compare pairs the phases of two results by name.
func Compare(base, other Result) []Ratio {
	byName := map[string]Phase{}
	for _, p := range other.Phases {
		byName[p.Name] = p
	}
	var out []Ratio
	for _, b := range base.Phases {
		o, ok := byName[b.Name]
		if !ok {
			continue
		}
		out = append(out, Ratio{
			Phase: b.Name, Base: b, Other: o,
			ThroughputX: div(b.OpsPerSec, o.OpsPerSec),
			P50X:        div(float64(o.P50), float64(b.P50)),
			P99X:        div(float64(o.P99), float64(b.P99)),
		})
	}
	return out
}

func div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// WriteComparison prints one row per phase with both targets' figures and the ratios.
func WriteComparison(w io.Writer, base, other Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "phase\tops\t%s ops/s\t%s ops/s\tthroughput ×\t%s p50\t%s p50\t%s p99\t%s p99\n",
		base.Target, other.Target, base.Target, other.Target, base.Target, other.Target)
	for _, r := range Compare(base, other) {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t%s\t%s\t%s\t%s\n", r.Phase, r.Base.Ops,
			r.Base.OpsPerSec, r.Other.OpsPerSec, r.ThroughputX,
			round(r.Base.P50), round(r.Other.P50), round(r.Base.P99), round(r.Other.P99))
	}
	return tw.Flush()
}

func round(d time.Duration) time.Duration {
	switch {
	case d > time.Second:
		return d.Round(time.Millisecond)
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	default:
		return d.Round(time.Microsecond)
	}
}
