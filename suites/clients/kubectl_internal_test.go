package clients

import "testing"

// kubectl's own words for a server that did not answer (observed with
// kubectl v1.36.3: a closed port, a listener that never answers) against
// answers it did not like.
func TestKubectlNoAnswer(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   bool
	}{
		{"The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?", true},
		{"Unable to connect to the server: context deadline exceeded", true},
		{"Unable to connect to the server: tls: failed to verify certificate: x509: certificate signed by unknown authority", true},
		{`Error from server (NotFound): configmaps "x" not found`, false},
		{`error: the server doesn't have a resource type "pods"`, false},
		{"", false},
	} {
		if got := kubectlNoAnswer(tc.stderr); got != tc.want {
			t.Errorf("kubectlNoAnswer(%q) = %v, want %v", tc.stderr, got, tc.want)
		}
	}
}
