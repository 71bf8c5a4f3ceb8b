package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	fw "github.com/apiconform/apiconform/suites/framework"
)

// kubectlTimeout bounds one kubectl command.
const kubectlTimeout = 30 * time.Second

// kubectl runs a real kubectl against the target. The allowance: these specs
// need a kubectl binary ($KUBECTL, else kubectl on PATH) and are skipped,
// saying so, when there is none; everything else about them can fail.
type kubectl struct {
	bin, kubeconfig, cacheDir string
}

func newKubectl() *kubectl {
	bin := os.Getenv("KUBECTL")
	if bin == "" {
		p, err := exec.LookPath("kubectl")
		if err != nil {
			Skip("no kubectl: set KUBECTL or put kubectl on PATH (the kubectl specs run a real kubectl)")
		}
		bin = p
	}
	dir, err := os.MkdirTemp("", "apiconform-kubectl-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	k := &kubectl{bin: bin, kubeconfig: filepath.Join(dir, "kubeconfig"), cacheDir: filepath.Join(dir, "cache")}
	if strings.HasPrefix(fw.ServerURL(), "http://") {
		writeFrontKubeconfig(k.kubeconfig)
	} else {
		Expect(fw.WriteKubeconfig(k.kubeconfig)).To(Succeed())
	}
	return k
}

// writeFrontKubeconfig serves the target through a TLS reverse proxy on
// 127.0.0.1 for the spec and writes a kubeconfig for it. kubectl (client-go's
// clientcmd) sends credentials only over TLS, so a plain-HTTP target with a
// token (the embedded reference server) is reached this way: the proxy adds
// the framework's credentials and passes everything else through unchanged,
// streaming watches as they come.
func writeFrontKubeconfig(path string) {
	cfg := fw.RESTConfig()
	rt, err := rest.TransportFor(cfg)
	Expect(err).NotTo(HaveOccurred())
	target, err := url.Parse(fw.ServerURL())
	Expect(err).NotTo(HaveOccurred())
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Header.Del("Authorization") // the placeholder below; the transport adds the real credentials
		},
		Transport:     rt,
		FlushInterval: -1,
	}
	srv := httptest.NewUnstartedServer(proxy)
	srv.StartTLS()
	DeferCleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	kc := clientcmdapi.NewConfig()
	kc.Clusters["target"] = &clientcmdapi.Cluster{Server: srv.URL, CertificateAuthorityData: ca}
	// A placeholder keeps kubectl from prompting for a password.
	kc.AuthInfos["target"] = &clientcmdapi.AuthInfo{Token: "apiconform-proxy"}
	kc.Contexts["target"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "target"}
	kc.CurrentContext = "target"
	Expect(clientcmd.WriteToFile(*kc, path)).To(Succeed())
	fw.Record("kubectl", "the target is plain HTTP: kubectl reaches it through a TLS proxy at %s that adds the credentials", srv.URL)
}

func (k *kubectl) cmd(ctx context.Context, args ...string) *exec.Cmd {
	args = append([]string{"--kubeconfig", k.kubeconfig, "--cache-dir", k.cacheDir}, args...)
	c := exec.CommandContext(ctx, k.bin, args...)
	c.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig)
	return c
}

// run runs kubectl and returns stdout, stderr and the error (non-zero exit).
func (k *kubectl) run(stdin string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
	defer cancel()
	c := k.cmd(ctx, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	err := c.Run()
	AddReportEntry("kubectl", fmt.Sprintf("kubectl %s\nexit: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, out.String(), errb.String()),
		ReportEntryVisibilityFailureOrVerbose)
	if err != nil && (ctx.Err() != nil || kubectlNoAnswer(errb.String())) {
		fw.NoAnswer(fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String())))
	}
	return out.String(), errb.String(), err
}

// kubectlNoAnswer reports whether kubectl's error output says the server
// did not answer (kubectl's own wording for a refused, reset, timed-out or
// failed TLS connection), as opposed to an answer it did not like.
func kubectlNoAnswer(stderr string) bool {
	return strings.Contains(stderr, "Unable to connect to the server") ||
		(strings.Contains(stderr, "The connection to the server") && strings.Contains(stderr, "was refused"))
}

// mustRun runs kubectl and fails the spec on a non-zero exit.
func (k *kubectl) mustRun(stdin string, args ...string) string {
	out, errOut, err := k.run(stdin, args...)
	ExpectWithOffset(1, err).NotTo(HaveOccurred(), "kubectl %s: %s", strings.Join(args, " "), errOut)
	return out
}

var _ = Describe("kubectl", fw.Area(area), func() {
	f := fw.New(area)

	It("explains a built-in kind and a CRD from the OpenAPI v3 documents", fw.Req("CLIENT-KUBECTL-EXPLAIN"), func() {
		k := newKubectl()
		out := k.mustRun("", "explain", "configmaps.data")
		Expect(out).To(And(MatchRegexp(`KIND:\s+ConfigMap`), MatchRegexp(`VERSION:\s+v1`), ContainSubstring("FIELD: data <map[string]string>")))

		crd := f.CreateCRD(fw.CRDOptions{Kind: "Sprocket"})
		// A CRD's schema reaches /openapi/v3 shortly after it is Established.
		var last string
		ok := fw.PollUntil(convergeBudget, 500*time.Millisecond, func() bool {
			o, e, err := k.run("", "explain", crd.Plural+".spec", "--api-version", crd.APIVersion("v1"))
			last = o + e
			return err == nil && strings.Contains(o, "replicas") && strings.Contains(o, "color")
		})
		Expect(ok).To(BeTrue(), "kubectl explain %s.spec never described replicas and color: %s", crd.Plural, last)
		Expect(last).To(MatchRegexp(`KIND:\s+Sprocket`))
	})

	It("applies a CRD manifest and custom objects with its default (strict) validation", fw.Req("CLIENT-KUBECTL-APPLY-CRD"), func() {
		fw.RequireCRDs()
		k := newKubectl()
		group := strings.TrimPrefix(f.Name("kc"), "kc-") + ".apiconform.test"
		name := "doodads." + group
		manifest := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s
spec:
  group: %s
  scope: Namespaced
  names: {plural: doodads, singular: doodad, kind: Doodad, listKind: DoodadList}
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
              size: {type: integer}
`, name, group)
		DeferCleanup(func() { f.Delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"+name, nil) })
		out := k.mustRun(manifest, "apply", "-f", "-")
		Expect(out).To(ContainSubstring(name + " created"))
		k.mustRun("", "wait", "--for=condition=Established", "crd/"+name, "--timeout=20s")

		obj := func(name, spec string) string {
			return fmt.Sprintf("apiVersion: %s/v1\nkind: Doodad\nmetadata:\n  name: %s\n  namespace: %s\nspec: %s\n", group, name, f.Namespace, spec)
		}
		// The new resource is served shortly after Established; kubectl's
		// discovery may need a moment to see it.
		var last string
		ok := fw.PollUntil(convergeBudget, 500*time.Millisecond, func() bool {
			o, e, err := k.run(obj("good", "{size: 3}"), "apply", "-f", "-")
			last = o + e
			return err == nil
		})
		Expect(ok).To(BeTrue(), "kubectl apply of a valid Doodad: %s", last)
		Expect(last).To(ContainSubstring("doodad." + group + "/good created"))

		_, errOut, err := k.run(obj("bad", "{size: 3, bogus: true}"), "apply", "-f", "-")
		Expect(err).To(HaveOccurred(), "an unknown field under strict validation is rejected")
		Expect(errOut).To(ContainSubstring(`unknown field "spec.bogus"`))
		r := f.Get(fmt.Sprintf("/apis/%s/v1/namespaces/%s/doodads/bad", group, f.Namespace))
		Expect(r.Code).To(Equal(http.StatusNotFound), "the rejected object was not created: %s", r)
		fw.Record("rejected", "%s", strings.TrimSpace(errOut))
	})

	It("answers auth can-i for the target's identity", fw.Req("CLIENT-KUBECTL-AUTH-CAN-I"), func() {
		k := newKubectl()
		out := k.mustRun("", "auth", "can-i", "create", "configmaps", "-n", f.Namespace)
		Expect(strings.TrimSpace(out)).To(Equal("yes"))
	})

	// Two configmaps, an event about each: describe and events --for select
	// the events by the involved object's name, namespace, kind and uid, so
	// the other configmap's event must not show, and a server without events
	// or their field selectors fails the commands.
	It("describes an object with the events about it", fw.Req("CLIENT-KUBECTL-DESCRIBE"), func() {
		k := newKubectl()
		reasons, names := map[string]string{}, map[string]string{}
		for _, which := range []string{"a", "b"} {
			name := f.Name(which)
			names[which] = name
			r := f.Post(f.ConfigMapsPath(), fw.ConfigMap(name, map[string]string{"k": which}))
			Expect(r.Code).To(Equal(http.StatusCreated), "%s", r)
			reasons[which] = "Checked" + strings.ToUpper(which)
			now := time.Now().UTC().Format(time.RFC3339)
			ev := f.Post("/api/v1/namespaces/"+f.Namespace+"/events", map[string]any{
				"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name + ".e"},
				"involvedObject": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "namespace": f.Namespace, "name": name, "uid": r.Str("metadata.uid")},
				"reason":         reasons[which], "message": "apiconform saw " + name, "type": "Normal",
				"source": map[string]any{"component": "apiconform"}, "firstTimestamp": now, "lastTimestamp": now, "count": 1,
			})
			Expect(ev.Code).To(Equal(http.StatusCreated), "event about %s: %s", name, ev)
		}
		a := names["a"]
		out := k.mustRun("", "describe", "configmap", a, "-n", f.Namespace)
		Expect(out).To(MatchRegexp(`(?m)^Name:\s+`+a+`$`), "%s", out)
		_, events, found := strings.Cut(out, "\nEvents:")
		Expect(found).To(BeTrue(), "no Events section: %s", out)
		Expect(events).To(ContainSubstring(reasons["a"]), "the event about the object: %s", out)
		Expect(events).To(ContainSubstring("apiconform saw "+a), "%s", out)
		Expect(events).NotTo(ContainSubstring(reasons["b"]), "another object's event: %s", out)
		fw.Record("describe", "%s", strings.TrimSpace(events))

		out = k.mustRun("", "events", "-n", f.Namespace, "--for", "configmap/"+a)
		Expect(out).To(ContainSubstring(reasons["a"]), "%s", out)
		Expect(out).NotTo(ContainSubstring(reasons["b"]), "another object's event: %s", out)
	})

	It("prints the existing objects and then each change with get -w", fw.Req("CLIENT-KUBECTL-GET-WATCH"), func() {
		k := newKubectl()
		a := f.CreateObj(f.Name("a"), "v1", nil)
		ctx, cancel := context.WithTimeout(context.Background(), kubectlTimeout)
		DeferCleanup(cancel)
		c := k.cmd(ctx, "get", "configmaps", "-n", f.Namespace, "-w", "--output-watch-events", "--no-headers", "--request-timeout=0")
		stdout, err := c.StdoutPipe()
		Expect(err).NotTo(HaveOccurred())
		stderr := &lockedBuffer{}
		c.Stderr = stderr
		Expect(c.Start()).To(Succeed())
		DeferCleanup(func() { cancel(); _ = c.Wait() })

		lines := make(chan string, 100)
		go func() {
			s := bufio.NewScanner(stdout)
			for s.Scan() {
				lines <- strings.Join(strings.Fields(s.Text()), " ")
			}
			close(lines)
		}()
		next := func(what string) string {
			select {
			case l, ok := <-lines:
				ExpectWithOffset(1, ok).To(BeTrue(), "kubectl get -w ended before %s; stderr: %s", what, stderr.String())
				return l
			case <-time.After(convergeBudget):
				Fail(fmt.Sprintf("kubectl get -w printed nothing for %s within %s; stderr: %s", what, convergeBudget, stderr.String()))
				return ""
			}
		}
		Expect(next("the existing object")).To(HavePrefix("ADDED "+a.Name+" "), "first line")
		b := f.CreateObj(f.Name("b"), "v1", nil)
		Expect(next("a create")).To(HavePrefix("ADDED " + b.Name + " "))
		f.SetObj(b.Name, "v2")
		Expect(next("an update")).To(HavePrefix("MODIFIED " + b.Name + " "))
		f.DeleteObj(a.Name)
		Expect(next("a delete")).To(HavePrefix("DELETED " + a.Name + " "))
	})
})

// lockedBuffer collects a process's output while the spec may read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
