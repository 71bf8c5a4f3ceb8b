package framework

import (
	"fmt"
	"strconv"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/apiconform/apiconform/spec/catalog"
)

// PollUntil checks cond every interval until it holds or budget runs out,
// and reports whether it held. It never fails the spec itself: callers
// decide whether a condition that never came is a failure or a skip.
func PollUntil(budget, interval time.Duration, cond func() bool) bool {
	g := gomega.NewGomega(func(string, ...int) {})
	return g.Eventually(cond).WithTimeout(budget).WithPolling(interval).Should(gomega.BeTrue())
}

// RVInt parses a resourceVersion as an unsigned integer when it is one
// (comparable integers are a rule since v1.35, RV-COMPARABLE).
func RVInt(rv string) (uint64, bool) {
	n, err := strconv.ParseUint(rv, 10, 64)
	return n, err == nil
}

// RequireSince skips a spec whose requirement came in a later Kubernetes
// release than the target reports; an unknown release is held to the rule.
func RequireSince(id string) {
	req, ok := catalog.ByID(id)
	gomega.ExpectWithOffset(1, ok).To(gomega.BeTrue(), "catalogue has no %s", id)
	if req.Since == "" {
		return
	}
	caps := Caps()
	var tMaj, tMin, sMaj, sMin int
	if _, err := fmt.Sscanf(caps.Major+"."+caps.Minor, "%d.%d", &tMaj, &tMin); err != nil {
		return
	}
	if _, err := fmt.Sscanf(req.Since, "v%d.%d", &sMaj, &sMin); err != nil {
		return
	}
	if tMaj < sMaj || (tMaj == sMaj && tMin < sMin) {
		ginkgo.Skip(fmt.Sprintf("allowance: %s applies since %s and the target reports v%s.%s", id, req.Since, caps.Major, caps.Minor))
	}
}
