package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/tidwall/gjson"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiconform/apiconform/suites/framework"
)

// tokenEnv passes a bearer token without putting it on a command line.
const tokenEnv = "APICONFORM_TOKEN"

// targetFlags select the server under test; shared by run and bench.
type targetFlags struct {
	kubeconfig, context   string
	server, token, caFile string
	insecureSkipTLSVerify bool
}

func (t *targetFlags) register(f *pflag.FlagSet) {
	f.StringVar(&t.kubeconfig, "kubeconfig", "", "kubeconfig of the target (exec plugins, client certificates and tokens work)")
	f.StringVar(&t.context, "context", "", "kubeconfig context (default: current-context)")
	f.StringVar(&t.server, "server", "", "base URL of the target, e.g. https://127.0.0.1:6443 (instead of --kubeconfig)")
	f.StringVar(&t.token, "token", os.Getenv(tokenEnv), "bearer token for --server (default $"+tokenEnv+")")
	f.StringVar(&t.caFile, "certificate-authority", "", "PEM CA bundle that signs --server's certificate")
	f.BoolVar(&t.insecureSkipTLSVerify, "insecure-skip-tls-verify", false, "do not verify --server's certificate")
}

// embedded reports whether no target was named, so the embedded reference
// server is the target.
func (t *targetFlags) embedded() bool { return t.kubeconfig == "" && t.server == "" }

// resolve turns the flags into a framework target, starting the embedded
// reference server when none was named; cleanup stops what was started.
func (t *targetFlags) resolve(ctx context.Context, log io.Writer) (framework.Target, func(), error) {
	switch {
	case t.kubeconfig != "" && t.server != "":
		return framework.Target{}, func() {}, errors.New("give either --kubeconfig or --server, not both")
	case t.context != "" && t.kubeconfig == "":
		return framework.Target{}, func() {}, errors.New("--context needs --kubeconfig")
	case t.kubeconfig != "":
		name := t.context
		if name == "" {
			cfg, err := clientcmd.LoadFromFile(t.kubeconfig)
			if err != nil {
				return framework.Target{}, func() {}, fmt.Errorf("kubeconfig %s: %w", t.kubeconfig, err)
			}
			name = cfg.CurrentContext
		}
		return framework.Target{Kubeconfig: t.kubeconfig, Context: t.context, Name: name}, func() {}, nil
	case t.server != "":
		u, err := url.Parse(t.server)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return framework.Target{}, func() {}, fmt.Errorf("--server %q: want an http:// or https:// URL", t.server)
		}
		return framework.Target{Server: t.server, Token: t.token, CertificateAuthority: t.caFile,
			InsecureSkipTLSVerify: t.insecureSkipTLSVerify, Name: u.Host}, func() {}, nil
	}
	return startEmbedded(ctx, log)
}

// preflight checks that the target answers and accepts our credentials
// before any spec runs, so a wrong address or token is one clear line
// instead of hundreds of failed specs. It returns the server's gitVersion.
// Each request is bounded by the target's request timeout, so a server
// that accepts connections and never answers fails here within it.
func preflight(ctx context.Context, t framework.Target) (string, error) {
	hc, base, err := t.HTTPClient()
	if err != nil {
		return "", err
	}
	timeout := cmp.Or(t.RequestTimeout, framework.DefaultRequestTimeout)
	get := func(path string) (int, []byte, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, describeConnError(base, err, timeout)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return 0, nil, describeConnError(base, err, timeout)
		}
		return resp.StatusCode, body, nil
	}
	code, body, err := get("/version")
	if err != nil {
		return "", err
	}
	if err := statusProblem(base, "/version", code, body); err != nil {
		return "", err
	}
	version := gjson.GetBytes(body, "gitVersion").String()
	// /version is often public; a namespaced list proves the credentials work.
	code, body, err = get("/api/v1/namespaces?limit=1")
	if err != nil {
		return "", err
	}
	if err := statusProblem(base, "/api/v1/namespaces", code, body); err != nil {
		return "", err
	}
	return version, nil
}

func statusProblem(base, path string, code int, body []byte) error {
	msg := gjson.GetBytes(body, "message").String()
	if msg == "" {
		msg = strings.TrimSpace(string(body))
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
	}
	switch {
	case code == http.StatusUnauthorized:
		return fmt.Errorf("%s rejected the credentials (401 Unauthorized on GET %s): %s", base, path, msg)
	case code == http.StatusForbidden:
		return fmt.Errorf("%s refused access (403 Forbidden on GET %s): %s", base, path, msg)
	case code != http.StatusOK:
		return fmt.Errorf("%s answered GET %s with %d: %s", base, path, code, msg)
	}
	return nil
}

// describeConnError names the usual connection problems in one line.
func describeConnError(base string, err error, timeout time.Duration) error {
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var certInvalid x509.CertificateInvalidError
	var recordHeader tls.RecordHeaderError
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused (is the server running?)", base)
	case errors.As(err, &unknownAuthority):
		return fmt.Errorf("TLS to %s: certificate signed by an unknown authority (use --certificate-authority, or --insecure-skip-tls-verify for a throwaway server)", base)
	case errors.As(err, &hostname), errors.As(err, &certInvalid):
		return fmt.Errorf("TLS to %s: %v", base, err)
	case errors.As(err, &recordHeader):
		return fmt.Errorf("TLS to %s: the server does not speak TLS (try http://)", base)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("cannot resolve %s: %v", base, dnsErr)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach %s: no answer within --request-timeout %s", base, timeout)
	}
	return fmt.Errorf("cannot reach %s: %v", base, err)
}
