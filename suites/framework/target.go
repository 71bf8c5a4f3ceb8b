package framework

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Default deadlines, used when a Target leaves them zero.
const (
	DefaultRequestTimeout = 30 * time.Second
	DefaultWatchTimeout   = 60 * time.Second
	// DefaultCompactionWait bounds how long a target without a compaction
	// hook may take to drop history on its own (etcd compaction, watch cache
	// window), counted from when the spec wrote it, before the spec skips
	// with the reason.
	DefaultCompactionWait = 90 * time.Second
)

// Target says where the server under test is and how to authenticate.
// Either Kubeconfig (optionally with Context) or Server is set.
type Target struct {
	Kubeconfig string // path to a kubeconfig file
	Context    string // kubeconfig context; empty means current-context

	Server                string // base URL, e.g. https://127.0.0.1:6443
	Token                 string // bearer token
	InsecureSkipTLSVerify bool
	CertificateAuthority  string // path to a PEM CA bundle

	// Name is how reports call the target (e.g. "kube-apiserver"); free text.
	Name string

	RequestTimeout time.Duration // deadline of each request (default 30s)
	WatchTimeout   time.Duration // upper bound of each watch stream (default 60s)
	CompactionWait time.Duration // for history to expire without a hook, from when it was written (default 90s)
}

func (t Target) requestTimeout() time.Duration {
	if t.RequestTimeout > 0 {
		return t.RequestTimeout
	}
	return DefaultRequestTimeout
}

func (t Target) compactionWait() time.Duration {
	if t.CompactionWait > 0 {
		return t.CompactionWait
	}
	return DefaultCompactionWait
}

func (t Target) watchTimeout() time.Duration {
	if t.WatchTimeout > 0 {
		return t.WatchTimeout
	}
	return DefaultWatchTimeout
}

// restConfig resolves the target into a client-go rest.Config, so exec
// plugins, client certificates and tokens work exactly as for kubectl.
func (t Target) restConfig() (*rest.Config, error) {
	switch {
	case t.Kubeconfig != "" && t.Server != "":
		return nil, errors.New("target: give either a kubeconfig or a server URL, not both")
	case t.Kubeconfig != "":
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: t.Kubeconfig}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: t.Context}
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("target: kubeconfig %s: %w", t.Kubeconfig, err)
		}
		return cfg, nil
	case t.Server != "":
		if !strings.HasPrefix(t.Server, "http://") && !strings.HasPrefix(t.Server, "https://") {
			return nil, fmt.Errorf("target: server %q: want an http:// or https:// URL", t.Server)
		}
		cfg := &rest.Config{Host: t.Server, BearerToken: t.Token}
		cfg.Insecure = t.InsecureSkipTLSVerify
		cfg.CAFile = t.CertificateAuthority
		return cfg, nil
	default:
		return nil, errors.New("target: no kubeconfig and no server URL given")
	}
}

// httpClient builds the authenticated HTTP client. Timeouts are applied per
// request through contexts, not on the client, so watches can run longer.
func (t Target) httpClient() (*http.Client, string, error) {
	cfg, err := t.restConfig()
	if err != nil {
		return nil, "", err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("target: transport: %w", err)
	}
	host := strings.TrimSuffix(cfg.Host, "/")
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	return hc, host + strings.TrimSuffix(cfg.APIPath, "/"), nil
}
