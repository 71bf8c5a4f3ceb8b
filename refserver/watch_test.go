package refserver

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

func TestWatchSemantics(t *testing.T) {
	_, c := startTest(t)
	c.ns("w")
	base := "/api/v1/namespaces/w/configmaps"
	first := c.do("POST", base, cm("a", nil, map[string]string{"sel": "yes"}))
	c.mustCode(first, 201)

	t.Run("unset rv sends synthetic ADDED then changes", func(t *testing.T) {
		next, stop := c.watch(base + "?watch=1")
		defer stop()
		if ev := next(); ev["type"] != "ADDED" || evName(ev) != "a" {
			t.Fatalf("first event %v", ev)
		}
		c.mustCode(c.do("PATCH", base+"/a", `{"data":{"x":"1"}}`, "Content-Type", "application/merge-patch+json"), 200)
		if ev := next(); ev["type"] != "MODIFIED" {
			t.Fatalf("want MODIFIED, got %v", ev)
		}
	})
	t.Run("rv value sends exactly the changes after it", func(t *testing.T) {
		rv := first.str("metadata.resourceVersion")
		next, stop := c.watch(base + "?watch=true&resourceVersion=" + rv)
		defer stop()
		if ev := next(); ev["type"] != "MODIFIED" || evRV(ev) == rv {
			t.Fatalf("want the later MODIFIED, got %v", ev)
		}
	})
	t.Run("selector transitions", func(t *testing.T) {
		next, stop := c.watch(base + "?watch=1&labelSelector=sel%3Dyes")
		defer stop()
		if ev := next(); ev["type"] != "ADDED" {
			t.Fatalf("initial %v", ev)
		}
		c.mustCode(c.do("PATCH", base+"/a", `{"metadata":{"labels":{"sel":"no"}}}`, "Content-Type", "application/merge-patch+json"), 200)
		if ev := next(); ev["type"] != "DELETED" || evName(ev) != "a" {
			t.Fatalf("leaving the selector: %v", ev)
		}
		c.mustCode(c.do("PATCH", base+"/a", `{"metadata":{"labels":{"sel":"yes"}}}`, "Content-Type", "application/merge-patch+json"), 200)
		if ev := next(); ev["type"] != "ADDED" {
			t.Fatalf("entering the selector: %v", ev)
		}
		c.mustCode(c.do("DELETE", base+"/a", nil), 200)
		if ev := next(); ev["type"] != "DELETED" {
			t.Fatalf("delete: %v", ev)
		}
	})
	t.Run("bookmarks and initial-events-end", func(t *testing.T) {
		c.mustCode(c.do("POST", base, cm("b", nil, nil)), 201)
		next, stop := c.watch(base + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
		defer stop()
		if ev := next(); ev["type"] != "ADDED" || evName(ev) != "b" {
			t.Fatalf("initial %v", ev)
		}
		ev := next()
		o := ev["object"].(map[string]any)
		ann, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
		if ev["type"] != "BOOKMARK" || ann["k8s.io/initial-events-end"] != "true" || o["kind"] != "ConfigMap" {
			t.Fatalf("want the initial-events-end bookmark, got %v", ev)
		}
		// Periodic bookmarks (1s in embedded mode).
		if ev := next(); ev["type"] != "BOOKMARK" || evRV(ev) == "" {
			t.Fatalf("want a periodic bookmark, got %v", ev)
		}
	})
	t.Run("too old resourceVersion ends with a 410 ERROR event", func(t *testing.T) {
		c.mustCode(c.do("POST", base, cm("c", nil, nil)), 201)
		c.mustCode(c.do("POST", "/apiconform/admin/compact", nil), 200)
		next, stop := c.watch(base + "?watch=1&resourceVersion=1")
		defer stop()
		ev := next()
		o, _ := ev["object"].(map[string]any)
		if ev["type"] != "ERROR" || o["code"] != float64(410) || o["reason"] != "Expired" {
			t.Fatalf("want ERROR 410, got %v", ev)
		}
		if next() != nil {
			t.Fatal("the stream should end after the ERROR event")
		}
	})
	t.Run("timeoutSeconds ends the stream cleanly", func(t *testing.T) {
		next, stop := c.watch(base + "?watch=1&timeoutSeconds=1&allowWatchBookmarks=true")
		defer stop()
		sawBookmark := false
		for ev := next(); ev != nil; ev = next() {
			sawBookmark = sawBookmark || ev["type"] == "BOOKMARK"
		}
		if !sawBookmark {
			t.Fatal("want a bookmark before the timeout ends the stream")
		}
	})
}

func TestPagingAtOneSnapshot(t *testing.T) {
	_, c := startTest(t)
	c.ns("p")
	base := "/api/v1/namespaces/p/configmaps"
	for i := 0; i < 7; i++ {
		c.mustCode(c.do("POST", base, cm(fmt.Sprintf("c%d", i), nil, nil)), 201)
	}
	first := c.do("GET", base+"?limit=3", nil)
	rv := first.str("metadata.resourceVersion")
	if first.get("metadata.remainingItemCount") != float64(4) || first.str("metadata.continue") == "" {
		t.Fatalf("first page: %s", first.Body)
	}
	// A write after the first page must not show in later pages.
	c.mustCode(c.do("DELETE", base+"/c5", nil), 200)
	names := []string{}
	for _, it := range first.get("items").([]any) {
		names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
	}
	tok := first.str("metadata.continue")
	for tok != "" {
		p := c.do("GET", base+"?limit=3&continue="+url.QueryEscape(tok), nil)
		c.mustCode(p, 200)
		if p.str("metadata.resourceVersion") != rv {
			t.Fatalf("page at %s, want %s", p.str("metadata.resourceVersion"), rv)
		}
		for _, it := range p.get("items").([]any) {
			names = append(names, it.(map[string]any)["metadata"].(map[string]any)["name"].(string))
		}
		tok = p.str("metadata.continue")
		if tok == "" && p.get("metadata.remainingItemCount") != nil {
			t.Fatal("remainingItemCount on the last page")
		}
	}
	if len(names) != 7 || names[5] != "c5" {
		t.Fatalf("walk saw %v", names)
	}
	// No remainingItemCount with a selector.
	sel := c.do("GET", base+"?limit=1&labelSelector=x!%3Dy", nil)
	if sel.get("metadata.remainingItemCount") != nil || sel.str("metadata.continue") == "" {
		t.Fatalf("selector page: %s", sel.Body)
	}
	// Exact reads history; the list RV equals the request.
	ex := c.do("GET", base+"?resourceVersion="+rv+"&resourceVersionMatch=Exact", nil)
	c.mustCode(ex, 200)
	if ex.str("metadata.resourceVersion") != rv || len(ex.get("items").([]any)) != 7 {
		t.Fatalf("exact: %s", ex.Body)
	}
	// After compaction the token expires, and the offered token continues at the latest state.
	c.mustCode(c.do("POST", base, cm("z", nil, nil)), 201)
	c.mustCode(c.do("POST", "/apiconform/admin/compact", nil), 200)
	exp := c.do("GET", base+"?limit=3&continue="+url.QueryEscape(first.str("metadata.continue")), nil)
	c.mustCode(exp, 410)
	fresh := exp.str("metadata.continue")
	if exp.str("reason") != "Expired" || fresh == "" {
		t.Fatalf("expired: %s", exp.Body)
	}
	rest := c.do("GET", base+"?limit=10&continue="+url.QueryEscape(fresh), nil)
	c.mustCode(rest, 200)
	if n := len(rest.get("items").([]any)); n != 4 { // c3 c4 c6 z
		t.Fatalf("inconsistent continuation saw %d items: %s", n, rest.Body)
	}
}

// TestRandomConcurrentWrites hammers one namespace from several goroutines
// (bounded) and checks a watch sees every write in revision order.
func TestRandomConcurrentWrites(t *testing.T) {
	_, c := startTest(t)
	c.ns("r")
	base := "/api/v1/namespaces/r/configmaps"
	start := c.do("GET", base, nil).str("metadata.resourceVersion")
	next, stop := c.watch(base + "?watch=1&resourceVersion=" + start)
	defer stop()
	const workers, ops = 4, 25
	var wg sync.WaitGroup
	var mu sync.Mutex
	writes := 0
	seen := map[string]bool{} // no-op patches answer an already seen resourceVersion
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(w)))
			for i := 0; i < ops; i++ {
				name := fmt.Sprintf("o%d", rng.Intn(5))
				var r *resp
				switch rng.Intn(3) {
				case 0:
					r = c.do("POST", base, cm(name, nil, nil))
				case 1:
					r = c.do("PATCH", base+"/"+name, fmt.Sprintf(`{"data":{"i":"%d"}}`, i), "Content-Type", "application/merge-patch+json")
				default:
					r = c.do("DELETE", base+"/"+name, nil)
				}
				if r.Code >= 500 {
					t.Errorf("server error: %s", r.Body)
				}
				if r.Code == 200 || r.Code == 201 {
					mu.Lock()
					if rv := r.str("metadata.resourceVersion"); rv == "" || !seen[rv] {
						seen[rv] = rv != ""
						writes++
					}
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	last := int64(0)
	for i := 0; i < writes; i++ {
		ev := next()
		rv, _ := strconv.ParseInt(evRV(ev), 10, 64)
		if rv <= last {
			b, _ := json.Marshal(ev)
			t.Fatalf("event %d out of order: %s after %d", i, b, last)
		}
		last = rv
	}
	_ = time.Second
}

// TestFaultsBreakWhatTheySay checks each fault switch changes the behaviour it names.
func TestFaultsBreakWhatTheySay(t *testing.T) {
	probe := func(c *client) (exactRV string, remaining any, warned bool, dryPersists bool, firstWatch string) {
		c.ns("fl")
		base := "/api/v1/namespaces/fl/configmaps"
		first := c.do("POST", base, cm("a", nil, nil))
		c.mustCode(c.do("POST", base, cm("b", nil, nil)), 201)
		rv := first.str("metadata.resourceVersion")
		exactRV = c.do("GET", base+"?resourceVersion="+rv+"&resourceVersionMatch=Exact", nil).str("metadata.resourceVersion")
		remaining = c.do("GET", base+"?limit=1", nil).get("metadata.remainingItemCount")
		warned = len(c.do("POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"bogus":1}`).Header.Values("Warning")) > 0
		c.do("POST", base+"?dryRun=All", cm("dry", nil, nil))
		dryPersists = c.do("GET", base+"/dry", nil).Code == 200
		next, stop := c.watch(base + "?watch=1&allowWatchBookmarks=true")
		defer stop()
		ev := next()
		firstWatch, _ = ev["type"].(string)
		return exactRV, remaining, warned, dryPersists, firstWatch
	}
	_, good := startTest(t)
	gRV, gRem, gWarn, gDry, gWatch := probe(good)
	_, bad := startTest(t, func(c *Config) {
		c.Faults = map[string]bool{"ignore-rv-match-exact": true, "wrong-remaining-item-count": true, "no-warning-header": true, "dry-run-persists": true, "no-synthetic-added": true}
	})
	bRV, bRem, bWarn, bDry, bWatch := probe(bad)
	if gRV == bRV || gRem == bRem || gWarn == bWarn || gDry == bDry || gWatch == bWatch {
		t.Fatalf("good %v %v %v %v %v, faulty %v %v %v %v %v", gRV, gRem, gWarn, gDry, gWatch, bRV, bRem, bWarn, bDry, bWatch)
	}
}
