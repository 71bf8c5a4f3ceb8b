package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

const (
	crdOld     = "../../spec/compat/testdata/widgets-old.yaml"
	crdNew     = "../../spec/compat/testdata/widgets-new.yaml"
	swaggerOld = "../../spec/compat/testdata/swagger-old.json"
	swaggerNew = "../../spec/compat/testdata/swagger-new.json"
	lintCRD    = "../../spec/lint/testdata/conventions.yaml"
)

// runSpecCheck runs a fresh compat or lint command (flags do not leak between
// cases) and returns the exit code main would use and the output.
func runSpecCheck(t *testing.T, newCmd func() *cobra.Command, args ...string) (int, string) {
	t.Helper()
	cmd := newCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	if err == nil {
		return exitOK, out.String()
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, out.String() + ee.Error()
	}
	return exitUsage, out.String() + err.Error()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCompatExitCodes(t *testing.T) {
	exceptions := writeFile(t, "accepted.txt", `# accepted breaking changes of the widgets CRD
default-changed:example.com/v1beta1/Widget   # agreed in review
list-type-changed:example.com/*#/properties/spec/properties/ports
field-became-immutable
new-version-*
new-version-preferred
new-version-storage
`)
	badExceptions := writeFile(t, "bad.txt", ":nothing\n")
	cases := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"no change", []string{crdOld, crdOld}, exitOK, "0 findings"},
		{"breaking changes", []string{crdOld, crdNew}, exitFailed, "default-changed"},
		{"swagger breaking changes", []string{swaggerOld, swaggerNew}, exitFailed, "enum-value-added"},
		{"every finding accepted", []string{crdOld, crdNew, "--ignore", "*"}, exitOK, "accepted by exceptions"},
		{"exceptions file", []string{crdOld, crdNew, "--exceptions", exceptions}, exitOK, "5 accepted"},
		{"ignore one rule leaves others", []string{crdOld, crdNew, "--ignore", "default-changed"}, exitFailed, "list-type-changed"},
		{"fail-on info catches status finding", []string{crdOld, crdNew, "--ignore", "default-changed", "--ignore", "list-type-changed", "--ignore", "field-became-immutable", "--ignore", "new-version-preferred", "--ignore", "new-version-storage", "--fail-on", "info"}, exitFailed, "validation-tightened"},
		{"fail-on error ignores info", []string{crdOld, crdNew, "--ignore", "default-changed", "--ignore", "list-type-changed", "--ignore", "field-became-immutable", "--ignore", "new-version-preferred", "--ignore", "new-version-storage"}, exitOK, "2 info"},
		{"markdown", []string{crdOld, crdNew, "--format", "markdown"}, exitFailed, "| error | `default-changed` |"},
		{"missing file", []string{crdOld, "does-not-exist.yaml"}, exitUsage, "does-not-exist.yaml"},
		{"not an API document", []string{crdOld, exceptions}, exitUsage, "neither"},
		{"one argument", []string{crdOld}, exitUsage, "OLD and NEW"},
		{"bad format", []string{crdOld, crdNew, "--format", "pdf"}, exitUsage, "unknown format"},
		{"bad fail-on", []string{crdOld, crdNew, "--fail-on", "fatal"}, exitUsage, "unknown level"},
		{"bad exceptions file", []string{crdOld, crdNew, "--exceptions", badExceptions}, exitUsage, "RULE[:PATH]"},
		{"missing exceptions file", []string{crdOld, crdNew, "--exceptions", "nope.txt"}, exitUsage, "nope.txt"},
		{"unknown flag", []string{crdOld, crdNew, "--frobnicate"}, exitUsage, "unknown flag"},
		{"JSON array names no Go type", []string{writeFile(t, "list.json", `[{"swagger":"2.0"}]`), crdOld}, exitUsage, "a JSON array, not an API description"},
		{"dangling ref as written", []string{writeFile(t, "dangling.json", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{},"definitions":{"A":{"$ref":"#/definitions/Gone"}}}`), crdOld}, exitUsage, `$ref "#/definitions/Gone"`},
		{"empty document", []string{writeFile(t, "empty.json", `{"swagger":"2.0","info":{"title":"t","version":"1"},"paths":{}}`), crdOld}, exitUsage, "empty document"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runSpecCheck(t, newCompatCmd, c.args...)
			if code != c.want {
				t.Errorf("exit %d, want %d\n%s", code, c.want, out)
			}
			if !strings.Contains(out, c.out) {
				t.Errorf("output lacks %q:\n%s", c.out, out)
			}
		})
	}
}

func TestCompatJSONAndJUnit(t *testing.T) {
	code, out := runSpecCheck(t, newCompatCmd, swaggerOld, swaggerNew, "--format", "json")
	if code != exitFailed {
		t.Fatalf("exit %d", code)
	}
	var report struct {
		Findings []struct {
			Rule, Definition, Pointer, Level string
			Operations                       []string
		}
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &report); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	found := false
	for _, f := range report.Findings {
		if f.Rule == "enum-value-added" && f.Definition == "com.example.v1.FrobberSpec" && f.Pointer == "/properties/restartPolicy" && f.Level == "error" && len(f.Operations) == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("enum-value-added not in JSON report:\n%s", out)
	}
	_, out = runSpecCheck(t, newCompatCmd, swaggerOld, swaggerNew, "--format", "junit")
	var suites struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal([]byte(out[:strings.LastIndex(out, "</testsuites>")+len("</testsuites>")]), &suites); err != nil {
		t.Fatalf("junit: %v\n%s", err, out)
	}
	if suites.Failures != 7 { // seven error findings; the info finding passes
		t.Errorf("junit failures %d, want 7\n%s", suites.Failures, out)
	}
}

// fakeAPIServer serves a document at /openapi/v2 on 127.0.0.1, optionally requiring a bearer token.
func fakeAPIServer(t *testing.T, path, token string) *httptest.Server {
	t.Helper()
	return fakeAPIServerAt(t, "/openapi/v2", path, token)
}

// fakeAPIServerAt serves the file at path under urlPath, on 127.0.0.1 with TLS.
func fakeAPIServerAt(t *testing.T, urlPath, path, token string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		if r.URL.Path != urlPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestCompatLiveServers(t *testing.T) {
	oldSrv := fakeAPIServer(t, swaggerOld, "s3cret")
	newSrv := fakeAPIServer(t, swaggerNew, "s3cret")
	cases := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"breaking change between servers", []string{"--server", oldSrv.URL, "--server", newSrv.URL, "--token", "s3cret", "--insecure-skip-tls-verify"}, exitFailed, "patch-strategy-changed"},
		{"same server", []string{"--server", oldSrv.URL, "--server", oldSrv.URL, "--token", "s3cret", "--insecure-skip-tls-verify"}, exitOK, "0 findings"},
		{"wrong token", []string{"--server", oldSrv.URL, "--server", newSrv.URL, "--token", "wrong", "--insecure-skip-tls-verify"}, exitUsage, "HTTP 401"},
		{"untrusted certificate", []string{"--server", oldSrv.URL, "--server", newSrv.URL, "--token", "s3cret"}, exitUsage, "certificate"},
		{"one server", []string{"--server", oldSrv.URL}, exitUsage, "--server OLD --server NEW"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runSpecCheck(t, newCompatCmd, c.args...)
			if code != c.want || !strings.Contains(out, c.out) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, c.want, c.out, out)
			}
		})
	}
}

// TestCompatLiveCRD: the upgrade check of a manifest against the CRD a server has,
// whose status.storedVersions still lists a version the manifest drops.
func TestCompatLiveCRD(t *testing.T) {
	const live = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},
	  "spec":{"group":"example.com","names":{"kind":"Widget","plural":"widgets"},"scope":"Namespaced","conversion":{"strategy":"Webhook"},
	    "versions":[{"name":"v1alpha1","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}},
	                {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]},
	  "status":{"storedVersions":["v1alpha1","v1"]}}`
	srv := fakeAPIServerAt(t, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", writeFile(t, "live.json", live), "s3cret")
	manifest := writeFile(t, "widgets.yaml", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}
`)
	tls := []string{"--server", srv.URL, "--token", "s3cret", "--insecure-skip-tls-verify"}
	cases := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"stored version dropped", append([]string{"--crd", "widgets.example.com", manifest}, tls...), exitFailed, "crd-stored-version-dropped"},
		{"unknown CRD", append([]string{"--crd", "gadgets.example.com", manifest}, tls...), exitUsage, "HTTP 404"},
		{"no manifest", append([]string{"--crd", "widgets.example.com"}, tls...), exitUsage, "--crd NAME needs one --server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runSpecCheck(t, newCompatCmd, c.args...)
			if code != c.want || !strings.Contains(out, c.out) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, c.want, c.out, out)
			}
		})
	}
}

func TestLintExitCodes(t *testing.T) {
	srv := fakeAPIServer(t, swaggerNew, "")
	baseline := filepath.Join(t.TempDir(), "baseline.txt")
	if code, out := runSpecCheck(t, newLintCmd, lintCRD, "--format", "exceptions", "--output", baseline); code != exitFailed {
		t.Fatalf("writing baseline: exit %d\n%s", code, out)
	}
	cases := []struct {
		name string
		args []string
		want int
		out  string
	}{
		{"violations", []string{lintCRD}, exitFailed, "field-name-camelcase"},
		{"baseline accepts today's findings", []string{lintCRD, "--exceptions", baseline, "--fail-on", "info"}, exitOK, "accepted by exceptions"},
		{"ignore by rule and path", []string{lintCRD, "--ignore", "*:example.com/v1/Gizmo"}, exitOK, "0 findings"},
		{"fail-on warning", []string{lintCRD, "--ignore", "*:*#/properties/spec/*", "--ignore", "condition-type-status", "--fail-on", "warning"}, exitFailed, "spec-status-split"},
		{"live server", []string{"--server", srv.URL, "--insecure-skip-tls-verify", "--format", "junit"}, exitOK, "<testsuites"},
		{"no input", []string{}, exitUsage, "one SPEC"},
		{"two inputs", []string{lintCRD, lintCRD}, exitUsage, "one SPEC"},
		{"unreadable", []string{"missing.json"}, exitUsage, "missing.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := runSpecCheck(t, newLintCmd, c.args...)
			if code != c.want || !strings.Contains(out, c.out) {
				t.Errorf("exit %d (want %d), output lacks %q?\n%s", code, c.want, c.out, out)
			}
		})
	}
}
