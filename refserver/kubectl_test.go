package refserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubectlPath finds a kubectl: $KUBECTL, then kubectl on PATH.
func kubectlPath() string {
	if p := os.Getenv("KUBECTL"); p != "" {
		return p
	}
	if p, err := exec.LookPath("kubectl"); err == nil {
		return p
	}
	return ""
}

// TestKubectl drives a real kubectl against the server over HTTPS with a token.
func TestKubectl(t *testing.T) {
	kubectl := kubectlPath()
	if kubectl == "" {
		t.Skip("no kubectl: set KUBECTL or put kubectl on PATH")
	}
	s, _ := startTest(t, func(c *Config) { c.Addr = "127.0.0.1:0"; c.InsecureAddr = "" })
	if !strings.HasPrefix(s.URL(), "https://") {
		t.Fatalf("want HTTPS, got %s", s.URL())
	}
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, s.Kubeconfig(), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, "cm.yaml")
	// kubectl edit runs $KUBE_EDITOR on a temporary file; this one rewrites a value.
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/^  k: two$/  k: edited/' \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	run := func(want string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig", kc}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+dir, "KUBECACHEDIR="+filepath.Join(dir, "cache"), "KUBE_EDITOR="+editor)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %v: %v\n%s", args, err, out)
		}
		if !strings.Contains(string(out), want) {
			t.Fatalf("kubectl %v: want %q in\n%s", args, want, out)
		}
		return string(out)
	}
	run("namespace/demo created", "create", "namespace", "demo")
	run("configmap/c1 created", "-n", "demo", "create", "configmap", "c1", "--from-literal=a=b")
	run("c1", "-n", "demo", "get", "configmaps")
	write := func(v string) {
		if err := os.WriteFile(manifest, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c2\n  namespace: demo\n  labels: {app: web}\ndata:\n  k: "+v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	run("configmap/c2 created", "apply", "-f", manifest)
	write("two")
	run("configmap/c2 configured", "apply", "-f", manifest)
	run("two", "-n", "demo", "get", "configmap", "c2", "-o", "jsonpath={.data.k}")
	run("c2", "-n", "demo", "get", "cm", "-l", "app=web")
	run("configmap/c2 edited", "-n", "demo", "edit", "configmap", "c2")
	run("edited", "-n", "demo", "get", "configmap", "c2", "-o", "jsonpath={.data.k}")
	run("configmap/c2 patched", "-n", "demo", "patch", "configmap", "c2", "--type=merge", "-p", `{"data":{"z":"1"}}`)
	run("configmap/c2 patched", "-n", "demo", "patch", "configmap", "c2", "-p", `{"data":{"s":"1"}}`)
	run(`configmap "c1" deleted`, "-n", "demo", "delete", "configmap", "c1")
	run("configmaps", "api-resources")
	run(`namespace "demo" deleted`, "delete", "namespace", "demo", "--wait=true", "--timeout=30s")
}
