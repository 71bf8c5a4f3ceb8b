package framework

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/tidwall/gjson"
)

// Capabilities are what the target was found to support, detected once by Configure.
type Capabilities struct {
	GitVersion string `json:"gitVersion"` // from /version, e.g. v1.36.3
	Major      string `json:"major"`
	Minor      string `json:"minor"`
	CRDs       bool   `json:"crds"`      // apiextensions.k8s.io/v1 customresourcedefinitions served
	WatchList  bool   `json:"watchList"` // watch with sendInitialEvents=true ends its initial events with a bookmark
	// WatchListProblem says how a target that accepted sendInitialEvents
	// broke the protocol ("" when it supports it or behaves as a server
	// without it may); specs that need watch lists fail with it.
	WatchListProblem string `json:"watchListProblem,omitempty"`
	// CRDProblem says how a target whose discovery lists
	// apiextensions.k8s.io/v1 fails to serve customresourcedefinitions.
	CRDProblem string `json:"crdProblem,omitempty"`
	RefServer  bool   `json:"refServer"` // GET /apiconform/admin answers 200 (reference server with admin endpoints)
	Frobbers   bool   `json:"frobbers"`  // discovery lists the compat.apiconform.io group
}

type state struct {
	target Target
	client *Client
	caps   Capabilities
	ctx    context.Context
}

var (
	mu      sync.RWMutex
	current *state
)

// Configure connects to the target, detects its capabilities and makes both
// available to the specs. The runner calls it before RunSpecs; ctx bounds the
// whole run (cancelling it makes later requests fail and later specs skip).
func Configure(ctx context.Context, t Target) error {
	hc, base, err := t.httpClient()
	if err != nil {
		return err
	}
	c := &Client{http: hc, base: base, requestTimeout: t.requestTimeout(), watchTimeout: t.watchTimeout(),
		userAgent: "apiconform"}
	caps, err := detect(ctx, c)
	if err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	current = &state{target: t, client: c, caps: caps, ctx: ctx}
	return nil
}

func st() *state {
	mu.RLock()
	defer mu.RUnlock()
	if current == nil {
		ginkgo.Fail("framework: no target configured (the runner calls framework.Configure before RunSpecs)")
	}
	return current
}

// Caps returns the capabilities detected by Configure.
func Caps() Capabilities { return st().caps }

// CompactionWait is how long a spec may wait for the target to drop history
// by itself when it has no compaction hook (Target.CompactionWait).
func CompactionWait() time.Duration { return st().target.compactionWait() }

// DefaultClient is the configured target's client.
func DefaultClient() *Client { return st().client }

// detect probes discovery once. Only /version is required to answer; the
// other probes just turn features off when they fail.
func detect(ctx context.Context, c *Client) (Capabilities, error) {
	var caps Capabilities
	r, err := c.Do(ctx, Request{Path: "/version"})
	if err != nil {
		return caps, fmt.Errorf("target unreachable: %w", err)
	}
	if r.Code != 200 {
		return caps, fmt.Errorf("target: GET /version answered %d: %s", r.Code, trim(r.Body, 300))
	}
	caps.GitVersion, caps.Major, caps.Minor = r.Str("gitVersion"), r.Str("major"), r.Str("minor")

	caps.CRDs, caps.CRDProblem = probeCRDs(ctx, c)
	if r, err := c.Do(ctx, Request{Path: "/apiconform/admin"}); err == nil && r.Code == 200 {
		caps.RefServer = true
	}
	if r, err := c.Do(ctx, Request{Path: "/apis/" + FrobberGroup}); err == nil && r.Code == 200 {
		caps.Frobbers = r.JSON("versions.#").Int() > 0
	}
	caps.WatchList, caps.WatchListProblem = probeWatchList(ctx, c)
	return caps, nil
}

// probeCRDs decides the CRD capability: absent only when discovery (/apis)
// does not list apiextensions.k8s.io/v1, as a server without CRDs does; a
// listed group that does not serve customresourcedefinitions is a problem.
func probeCRDs(ctx context.Context, c *Client) (bool, string) {
	r, err := c.Do(ctx, Request{Path: "/apis"})
	if err != nil || r.Code != 200 || !r.JSON(`groups.#(name=="apiextensions.k8s.io").versions.#(version=="v1")`).Exists() {
		return false, ""
	}
	r, err = c.Do(ctx, Request{Path: "/apis/apiextensions.k8s.io/v1"})
	if err != nil {
		return false, ""
	}
	if r.Code == 200 && r.JSON(`resources.#(name=="customresourcedefinitions")`).Exists() {
		return true, ""
	}
	return false, fmt.Sprintf("discovery lists apiextensions.k8s.io/v1 but GET /apis/apiextensions.k8s.io/v1 answered %d without customresourcedefinitions: %s",
		r.Code, trim(r.Body, 300))
}

// probeWatchList decides the watch-list capability. A capability is absent
// only when the target behaves as the documents allow a server without it
// to: it refuses the parameters (422/400 naming sendInitialEvents or
// resourceVersionMatch, as a server with the WatchList feature off or one
// older than v1.27 does), or it ignores sendInitialEvents and serves a plain
// watch from the resourceVersion given (no initial ADDED events for the
// objects that existed then). Anything else — an ERROR event, initial events
// without the annotated bookmark, a bookmark before the state, an annotated
// bookmark missing objects or at an older resourceVersion — is a problem:
// the capability is claimed and broken, and WATCH-SEND-INITIAL-EVENTS fails
// with what the probe saw.
func probeWatchList(ctx context.Context, c *Client) (supported bool, problem string) {
	const path = "/api/v1/namespaces"
	l, err := c.Do(ctx, Request{Path: path})
	if err != nil || l.Code != 200 {
		return false, ""
	}
	listRV := l.Str("metadata.resourceVersion")
	existing := map[string]bool{}
	for _, it := range l.JSON("items").Array() {
		existing[it.Get("metadata.name").String()] = true
	}
	q := url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"resourceVersion": {listRV}, "allowWatchBookmarks": {"true"}, "timeoutSeconds": {"5"}}
	var log []string
	fail := func(why string) (bool, string) {
		return false, fmt.Sprintf("watch %s?%s claimed watch-list support but %s; events: %s", path, q.Encode(), why,
			strings.Join(log, " | "))
	}
	w, err := c.OpenWatch(ctx, path, q, 10*time.Second)
	if err != nil {
		return false, "" // transport trouble: no decision, the specs see it themselves
	}
	defer w.Close()
	if w.Code != 200 {
		body := string(w.Body)
		if (w.Code == 422 || w.Code == 400) && (strings.Contains(body, "sendInitialEvents") || strings.Contains(body, "resourceVersionMatch")) {
			return false, "" // the parameter refused: allowed for servers without the feature
		}
		log = append(log, fmt.Sprintf("HTTP %d %s", w.Code, trim(w.Body, 300)))
		return fail("the watch was refused without naming the parameter")
	}
	seen := map[string]bool{}
	for i := 0; i < 10000; i++ {
		ev, err := w.Next(10 * time.Second)
		if err != nil {
			if len(seen) == 0 {
				return false, "" // a plain watch from the resourceVersion: the parameter ignored
			}
			return fail(fmt.Sprintf("the stream ended (%v) after initial events without the initial-events-end bookmark", err))
		}
		if len(log) < 20 {
			log = append(log, trim(ev.Raw, 300))
		}
		name := ev.Object.Get("metadata.name").String()
		switch ev.Type {
		case "ERROR":
			return fail("it sent an ERROR event")
		case "ADDED":
			if existing[name] {
				seen[name] = true
			}
		case "BOOKMARK":
			annotated := ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() == "true"
			switch {
			case !annotated && len(seen) == 0 && len(existing) > 0:
				return false, "" // a periodic bookmark of a plain watch: the parameter ignored
			case !annotated:
				return fail("a bookmark after the initial events lacks the k8s.io/initial-events-end annotation")
			case len(seen) < len(existing):
				return fail(fmt.Sprintf("the initial-events-end bookmark came after %d of the %d namespaces listed at %s", len(seen), len(existing), listRV))
			}
			if n, ok := RVInt(ev.Object.Get("metadata.resourceVersion").String()); ok {
				if m, ok := RVInt(listRV); ok && n < m {
					return fail(fmt.Sprintf("the initial-events-end bookmark's resourceVersion %d is older than the %d asked for", n, m))
				}
			}
			return true, ""
		}
	}
	return fail("no initial-events-end bookmark within 10000 events")
}

// FrobberGroup is the API group of the changing-the-API document's Frobber
// example, served only by the reference server.
const FrobberGroup = "compat.apiconform.io"

// ErrNotSupported is returned by hooks the target does not offer.
var ErrNotSupported = errors.New("not supported by this target")

// Compact asks the reference server to compact its history now and returns
// the compacted revision. Other targets: an error wrapping ErrNotSupported.
// Only a spec labelled CompactsHistory may call it.
func Compact(ctx context.Context) (int64, error) {
	s := st()
	if !s.caps.RefServer {
		return 0, fmt.Errorf("compact: %w (only the reference server offers /apiconform/admin/compact)", ErrNotSupported)
	}
	if !compactsHistory() {
		return 0, errors.New("compact: the spec is not labelled framework.CompactsHistory, so it would compact while other workers' specs read history (historylock.go)")
	}
	r, err := s.client.Do(ctx, Request{Method: "POST", Path: "/apiconform/admin/compact", Body: []byte("{}")})
	if err != nil {
		return 0, fmt.Errorf("compact: %w", err)
	}
	if r.Code != 200 {
		return 0, fmt.Errorf("compact: answered %d: %s", r.Code, trim(r.Body, 300))
	}
	rev := gjson.GetBytes(r.Body, "compactedRevision")
	if !rev.Exists() {
		return 0, fmt.Errorf("compact: no compactedRevision in %s", trim(r.Body, 300))
	}
	return rev.Int(), nil
}

// RequireCRDs skips the spec when discovery does not list
// apiextensions.k8s.io/v1 and fails it when the listed group is broken.
func RequireCRDs() {
	c := Caps()
	if c.CRDProblem != "" {
		ginkgo.Fail(c.CRDProblem, 1)
	}
	if !c.CRDs {
		ginkgo.Skip("allowance: a server without CustomResourceDefinitions does not list apiextensions.k8s.io/v1 in discovery, and this target does not")
	}
}

// RequireWatchList fails the spec when the target accepted sendInitialEvents
// but broke the protocol, and skips it when the target refused or ignored
// the parameter, as a server without streaming lists may (the WatchList
// gate, KEP-3157, may be off; servers before v1.27 do not know it).
func RequireWatchList() {
	c := Caps()
	if c.WatchListProblem != "" {
		ginkgo.Fail(c.WatchListProblem, 1)
	}
	if !c.WatchList {
		ginkgo.Skip("allowance: streaming lists need the WatchList feature (KEP-3157; a server may have it off, and servers before v1.27 lack it); this target refused or ignored sendInitialEvents without breaking the protocol")
	}
}

// RequireFrobbers ends the spec as not applicable unless discovery lists the Frobber group.
func RequireFrobbers() {
	if !Caps().Frobbers {
		NotApplicable("discovery does not list " + FrobberGroup + " (served only by the reference server)")
	}
}

// Area is the label of a suite area: "area:<name>".
func Area(name string) ginkgo.Labels { return ginkgo.Label("area:" + name) }

// Req labels a spec with the requirements it checks: "req:<id>" each.
func Req(ids ...string) ginkgo.Labels {
	out := make(ginkgo.Labels, 0, len(ids))
	for _, id := range ids {
		out = append(out, ReqLabel(id))
	}
	return out
}

// ReqLabel is the label of one requirement (same string as catalog.Label).
func ReqLabel(id string) string { return "req:" + id }

// ReqIDs extracts requirement IDs from a spec's labels.
func ReqIDs(labels []string) []string {
	var ids []string
	for _, l := range labels {
		if id, ok := strings.CutPrefix(l, "req:"); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// ServerURL is the configured target's base URL.
func ServerURL() string { return st().client.base }

// CapabilityMap is Caps as a name → supported map, for reports.
func (c Capabilities) CapabilityMap() map[string]bool {
	return map[string]bool{"crds": c.CRDs, "watchList": c.WatchList, "refServer": c.RefServer, "frobbers": c.Frobbers}
}
