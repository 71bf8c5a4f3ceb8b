package robustness

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// client is a small JSON client for one server.
type client struct {
	base  string
	token string
	http  *http.Client
}

func newClient(base, token string) *client {
	return &client{base: base, token: token, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// obj is the part of an object the checks read.
type obj struct {
	Metadata struct {
		Name            string            `json:"name"`
		ResourceVersion string            `json:"resourceVersion"`
		Labels          map[string]string `json:"labels"`
		Annotations     map[string]string `json:"annotations"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
	// Status fields, for errors.
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (o obj) rv() int64 {
	n, _ := strconv.ParseInt(o.Metadata.ResourceVersion, 10, 64)
	return n
}

// do sends one request; out (when non-nil) receives the decoded body.
func (c *client) do(ctx context.Context, method, path string, body any, out *obj) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %d %q: %w", method, path, resp.StatusCode, b, err)
		}
	}
	return resp.StatusCode, nil
}

func (c *client) createNamespace(ctx context.Context, ns string) (int64, error) {
	var o obj
	code, err := c.do(ctx, http.MethodPost, "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}, &o)
	if err == nil && code != http.StatusCreated {
		err = fmt.Errorf("create namespace %s: %d %s", ns, code, o.Message)
	}
	return o.rv(), err
}

// event is one watch event as the checks see it.
type event struct {
	Type   string `json:"type"`
	Object obj    `json:"object"`
}

// stream reads a watch response line by line until it ends or fn says stop.
func (c *client) stream(ctx context.Context, path string, fn func(event) bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("watch %s: %d %s", path, resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return fmt.Errorf("watch %s: bad event %q: %w", path, sc.Bytes(), err)
		}
		if !fn(ev) {
			return nil
		}
	}
	if ctx.Err() != nil {
		return nil
	}
	return sc.Err()
}
