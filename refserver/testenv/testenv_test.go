package testenv_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiconform/apiconform/refserver/testenv"
)

const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.test}
spec:
  group: example.test
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, default: 1}
`

const gadgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.test"},
"spec":{"group":"example.test","scope":"Cluster","names":{"plural":"gadgets","singular":"gadget","kind":"Gadget","listKind":"GadgetList"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestReadCRDs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"crds/widget.yaml":    "---\n" + widgetCRD + "---\n",
		"crds/gadget.json":    gadgetCRD,
		"crds/README.md":      "not a manifest",
		"crds/nested/x.yaml":  "ignored: directories are not walked",
		"two.yaml":            widgetCRD + "---\n" + strings.Replace(widgetCRD, "widgets.example.test", "widgets.other.test", 1),
		"notcrd.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
		"bad.yaml":            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [1]\n",
		"unknownfield.yaml":   strings.Replace(widgetCRD, "scope: Namespaced", "scope: Namespaced\n  scopes: typo", 1),
		"crds/nested/y.notes": "",
	})
	tests := []struct {
		name    string
		paths   []string
		want    []string // CRD names in order
		wantErr string
	}{
		{name: "directory", paths: []string{"crds"}, want: []string{"gadgets.example.test", "widgets.example.test"}},
		{name: "multi-document file", paths: []string{"two.yaml"}, want: []string{"widgets.example.test", "widgets.other.test"}},
		{name: "file and directory", paths: []string{"two.yaml", "crds/gadget.json"}, want: []string{"widgets.example.test", "widgets.other.test", "gadgets.example.test"}},
		{name: "missing path", paths: []string{"nope"}, wantErr: "no such file"},
		{name: "not a CRD", paths: []string{"notcrd.yaml"}, wantErr: `document 1 is /v1, Kind=ConfigMap "x", not an apiextensions.k8s.io/v1 CustomResourceDefinition`},
		{name: "malformed CRD", paths: []string{"bad.yaml"}, wantErr: "bad.yaml: document 1"},
		{name: "unknown field", paths: []string{"unknownfield.yaml"}, wantErr: `unknown field "spec.scopes"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, filepath.Join(dir, p))
			}
			crds, err := testenv.ReadCRDs(paths...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range crds {
				got = append(got, c.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStart installs CRDs, uses them at once (no waiting in the test), reads
// the kubeconfig, and sees 410 Gone after Compact.
func TestStart(t *testing.T) {
	dir := writeFiles(t, map[string]string{"widget.yaml": widgetCRD, "gadget.json": gadgetCRD})
	env := testenv.Start(t, testenv.CRDs(dir))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if !strings.HasPrefix(env.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL %s: want HTTPS on 127.0.0.1", env.URL())
	}
	fromFile, err := clientcmd.BuildConfigFromFlags("", env.KubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(fromFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("client from the kubeconfig file: %v", err)
	}

	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	widgets := dc.Resource(schema.GroupVersionResource{Group: "example.test", Version: "v1", Resource: "widgets"}).Namespace("default")
	w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.test/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"}, "spec": map[string]any{}}}
	created, err := widgets.Create(ctx, w, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a Widget right after Start: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(created.Object, "spec", "size"); size != 1 {
		t.Fatalf("the CRD's default was not applied: %v", created.Object)
	}

	rv := created.GetResourceVersion()
	if _, err := widgets.Patch(ctx, "w1", "application/merge-patch+json", []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Compact(ctx); err != nil {
		t.Fatal(err)
	}
	wi, err := widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err == nil {
		ev := <-wi.ResultChan()
		wi.Stop()
		if ev.Type != watch.Error || !apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)) && !apierrors.IsGone(apierrors.FromObject(ev.Object)) {
			t.Fatalf("watch from a compacted resourceVersion: %v %v, want a 410", ev.Type, ev.Object)
		}
	} else if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("watch from a compacted resourceVersion: %v, want 410", err)
	}
}

func TestStopTwiceAndBadCRD(t *testing.T) {
	env, err := testenv.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	path := env.KubeconfigPath
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := env.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("kubeconfig %s still there after Stop: %v", path, err)
	}

	dir := writeFiles(t, map[string]string{"bad.yaml": strings.Replace(widgetCRD, "scope: Namespaced", "scope: Galactic", 1)})
	if _, err := testenv.New(context.Background(), testenv.CRDs(dir)); err == nil || !strings.Contains(err.Error(), "create CRD widgets.example.test") {
		t.Fatalf("New with an invalid CRD: err = %v", err)
	}
}

// BenchmarkStart is start-to-ready of an in-process server with one CRD
// Established and served (Stop is not timed).
func BenchmarkStart(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "widget.yaml"), []byte(widgetCRD), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		env, err := testenv.New(context.Background(), testenv.CRDs(dir))
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := env.Stop(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkStartOracle is the envtest-style alternative: etcd and
// kube-apiserver binaries started as processes (oracle/up.sh, with its own
// directory and ports) until /readyz answers. It needs the oracle binaries
// (make oracle) and APICONFORM_BENCH_ORACLE=1, and stops what it started.
func BenchmarkStartOracle(b *testing.B) {
	if os.Getenv("APICONFORM_BENCH_ORACLE") == "" {
		b.Skip("set APICONFORM_BENCH_ORACLE=1 (and build the oracle with make oracle) to time etcd + kube-apiserver startup")
	}
	up, down := filepath.Join("..", "..", "oracle", "up.sh"), filepath.Join("..", "..", "oracle", "down.sh")
	for i := 0; b.Loop(); i++ {
		env := append(os.Environ(), "ORACLE_DIR="+filepath.Join(b.TempDir(), "oracle"),
			"ORACLE_ETCD_PORT="+strconv.Itoa(24790+i%50), "ORACLE_API_PORT="+strconv.Itoa(7444+i%50))
		cmd := exec.Command("bash", up)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		stop := exec.Command("bash", down)
		stop.Env = env
		b.StopTimer()
		if derr := stop.Run(); derr != nil {
			b.Errorf("oracle/down.sh: %v", derr)
		}
		b.StartTimer()
		if err != nil {
			b.Fatalf("oracle/up.sh: %v\n%s", err, out)
		}
	}
}
