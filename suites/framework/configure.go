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

	if r, err := c.Do(ctx, Request{Path: "/apis/apiextensions.k8s.io/v1"}); err == nil && r.Code == 200 {
		for _, res := range r.JSON("resources").Array() {
			if res.Get("name").String() == "customresourcedefinitions" {
				caps.CRDs = true
			}
		}
	}
	if r, err := c.Do(ctx, Request{Path: "/apiconform/admin"}); err == nil && r.Code == 200 {
		caps.RefServer = true
	}
	if r, err := c.Do(ctx, Request{Path: "/apis/" + FrobberGroup}); err == nil && r.Code == 200 {
		caps.Frobbers = r.JSON("versions.#").Int() > 0
	}
	caps.WatchList = probeWatchList(ctx, c)
	return caps, nil
}

// probeWatchList opens a short watch-list stream of namespaces and looks for
// the bookmark annotated k8s.io/initial-events-end.
func probeWatchList(ctx context.Context, c *Client) bool {
	q := url.Values{"watch": {"1"}, "sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"},
		"allowWatchBookmarks": {"true"}, "timeoutSeconds": {"5"}}
	w, err := c.OpenWatch(ctx, "/api/v1/namespaces", q, 10*time.Second)
	if err != nil || w.Code != 200 {
		if w != nil {
			w.Close()
		}
		return false
	}
	defer w.Close()
	for i := 0; i < 10000; i++ {
		ev, err := w.Next(10 * time.Second)
		if err != nil {
			return false
		}
		if ev.Type == "BOOKMARK" && ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() == "true" {
			return true
		}
	}
	return false
}

// FrobberGroup is the API group of the changing-the-API document's Frobber
// example, served only by the reference server.
const FrobberGroup = "compat.apiconform.io"

// ErrNotSupported is returned by hooks the target does not offer.
var ErrNotSupported = errors.New("not supported by this target")

// Compact asks the reference server to compact its history now and returns
// the compacted revision. Other targets: an error wrapping ErrNotSupported.
func Compact(ctx context.Context) (int64, error) {
	s := st()
	if !s.caps.RefServer {
		return 0, fmt.Errorf("compact: %w (only the reference server offers /apiconform/admin/compact)", ErrNotSupported)
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

// RequireCRDs skips the spec when the target serves no CustomResourceDefinitions.
func RequireCRDs() {
	if !Caps().CRDs {
		ginkgo.Skip("target does not serve apiextensions.k8s.io/v1 customresourcedefinitions")
	}
}

// RequireWatchList skips the spec when watch with sendInitialEvents is not supported.
func RequireWatchList() {
	if !Caps().WatchList {
		ginkgo.Skip("target does not support watch lists (sendInitialEvents=true did not end with an initial-events-end bookmark)")
	}
}

// RequireFrobbers skips the spec unless discovery lists the Frobber group.
func RequireFrobbers() {
	if !Caps().Frobbers {
		ginkgo.Skip("discovery does not list " + FrobberGroup + " (served only by the reference server)")
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
