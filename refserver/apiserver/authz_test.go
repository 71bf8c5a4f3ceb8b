package apiserver

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apiconform/apiconform/refserver/auth"
)

// TestAuthorization: anonymous clients get kube-apiserver's 403 for paths
// outside the public ones; an open server allows everything; namespace
// rules hold, and a dry run is authorized exactly as the real request.
func TestAuthorization(t *testing.T) {
	rules, err := auth.ParseRules([]byte(`
rules:
- users: [alice]
  verbs: [get, list, create]
  resources: [configmaps]
  namespaces: [default]
`))
	if err != nil {
		t.Fatal(err)
	}
	const cm = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`
	tests := []struct {
		name         string
		tokens       auth.Tokens
		rules        *auth.Rules
		token        string
		method, path string
		want         int
		body         string // a substring of the response
	}{
		{"anonymous /api", testTokens, nil, "", "GET", "/api", 403,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"forbidden: User \"system:anonymous\" cannot get path \"/api\"","reason":"Forbidden","details":{},"code":403}`},
		{"anonymous /openapi/v2", testTokens, nil, "", "GET", "/openapi/v2", 403, `cannot get path \"/openapi/v2\"`},
		{"anonymous /apis", testTokens, nil, "", "GET", "/apis", 403, `cannot get path \"/apis\"`},
		{"anonymous /version", testTokens, nil, "", "GET", "/version", 200, `"gitVersion"`},
		{"anonymous /healthz", testTokens, nil, "", "GET", "/healthz", 200, "ok"},
		{"anonymous /livez", testTokens, nil, "", "GET", "/livez", 200, "ok"},
		{"anonymous resource", testTokens, nil, "", "GET", "/api/v1/namespaces", 403, `User \"system:anonymous\" cannot list resource \"namespaces\"`},
		{"authenticated /api", testTokens, nil, "user", "GET", "/api", 200, `"APIVersions"`},
		{"open server /api", nil, nil, "", "GET", "/api", 200, `"APIVersions"`},
		{"open server resource", nil, nil, "", "GET", "/api/v1/namespaces", 200, `"NamespaceList"`},
		{"open server admin hooks", nil, nil, "", "GET", "/apiconform/admin", 200, "compact"},
		{"admin hooks need system:masters", testTokens, nil, "user", "GET", "/apiconform/admin", 403, "may not use the admin endpoints"},
		{"namespace rule, its namespace", testTokens, rules, "user", "GET", "/api/v1/namespaces/default/configmaps", 200, `"ConfigMapList"`},
		{"namespace rule, other namespace", testTokens, rules, "user", "GET", "/api/v1/namespaces/kube-system/configmaps", 403,
			`configmaps is forbidden: User \"alice\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"kube-system\"`},
		{"namespace rule, all namespaces", testTokens, rules, "user", "GET", "/api/v1/configmaps", 403, `at the cluster scope`},
		{"dry run in another namespace", testTokens, rules, "user", "POST", "/api/v1/namespaces/kube-system/configmaps?dryRun=All", 403, `cannot create resource`},
		{"dry run in its namespace", testTokens, rules, "user", "POST", "/api/v1/namespaces/default/configmaps?dryRun=All", 404, `namespaces \"default\" not found`}, // past authorization
		{"discovery with rules", testTokens, rules, "user", "GET", "/apis", 200, `"APIGroupList"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, _ := testKinds(t)
			tokens := tt.tokens
			if tokens != nil {
				tokens = auth.Tokens{"user": {Name: "alice", Groups: []string{auth.Authenticated}}}
			}
			h := New(Config{Registry: reg, Tokens: tokens, Rules: tt.rules, AdminEndpoints: true, Logf: t.Logf})
			var body *strings.Reader
			if tt.method == "POST" {
				body = strings.NewReader(cm)
			} else {
				body = strings.NewReader("")
			}
			req := httptest.NewRequest(tt.method, tt.path, body)
			req.Header.Set("Content-Type", "application/json")
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want || !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("%s %s: %d %s\nwant %d with %s", tt.method, tt.path, rec.Code, rec.Body, tt.want, tt.body)
			}
		})
	}
}

// TestIsResourcePath: which paths name resources (authorized by verb and
// resource) and which are non-resource paths (discovery, health, admin).
func TestIsResourcePath(t *testing.T) {
	for p, want := range map[string]bool{
		"":                           false,
		"/":                          false,
		"/api":                       false,
		"/api/":                      false,
		"/api/v1":                    false,
		"/api/v1/pods":               true,
		"/api/v1/namespaces/d/pods/": true,
		"/apis":                      false,
		"/apis/apps/v1":              false,
		"/apis/apps/v1/deployments":  true,
		"/apisx/a/b/c":               false,
		"/healthz":                   false,
		"/apiconform/admin/x/y/z":    false,
		"/openapi/v3/api/v1":         false,
	} {
		if got := isResourcePath(p); got != want {
			t.Errorf("isResourcePath(%q) = %v, want %v", p, got, want)
		}
	}
}
