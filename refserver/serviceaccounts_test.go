package refserver

import (
	"fmt"
	"testing"
)

// TestServiceAccountsAsKubeAPIServer holds what kube-apiserver v1.36.3
// answered for service accounts (observed with curl): a secret reference
// keeps its name alone, after the writer's entry has recorded the element,
// and a DELETE answers the object, not a Status.
func TestServiceAccountsAsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	const path = "/api/v1/namespaces/default/serviceaccounts"
	r := c.do("POST", path+"?fieldManager=m1", `{"metadata":{"name":"sa1"},"secrets":[{"name":"s1","namespace":"x","kind":"Secret"}],"imagePullSecrets":[{"name":"p1"}],"automountServiceAccountToken":false}`)
	if got := fmt.Sprint(r.get("secrets")); r.Code != 201 || got != "[map[name:s1]]" {
		t.Fatalf("create: %d %s", r.Code, r.Body)
	}
	if got := fmt.Sprint(r.get("metadata.managedFields.0.fieldsV1")); got != `map[f:automountServiceAccountToken:map[] f:imagePullSecrets:map[] f:secrets:map[.:map[] k:{"name":"s1"}:map[]]]` {
		t.Errorf("the creator's entry: %s", got)
	}
	if r := c.do("PUT", path+"/sa1", `{"metadata":{"name":"sa1"},"secrets":[{"name":"s2","uid":"u"}]}`); r.Code != 200 || fmt.Sprint(r.get("secrets")) != "[map[name:s2]]" {
		t.Errorf("update: %d %s", r.Code, r.Body)
	}
	if r := c.do("PUT", path+"/sa9", `{"metadata":{"name":"sa9"}}`); r.Code != 404 {
		t.Errorf("PUT of a missing service account: %d %s", r.Code, r.Body)
	}
	if r := c.do("DELETE", path+"/sa1", nil); r.Code != 200 || r.str("kind") != "ServiceAccount" || r.str("metadata.name") != "sa1" {
		t.Errorf("delete: %d %s", r.Code, r.Body)
	}
}
