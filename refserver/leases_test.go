package refserver

import (
	"fmt"
	"strings"
	"testing"
)

// TestLeasesAsKubeAPIServer holds what kube-apiserver v1.36.3 answered for
// leases (observed with curl): validation, a PUT that must name the
// resourceVersion it replaces unless it creates, and the two fields of
// coordinated leader election dropped (off by default) after the writer's
// entry recorded them.
func TestLeasesAsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	const path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
	r := c.do("POST", path+"?fieldManager=m1", `{"metadata":{"name":"l1"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15,"strategy":"OldestEmulationVersion","preferredHolder":"b"}}`)
	if r.Code != 201 || r.get("spec.strategy") != nil || r.get("spec.preferredHolder") != nil {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	if fields := fmt.Sprint(r.get("metadata.managedFields.0.fieldsV1")); fields != "map[f:spec:map[f:holderIdentity:map[] f:leaseDurationSeconds:map[] f:preferredHolder:map[] f:strategy:map[]]]" {
		t.Errorf("the creator's entry: %s", fields)
	}
	for _, tc := range []struct{ method, path, body, msg string }{
		{"POST", path, `{"metadata":{"name":"l2"},"spec":{"leaseDurationSeconds":0,"leaseTransitions":-1}}`,
			`Lease.coordination.k8s.io "l2" is invalid: [spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0, spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0]`},
		{"PUT", path + "/l1", `{"metadata":{"name":"l1"},"spec":{"holderIdentity":"b"}}`,
			`leases.coordination.k8s.io "l1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`},
	} {
		if r := c.do(tc.method, tc.path, tc.body); r.Code != 422 || r.str("message") != tc.msg {
			t.Errorf("%s %s: %d %s, want 422 %s", tc.method, tc.path, r.Code, r.str("message"), tc.msg)
		}
	}
	if r := c.do("PUT", path+"/l4", `{"metadata":{"name":"l4"},"spec":{"holderIdentity":"c"}}`); r.Code != 201 {
		t.Errorf("PUT of a missing lease: %d %s", r.Code, r.Body)
	}
	// A lease without a spec reads with an empty one, and no entry (its
	// writer set nothing), as kube-apiserver answers.
	if r := c.do("POST", path, `{"metadata":{"name":"nospec"}}`); r.Code != 201 || !strings.Contains(string(r.Body), `"spec":{}`) || r.get("metadata.managedFields") != nil {
		t.Errorf("a lease without spec: %d %s", r.Code, r.Body)
	}
	if r := c.do("PATCH", path+"/l1?fieldManager=m3", `{"spec":{"holderIdentity":"z"}}`, "Content-Type", "application/merge-patch+json"); r.Code != 200 || r.str("spec.holderIdentity") != "z" {
		t.Errorf("a patch needs no resourceVersion: %d %s", r.Code, r.Body)
	}
	if r := c.do("GET", path+"?fieldSelector=spec.holderIdentity=z", nil); r.Code != 400 ||
		r.str("message") != `"spec.holderIdentity" is not a known field selector: only "metadata.name", "metadata.namespace"` {
		t.Errorf("a field label leases lack: %d %s", r.Code, r.Body)
	}
}
