package refserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// client is a tiny raw-HTTP client for tests.
type client struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client
}

type resp struct {
	Code   int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

func startTest(t *testing.T, mutate ...func(*Config)) (*Server, *client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mut := append([]func(*Config){func(c *Config) { c.RevisionWait = 200 * time.Millisecond }}, mutate...)
	s, err := StartEmbedded(ctx, mut...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = s.Close() })
	return s, &client{t: t, base: s.URL(), token: s.Token(), hc: &http.Client{Timeout: 30 * time.Second}}
}

func (c *client) do(method, path string, body any, hdr ...string) *resp {
	c.t.Helper()
	var rd io.Reader
	ct := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = strings.NewReader(string(b))
	default:
		j, _ := json.Marshal(b)
		rd = strings.NewReader(string(j))
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ct)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	out := &resp{Code: res.StatusCode, Header: res.Header, Body: b}
	_ = json.Unmarshal(b, &out.JSON)
	return out
}

// get walks a dotted path in the JSON body.
func (r *resp) get(path string) any {
	var cur any = r.JSON
	for _, p := range strings.Split(path, ".") {
		switch m := cur.(type) {
		case map[string]any:
			cur = m[p]
		case []any:
			i := 0
			for _, ch := range p {
				i = i*10 + int(ch-'0')
			}
			if i >= len(m) {
				return nil
			}
			cur = m[i]
		default:
			return nil
		}
	}
	return cur
}

func (r *resp) str(path string) string {
	s, _ := r.get(path).(string)
	return s
}

func (c *client) mustCode(r *resp, code int) {
	c.t.Helper()
	if r.Code != code {
		c.t.Fatalf("got %d, want %d: %s", r.Code, code, r.Body)
	}
}

func (c *client) ns(name string) {
	c.t.Helper()
	c.mustCode(c.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}), 201)
}

func cm(name string, data map[string]string, labels map[string]string) map[string]any {
	md := map[string]any{"name": name}
	if labels != nil {
		md["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": data}
}

// watch opens a watch and returns a function reading the next event;
// hdr are header names and values, as do takes them.
func (c *client) watch(path string, hdr ...string) (next func() map[string]any, stop func()) {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.hc.Do(req)
	if err != nil {
		cancel()
		c.t.Fatal(err)
	}
	if res.StatusCode != 200 {
		b, _ := io.ReadAll(res.Body)
		cancel()
		c.t.Fatalf("watch %s: %d %s", path, res.StatusCode, b)
	}
	dec := json.NewDecoder(bufio.NewReader(res.Body))
	events := make(chan map[string]any, 100)
	go func() {
		defer close(events)
		for {
			var ev map[string]any
			if err := dec.Decode(&ev); err != nil {
				return
			}
			events <- ev
		}
	}()
	next = func() map[string]any {
		c.t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				return nil
			}
			return ev
		case <-time.After(10 * time.Second):
			c.t.Fatal("no watch event within 10s")
			return nil
		}
	}
	return next, func() { cancel(); res.Body.Close() }
}

func evName(ev map[string]any) string {
	o, _ := ev["object"].(map[string]any)
	m, _ := o["metadata"].(map[string]any)
	s, _ := m["name"].(string)
	return s
}

func evRV(ev map[string]any) string {
	o, _ := ev["object"].(map[string]any)
	m, _ := o["metadata"].(map[string]any)
	s, _ := m["resourceVersion"].(string)
	return s
}
