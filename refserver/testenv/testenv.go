// Package testenv starts the apiconform reference server in-process for Go
// tests: a real API server on 127.0.0.1 (HTTPS, an admin token) that starts
// in milliseconds and honours what unit-test fakes do not — limit/continue,
// resourceVersion semantics and 410 Gone, watches and bookmarks, dry-run,
// field validation, server-side apply, CRD schemas, defaults and pruning.
//
//	func TestReconciler(t *testing.T) {
//		env := testenv.Start(t, testenv.CRDs("config/crd/bases"))
//		mgr, err := ctrl.NewManager(env.Config, ctrl.Options{})
//		...
//	}
//
// Start returns once the server answers and every CRD given is Established
// and served; the server stops when the test ends (t.Cleanup). New/Stop are
// the same without a testing.TB, for TestMain or a Ginkgo BeforeSuite.
package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiconform/apiconform/refserver"
)

// DefaultReadyTimeout bounds waiting for a CRD to be Established and served.
const DefaultReadyTimeout = 30 * time.Second

// Env is a running reference server for one test (or one test binary).
type Env struct {
	// Config is an admin client configuration for the server (HTTPS with the
	// server's CA, a bearer token in system:masters); copy it before changing it.
	Config *rest.Config
	// Kubeconfig is the same as a kubeconfig document; KubeconfigPath is a file
	// holding it (written under the test's temporary directory, or os.TempDir).
	Kubeconfig     []byte
	KubeconfigPath string

	server  *refserver.Server
	cancel  context.CancelFunc
	tempDir string // removed by Stop when New created it
	timeout time.Duration
}

// Option configures New and Start.
type Option func(*options)

type options struct {
	crdPaths     []string
	readyTimeout time.Duration
	mutate       []func(*refserver.Config)
}

// CRDs installs the CustomResourceDefinition manifests found at paths (YAML
// or JSON files, several documents per file allowed, or directories of them:
// *.yaml, *.yml and *.json directly inside) before New returns. A missing
// path or a document that is not a CRD is an error.
func CRDs(paths ...string) Option {
	return func(o *options) { o.crdPaths = append(o.crdPaths, paths...) }
}

// ReadyTimeout bounds waiting for each CRD to be Established and served
// (default DefaultReadyTimeout).
func ReadyTimeout(d time.Duration) Option { return func(o *options) { o.readyTimeout = d } }

// ServerConfig adjusts the reference server's configuration (history window,
// bookmark interval, data directory, simulated deviations...) before it starts.
func ServerConfig(mutate func(*refserver.Config)) Option {
	return func(o *options) { o.mutate = append(o.mutate, mutate) }
}

// Start starts a server for tb, fails tb when it cannot, and stops the
// server when tb ends.
func Start(tb testing.TB, opts ...Option) *Env {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startBudget(opts))
	defer cancel()
	e, err := New(ctx, opts...)
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(func() {
		if err := e.Stop(); err != nil {
			tb.Errorf("testenv: stop: %v", err)
		}
	})
	return e
}

func startBudget(opts []Option) time.Duration {
	o := collect(opts)
	return time.Minute + time.Duration(len(o.crdPaths))*o.readyTimeout
}

func collect(opts []Option) options {
	o := options{readyTimeout: DefaultReadyTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// New starts a server and installs the CRDs of the options; Stop ends it.
// ctx bounds the start (not the server's life).
func New(ctx context.Context, opts ...Option) (*Env, error) {
	o := collect(opts)
	life, cancel := context.WithCancel(context.Background())
	s, err := refserver.StartEmbedded(life, append([]func(*refserver.Config){func(c *refserver.Config) {
		c.Addr, c.InsecureAddr = "127.0.0.1:0", "" // HTTPS, so kubectl sends the token
	}}, o.mutate...)...)
	if err != nil {
		cancel()
		return nil, err
	}
	e := &Env{server: s, cancel: cancel, timeout: o.readyTimeout, Kubeconfig: s.Kubeconfig()}
	fail := func(err error) (*Env, error) {
		_ = e.Stop()
		return nil, err
	}
	if e.Config, err = clientcmd.RESTConfigFromKubeConfig(e.Kubeconfig); err != nil {
		return fail(fmt.Errorf("client config: %w", err))
	}
	e.Config.QPS, e.Config.Burst = 1000, 2000 // an in-process test server: no need to throttle
	if e.tempDir, err = os.MkdirTemp("", "apiconform-testenv-"); err != nil {
		return fail(err)
	}
	e.KubeconfigPath = filepath.Join(e.tempDir, "kubeconfig")
	if err := os.WriteFile(e.KubeconfigPath, e.Kubeconfig, 0o600); err != nil {
		return fail(err)
	}
	if len(o.crdPaths) > 0 {
		if _, err := e.InstallCRDs(ctx, o.crdPaths...); err != nil {
			return fail(err)
		}
	}
	return e, nil
}

// URL is the server's base URL (https://127.0.0.1:<port>).
func (e *Env) URL() string { return e.server.URL() }

// Server is the running reference server, for tests that need its registry.
func (e *Env) Server() *refserver.Server { return e.server }

// Stop stops the server and removes the kubeconfig file. Safe to call twice.
func (e *Env) Stop() error {
	// Clients built from Config share client-go's cached transport. Closing its
	// idle connections first lets the server shut down at once instead of
	// waiting out HTTP/2's graceful GOAWAY (about a second).
	if e.Config != nil {
		if rt, err := rest.TransportFor(e.Config); err == nil {
			utilnet.CloseIdleConnectionsFor(rt)
		}
	}
	e.cancel()
	err := e.server.Close()
	if e.tempDir != "" {
		err = errors.Join(err, os.RemoveAll(e.tempDir))
		e.tempDir = ""
	}
	return err
}

// Compact drops the server's history now (the admin compaction hook), so a
// test can see how its controller handles 410 Gone on watches and continue
// tokens. It returns the compacted revision.
func (e *Env) Compact(ctx context.Context) (int64, error) {
	hc, err := rest.HTTPClientFor(e.Config)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL()+"/apiconform/admin/compact", strings.NewReader("{}"))
	if err != nil {
		return 0, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("compact: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("compact: %d %s", resp.StatusCode, body)
	}
	var out struct {
		CompactedRevision int64 `json:"compactedRevision"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return 0, fmt.Errorf("compact: %s: %w", body, err)
	}
	return out.CompactedRevision, nil
}

// InstallCRDs creates the CRDs found at paths (see CRDs) and waits until each
// is Established and its served versions are in discovery. It returns them as
// the server stored them.
func (e *Env) InstallCRDs(ctx context.Context, paths ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	crds, err := ReadCRDs(paths...)
	if err != nil {
		return nil, err
	}
	client, err := apiextensionsclient.NewForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, crd := range crds {
		created, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("create CRD %s: %w", crd.Name, err)
		}
		out = append(out, created)
	}
	for i, crd := range out {
		ready, err := e.waitServed(ctx, client, crd)
		if err != nil {
			return nil, err
		}
		out[i] = ready
	}
	return out, nil
}

// waitServed polls (bounded by the ready timeout) until crd is Established
// and discovery lists its resource in every served version, which is what
// RESTMappers and informers need.
func (e *Env) waitServed(ctx context.Context, client apiextensionsclient.Interface, crd *apiextensionsv1.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	dc, err := discovery.NewDiscoveryClientForConfig(e.Config)
	if err != nil {
		return nil, err
	}
	var last error
	for {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case err != nil:
			last = err
		case !established(got):
			last = fmt.Errorf("not Established yet")
		default:
			if last = servedInDiscovery(dc, got); last == nil {
				return got, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("CRD %s not ready within %s: %v", crd.Name, e.timeout, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func servedInDiscovery(dc discovery.DiscoveryInterface, crd *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range crd.Spec.Versions {
		if !v.Served {
			continue
		}
		gv := crd.Spec.Group + "/" + v.Name
		list, err := dc.ServerResourcesForGroupVersion(gv)
		if err != nil {
			return fmt.Errorf("discovery %s: %w", gv, err)
		}
		if !slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == crd.Spec.Names.Plural }) {
			return fmt.Errorf("discovery %s does not list %s yet", gv, crd.Spec.Names.Plural)
		}
	}
	return nil
}

// ReadCRDs reads CRD manifests from files and directories (see CRDs).
func ReadCRDs(paths ...string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("CRD path: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		entries, err := os.ReadDir(p)
		if err != nil {
			return nil, fmt.Errorf("CRD directory: %w", err)
		}
		for _, en := range entries {
			switch filepath.Ext(en.Name()) {
			case ".yaml", ".yml", ".json":
				if !en.IsDir() {
					files = append(files, filepath.Join(p, en.Name()))
				}
			}
		}
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		crds, err := readFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, crds...)
	}
	return out, nil
}

func readFile(path string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(fh, 4096)
	var out []*apiextensionsv1.CustomResourceDefinition
	for i := 1; ; i++ {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(u.Object) == 0 {
			continue // an empty document between separators
		}
		if gvk := u.GroupVersionKind(); gvk != apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition") {
			return nil, fmt.Errorf("%s: document %d is %s %q, not an apiextensions.k8s.io/v1 CustomResourceDefinition", path, i, gvk, u.GetName())
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, crd, true); err != nil {
			return nil, fmt.Errorf("%s: document %d (%s): %w", path, i, u.GetName(), err)
		}
		out = append(out, crd)
	}
}
