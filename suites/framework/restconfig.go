package framework

import (
	"fmt"
	"net/http"

	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RESTConfig returns a fresh client-go configuration for the target, for
// specs that drive client-go's own machinery (clientsets, informers,
// discovery). Content types are left to each client's defaults. Requests made
// through it are recorded with the spec's exchanges: method, URL, status and
// headers, never bodies (they may be protobuf or a watch stream). A target
// that cannot be resolved fails the spec.
func RESTConfig() *rest.Config {
	s := st()
	cfg, err := s.target.restConfig()
	gomega.ExpectWithOffset(1, err).NotTo(gomega.HaveOccurred())
	cfg.UserAgent = "apiconform-clients"
	// Specs send bursts of requests (one list per served resource); client-go's
	// default limiter (5 QPS) would make them slow, not more careful.
	cfg.QPS, cfg.Burst = 50, 100
	client := s.client
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return recordingTransport{next: rt, client: client} })
	return cfg
}

// recordingTransport records each client-go request and its answer's status
// and headers (not the bodies, which the client reads itself).
type recordingTransport struct {
	next   http.RoundTripper
	client *Client
}

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	t.client.observeClientGo(err)
	note := "client-go request; bodies not recorded"
	if err != nil {
		note = "transport error: " + err.Error()
	}
	t.client.record(exchange(req, nil, resp, nil, note))
	return resp, err
}

// WriteKubeconfig writes a kubeconfig for the target to path, for tools that
// take one (kubectl): server, CA and credentials as the framework resolved
// them, whichever way the target was given.
func WriteKubeconfig(path string) error {
	cfg, err := st().target.restConfig()
	if err != nil {
		return err
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["target"] = &clientcmdapi.Cluster{Server: cfg.Host + cfg.APIPath, CertificateAuthority: cfg.CAFile,
		CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure, TLSServerName: cfg.ServerName}
	kc.AuthInfos["target"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken, TokenFile: cfg.BearerTokenFile,
		ClientCertificate: cfg.CertFile, ClientCertificateData: cfg.CertData, ClientKey: cfg.KeyFile, ClientKeyData: cfg.KeyData,
		Username: cfg.Username, Password: cfg.Password, Exec: cfg.ExecProvider, AuthProvider: cfg.AuthProvider,
		Impersonate: cfg.Impersonate.UserName, ImpersonateUID: cfg.Impersonate.UID, ImpersonateGroups: cfg.Impersonate.Groups,
		ImpersonateUserExtra: cfg.Impersonate.Extra}
	kc.Contexts["target"] = &clientcmdapi.Context{Cluster: "target", AuthInfo: "target"}
	kc.CurrentContext = "target"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	return nil
}
