package refserver

import (
	"fmt"
	"strings"
	"testing"
)

// TestRBACAsKubeAPIServer holds what kube-apiserver v1.36.3 answered for the
// RBAC kinds (observed with curl): their validation in its words, the
// defaults of a binding's roleRef and subjects, a roleRef no update may
// change, a role's empty rules written as null, and the tables kubectl shows.
func TestRBACAsKubeAPIServer(t *testing.T) {
	_, c := startTest(t)
	const rbac = "/apis/rbac.authorization.k8s.io/v1"
	const sa = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`
	for _, tc := range []struct{ method, path, body, msg string }{
		{"POST", rbac + "/namespaces/default/roles", `{"metadata":{"name":"r2"},"rules":[{"verbs":[]},{"nonResourceURLs":["/healthz"],"verbs":["get"],"resources":["x"]}]}`,
			`Role.rbac.authorization.k8s.io "r2" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, ` +
				`rules[0].apiGroups: Required value: resource rules must supply at least one api group, rules[0].resources: Required value: resource rules must supply at least one resource, ` +
				`rules[1].nonResourceURLs: Invalid value: ["/healthz"]: namespaced rules cannot apply to non-resource URLs, ` +
				`rules[1].nonResourceURLs: Invalid value: ["/healthz"]: rules cannot apply to both regular resources and non-resource URLs]`},
		{"POST", rbac + "/clusterroles", `{"metadata":{"name":"cr3"},"aggregationRule":{"clusterRoleSelectors":[{"matchExpressions":[{"key":"a","operator":"Bogus"}]}]}}`,
			`ClusterRole.rbac.authorization.k8s.io "cr3" is invalid: [aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator, ` +
				`aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.]`},
		{"POST", rbac + "/namespaces/default/rolebindings", `{"metadata":{"name":"rb2"},"roleRef":{"apiGroup":"x","kind":"Pod","name":""},"subjects":[{"kind":"ServiceAccount","name":"Bad_SA","apiGroup":"y"},{"kind":"User","name":"u","apiGroup":"z"},{"kind":"Robot","name":""}]}`,
			`RoleBinding.rbac.authorization.k8s.io "rb2" is invalid: [roleRef.apiGroup: Unsupported value: "x": supported values: "rbac.authorization.k8s.io", ` +
				`roleRef.kind: Unsupported value: "Pod": supported values: "Role", "ClusterRole", roleRef.name: Required value, subjects[0].name: Invalid value: "Bad_SA": ` + sa +
				`, subjects[0].apiGroup: Unsupported value: "y": supported values: "", subjects[1].apiGroup: Unsupported value: "z": supported values: "rbac.authorization.k8s.io", ` +
				`subjects[2].name: Required value, subjects[2].kind: Unsupported value: "Robot": supported values: "ServiceAccount", "User", "Group"]`},
		{"POST", rbac + "/clusterrolebindings", `{"metadata":{"name":"crb1"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"ServiceAccount","name":"sa"}]}`,
			`ClusterRoleBinding.rbac.authorization.k8s.io "crb1" is invalid: [roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: Required value]`},
	} {
		if r := c.do(tc.method, tc.path, tc.body); r.Code != 422 || r.str("message") != tc.msg {
			t.Errorf("%s %s: %d %s\nwant 422 %s", tc.method, tc.path, r.Code, r.str("message"), tc.msg)
		}
	}

	r := c.do("POST", rbac+"/namespaces/default/rolebindings", `{"metadata":{"name":"rb1"},"roleRef":{"kind":"Role","name":"r1"},"subjects":[{"kind":"User","name":"alice"},{"kind":"ServiceAccount","name":"sa1","namespace":"default"},{"kind":"Group","name":"devs"}]}`)
	if got := fmt.Sprint(r.get("roleRef"), r.get("subjects")); r.Code != 201 ||
		got != "map[apiGroup:rbac.authorization.k8s.io kind:Role name:r1] [map[apiGroup:rbac.authorization.k8s.io kind:User name:alice] map[kind:ServiceAccount name:sa1 namespace:default] map[apiGroup:rbac.authorization.k8s.io kind:Group name:devs]]" {
		t.Errorf("binding's defaults: %d %s", r.Code, got)
	}
	if r := c.do("PUT", rbac+"/namespaces/default/rolebindings/rb1", `{"metadata":{"name":"rb1"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"view"}}`); r.Code != 422 ||
		r.str("message") != `RoleBinding.rbac.authorization.k8s.io "rb1" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"view"}: cannot change roleRef` {
		t.Errorf("roleRef changed: %d %s", r.Code, r.str("message"))
	}
	for _, body := range []string{`{"metadata":{"name":"empty"},"rules":[]}`, `{"metadata":{"name":"none"}}`} {
		if r := c.do("POST", rbac+"/namespaces/default/roles", body); r.Code != 201 || !strings.Contains(string(r.Body), `"rules":null`) {
			t.Errorf("role %s: %d %s", body, r.Code, r.Body)
		}
	}
	if r := c.do("PUT", rbac+"/clusterroles/put", `{"metadata":{"name":"put"}}`); r.Code != 201 {
		t.Errorf("PUT of a missing cluster role: %d %s", r.Code, r.Body)
	}

	// (A CRD's table has the same Created At column, described alike.)
	for path, want := range map[string]string{
		rbac + "/namespaces/default/roles/none":                   "Name/0 Created At/0/date",
		rbac + "/namespaces/default/rolebindings/rb1":             "Name/0 Role/0 Age/0 Users/1 Groups/1 ServiceAccounts/1",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions": "Name/0 Created At/0/date",
	} {
		r := c.do("GET", path, nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		var cols []string
		for _, cd := range r.get("columnDefinitions").([]any) {
			m := cd.(map[string]any)
			col := fmt.Sprintf("%s/%v", m["name"], m["priority"])
			if m["name"] == "Created At" {
				col += "/" + m["type"].(string)
				if d, _ := m["description"].(string); !strings.HasPrefix(d, "CreationTimestamp is a timestamp") {
					t.Errorf("%s: Created At described as %q", path, d)
				}
			}
			cols = append(cols, col)
		}
		if got := strings.Join(cols, " "); got != want {
			t.Errorf("%s: columns %s, want %s", path, got, want)
		}
	}
	r = c.do("GET", rbac+"/namespaces/default/rolebindings/rb1", nil, "Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	if d, _ := r.get("columnDefinitions.1.description").(string); !strings.HasPrefix(d, "RoleRef can reference a Role in the current namespace") {
		t.Errorf("Role column's description: %s", d)
	}
	if cells := r.get("rows.0.cells").([]any); fmt.Sprintf("%v %v", cells[1], cells[3:]) != "Role/r1 [alice devs default/sa1]" {
		t.Errorf("binding's cells: %v", cells)
	}
}
