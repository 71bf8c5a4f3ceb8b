package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func benchServer(b *testing.B) (*Server, *client) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := StartEmbedded(ctx, func(c *Config) { c.WatchBuffer = 20000 })
	if err != nil {
		cancel()
		b.Fatal(err)
	}
	b.Cleanup(func() { cancel(); _ = s.Close() })
	t := &testing.T{}
	c := &client{t: t, base: s.URL(), token: s.Token(), hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}}
	c.ns("bench")
	return s, c
}

// fill creates n configmaps through the registry's HTTP path.
func fill(b *testing.B, c *client, n int) {
	b.Helper()
	var wg sync.WaitGroup
	per := n / 4
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < per; i++ {
				r := c.do("POST", "/api/v1/namespaces/bench/configmaps", cm(fmt.Sprintf("f-%d-%05d", w, i), map[string]string{"k": "v"}, nil))
				if r.Code != 201 {
					b.Errorf("fill: %d %s", r.Code, r.Body)
					return
				}
			}
		}(w)
	}
	wg.Wait()
}

func BenchmarkCreate(b *testing.B) {
	_, c := benchServer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.do("POST", "/api/v1/namespaces/bench/configmaps", cm(fmt.Sprintf("c%d", i), map[string]string{"k": "v"}, nil)); r.Code != 201 {
			b.Fatal(string(r.Body))
		}
	}
}

func BenchmarkGet(b *testing.B) {
	_, c := benchServer(b)
	c.do("POST", "/api/v1/namespaces/bench/configmaps", cm("g", map[string]string{"k": "v"}, nil))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.do("GET", "/api/v1/namespaces/bench/configmaps/g", nil); r.Code != 200 {
			b.Fatal(string(r.Body))
		}
	}
}

func BenchmarkPatch(b *testing.B) {
	_, c := benchServer(b)
	c.do("POST", "/api/v1/namespaces/bench/configmaps", cm("p", map[string]string{"k": "v"}, nil))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := c.do("PATCH", "/api/v1/namespaces/bench/configmaps/p", fmt.Sprintf(`{"data":{"k":"%d"}}`, i), "Content-Type", "application/merge-patch+json"); r.Code != 200 {
			b.Fatal(string(r.Body))
		}
	}
}

func BenchmarkList10000(b *testing.B) {
	_, c := benchServer(b)
	fill(b, c, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := c.do("GET", "/api/v1/namespaces/bench/configmaps", nil)
		if r.Code != 200 || len(r.get("items").([]any)) != 10000 {
			b.Fatalf("list: %d", r.Code)
		}
	}
}

// BenchmarkListSelector10000 lists 10,000 configmaps by a label selector
// none matches: the cost of the filter alone.
func BenchmarkListSelector10000(b *testing.B) {
	_, c := benchServer(b)
	fill(b, c, 10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := c.do("GET", "/api/v1/namespaces/bench/configmaps?labelSelector=app%3Dnone", nil)
		if r.Code != 200 || len(r.get("items").([]any)) != 0 {
			b.Fatalf("list: %d", r.Code)
		}
	}
}

// BenchmarkPaging10000By500 pages through 10,000 configmaps: "encoded" is the
// compact-JSON path serving pre-encoded items, "objects" the decode and
// re-encode path an Accept naming protobuf takes (the cost before the cache).
func BenchmarkPaging10000By500(b *testing.B) {
	_, c := benchServer(b)
	fill(b, c, 10000)
	for _, bc := range []struct{ name, accept string }{
		{"encoded", "application/json"},
		{"objects", "application/json, application/vnd.kubernetes.protobuf;q=0.5"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				tok, n := "", 0
				for {
					r := c.do("GET", "/api/v1/namespaces/bench/configmaps?limit=500&continue="+url.QueryEscape(tok), nil, "Accept", bc.accept)
					n += len(r.get("items").([]any))
					if tok = r.str("metadata.continue"); tok == "" {
						break
					}
				}
				if n != 10000 {
					b.Fatalf("paged %d items", n)
				}
			}
		})
	}
}

// BenchmarkWatchFanout: 100 watchers each receive 10,000 events.
func BenchmarkWatchFanout(b *testing.B) {
	const watchers, events = 100, 10000
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, c := benchServer(b)
		rv := c.do("GET", "/api/v1/namespaces/bench/configmaps", nil).str("metadata.resourceVersion")
		var ready, done sync.WaitGroup
		ctx, cancel := context.WithCancel(context.Background())
		for w := 0; w < watchers; w++ {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/api/v1/namespaces/bench/configmaps?watch=1&resourceVersion="+rv, nil)
				req.Header.Set("Authorization", "Bearer "+c.token)
				res, err := c.hc.Do(req)
				ready.Done()
				if err != nil {
					b.Error(err)
					return
				}
				defer res.Body.Close()
				sc := bufio.NewScanner(res.Body)
				sc.Buffer(make([]byte, 1<<20), 1<<20)
				for n := 0; n < events && sc.Scan(); n++ {
					var ev struct{ Type string }
					_ = json.Unmarshal(sc.Bytes(), &ev)
				}
				_, _ = io.Copy(io.Discard, strings.NewReader(""))
			}()
		}
		ready.Wait()
		b.StartTimer()
		fill(b, c, events)
		done.Wait()
		cancel()
	}
}
