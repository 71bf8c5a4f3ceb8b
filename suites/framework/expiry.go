package framework

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	"github.com/onsi/gomega"
)

// The history expiry service. Specs that need a revision to be dropped (410
// on an Exact list, an expired continue token, a client's pager falling
// back) cannot ask a target without a compaction hook to compact: it drops
// history on its own schedule (kube-apiserver compacts etcd every
// --etcd-compaction-interval, to the revision it saw one interval earlier,
// so a revision goes 1–2 intervals after it was written). Waiting for that
// in each spec, one after the other, adds the waits up. Instead every such
// spec of the process writes its history at the start of the process, then
// the specs run last, and each waits only for what is left of one shared
// budget (CompactionWait from the moment the history was written) while the
// rest of the process has been running. The reference server compacts on
// request, so there each spec writes its history and compacts in the spec,
// as any other spec would.

// History is what a spec needing expired history prepared: What names it
// (for the skip message), Probe reads it (200 OK while the target keeps
// it) and Check runs the spec's assertions once it has gone.
type History struct {
	What  string
	Probe func() *Response
	Check func()
}

// need is one spec's declared need, filled with its early preparation.
type need struct {
	area    string
	labels  []string
	text    string
	prepare func(*Framework) History

	mu    sync.Mutex
	early *prepared // set by prepareEarly, taken by the spec
}

// prepared is history written before its spec started.
type prepared struct {
	f   *Framework // its own namespace
	h   History
	err error // the preparation failed: the spec prepares again itself
	at  time.Time
}

var histories struct {
	mu      sync.Mutex
	needs   []*need
	started bool
}

// ItAfterExpiry declares a spec (ginkgo.It with labels) whose history must
// expire before it can check anything: prepare writes the history with the
// handle it is given (use it, not the Describe's handle: the early
// preparation has its own namespace) and returns it. On a target without a
// compaction hook the history is written when the process starts and the
// spec runs after the others (SpecPriority -1), so its wait overlaps theirs;
// a preparation that fails there is run again inside the spec, where its
// failures are the spec's. The spec is skipped, with the documented
// allowance, only when the history is still served CompactionWait after it
// was written.
func (f *Framework) ItAfterExpiry(text string, labels ginkgo.Labels, prepare func(*Framework) History) bool {
	cr := ginkgo.CurrentTreeConstructionNodeReport()
	labels = append(labels, compactsLabel) // the reference server's history goes by Compact
	n := &need{area: f.Area, labels: append(cr.Labels(), labels...), prepare: prepare,
		text: strings.TrimSpace(cr.FullText() + " " + text)}
	histories.mu.Lock()
	histories.needs = append(histories.needs, n)
	histories.mu.Unlock()
	return ginkgo.It(text, labels, ginkgo.SpecPriority(-1), func() { f.afterExpiry(n) })
}

func (f *Framework) afterExpiry(n *need) {
	n.mu.Lock()
	p := n.early
	n.early = nil
	n.mu.Unlock()
	var h History
	var since time.Time
	if p != nil {
		ns := p.f.Namespace
		ginkgo.DeferCleanup(func() { deleteNamespace(ns) })
		if p.err == nil {
			p.f.ctx = f.ctx
			h, since = p.h, p.at
			Record("history", "written in namespace %s %s before this spec started, while the others ran", ns,
				time.Since(p.at).Round(time.Second))
		} else {
			Record("history", "the early preparation failed (%v); prepared again in the spec", p.err)
		}
	}
	if h.Check == nil {
		since = time.Now()
		h = n.prepare(f)
	}
	f.expireHistory(h.What, h.Probe, since)
	h.Check()
}

// prepareEarly writes, once per process, the history of every selected
// ItAfterExpiry spec, each in its own namespace. It runs at the start of the
// first spec, before that spec records anything; a preparation's failures
// are kept for its own spec, never charged to the running one.
func prepareEarly(s *state) {
	histories.mu.Lock()
	if histories.started {
		histories.mu.Unlock()
		return
	}
	histories.started = true
	needs := histories.needs
	histories.mu.Unlock()
	if s.caps.RefServer {
		return // the hook compacts at once: nothing to overlap
	}
	sc, _ := ginkgo.GinkgoConfiguration()
	selected := selectedBy(sc)
	for _, n := range needs {
		if !selected(n) {
			continue
		}
		pf := &Framework{Area: n.area, ctx: s.ctx}
		err := captureFailures(func() {
			r := pf.createNamespace()
			gomega.Expect(r.Code).To(gomega.Equal(http.StatusCreated), "create namespace: %s", r)
		})
		if err != nil {
			continue // no namespace: the spec prepares in its own
		}
		p := &prepared{f: pf, at: time.Now()}
		p.err = captureFailures(func() { p.h = n.prepare(pf) })
		n.mu.Lock()
		n.early = p
		n.mu.Unlock()
	}
}

// selectedBy tells whether the run's label filter, focus and skip patterns
// take a need's spec (as Ginkgo decides; a wrong guess costs only time).
func selectedBy(sc types.SuiteConfig) func(*need) bool {
	match := func([]string) bool { return true }
	if sc.LabelFilter != "" {
		if lf, err := types.ParseLabelFilter(sc.LabelFilter); err == nil {
			match = lf
		}
	}
	return func(n *need) bool {
		if !match(n.labels) {
			return false
		}
		if len(sc.FocusStrings) > 0 && !matchesAny(sc.FocusStrings, n.text) {
			return false
		}
		return !matchesAny(sc.SkipStrings, n.text)
	}
}

// DropUnusedHistory deletes the namespaces of histories prepared for specs
// that never ran (an interrupted run); call it after the run.
func DropUnusedHistory() {
	histories.mu.Lock()
	needs := histories.needs
	histories.mu.Unlock()
	for _, n := range needs {
		n.mu.Lock()
		p := n.early
		n.early = nil
		n.mu.Unlock()
		if p != nil {
			deleteNamespace(p.f.Namespace)
		}
	}
}

// expireHistory makes the target drop the history probe reads: the
// reference server compacts at once; another target is asked again every
// second until probe stops answering 200 OK or CompactionWait has passed
// since the history was written, and the spec is skipped when it never does.
func (f *Framework) expireHistory(what string, probe func() *Response, since time.Time) {
	if Caps().RefServer {
		_, err := Compact(f.Ctx())
		gomega.ExpectWithOffset(2, err).NotTo(gomega.HaveOccurred())
		return
	}
	deadline := since.Add(CompactionWait())
	start := time.Now()
	gone := func() bool { return probe().Code != http.StatusOK }
	if !gone() && (time.Until(deadline) <= 0 || !PollUntil(time.Until(deadline), time.Second, gone)) {
		ginkgo.Skip(fmt.Sprintf("allowance: a server drops history when it compacts, not on request; %s was still served %s after it was written and the target offers no compaction hook",
			what, time.Since(since).Round(time.Second)))
	}
	Record("history expired", "%s was dropped %s after it was written (waited %s in this spec)", what,
		time.Since(since).Round(time.Second), time.Since(start).Round(time.Second))
}

// captureFailures runs fn outside any spec's verdict: a Gomega failure, a
// verdict (fail) or a transport error inside it ends fn and is returned.
func captureFailures(fn func()) (err error) {
	prepMu.Lock()
	prepFail = func(msg string) { panic(prepFailure(msg)) }
	prepMu.Unlock()
	defer func() {
		prepMu.Lock()
		prepFail = nil
		prepMu.Unlock()
		if e := recover(); e != nil {
			pf, ok := e.(prepFailure)
			if !ok {
				panic(e)
			}
			err = fmt.Errorf("%s", string(pf))
		}
	}()
	return gomega.InterceptGomegaFailure(fn)
}

// prepFail, when set, takes the failures fail and failTransport would
// report to the running spec (captureFailures sets it).
var (
	prepMu   sync.Mutex
	prepFail func(msg string)
)

type prepFailure string

// matchesAny tells whether text matches one of the (Ginkgo-validated) patterns.
func matchesAny(patterns []string, text string) bool {
	for _, p := range patterns {
		if re, err := regexp.Compile(p); err == nil && re.MatchString(text) {
			return true
		}
	}
	return false
}

func preparing() func(string) {
	prepMu.Lock()
	defer prepMu.Unlock()
	return prepFail
}
