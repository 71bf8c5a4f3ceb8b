package openapi

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// FetchOptions configure a live fetch of /openapi/v2.
type FetchOptions struct {
	// Token is sent as a bearer token when set.
	Token string
	// InsecureSkipTLSVerify accepts any server certificate.
	InsecureSkipTLSVerify bool
	// Client overrides the HTTP client (tests); Token and InsecureSkipTLSVerify still apply to requests.
	Client *http.Client
	// MaxBytes caps the response size (default 256 MiB).
	MaxBytes int64
}

// Fetch downloads the Swagger 2.0 document a Kubernetes API server serves at
// server + "/openapi/v2" and loads it.
func Fetch(ctx context.Context, server string, opts FetchOptions) (*Document, error) {
	return fetchPath(ctx, server, "/openapi/v2", opts)
}

// FetchCRD downloads one CustomResourceDefinition (with its status.storedVersions)
// from a server's apiextensions.k8s.io/v1 API and loads it.
func FetchCRD(ctx context.Context, server, name string, opts FetchOptions) (*Document, error) {
	if name == "" || strings.ContainsAny(name, "/?#") {
		return nil, fmt.Errorf("invalid CustomResourceDefinition name %q", name)
	}
	return fetchPath(ctx, server, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, opts)
}

func fetchPath(ctx context.Context, server, path string, opts FetchOptions) (*Document, error) {
	url := strings.TrimRight(server, "/") + path
	client := opts.Client
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if opts.InsecureSkipTLSVerify {
			tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it
		}
		client = &http.Client{Transport: tr, Timeout: 2 * time.Minute}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	req.Header.Set("Accept", "application/json")
	if opts.Token != "" {
		req.Header.Set("Authorization", "Bearer "+opts.Token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: HTTP %d", url, resp.StatusCode)
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = 256 << 20
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("fetch %s: document larger than %d bytes", url, max)
	}
	return LoadBytes(data, url)
}
