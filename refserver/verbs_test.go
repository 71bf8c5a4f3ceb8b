package refserver

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apiconform/apiconform/refserver/auth"
)

func TestConfigMapVerbs(t *testing.T) {
	_, c := startTest(t)
	c.ns("v")
	base := "/api/v1/namespaces/v/configmaps"
	created := c.do("POST", base, cm("a", map[string]string{"k": "1"}, map[string]string{"app": "x"}))
	c.mustCode(created, 201)
	if created.str("metadata.uid") == "" || created.str("metadata.creationTimestamp") == "" || created.get("metadata.generation") != nil {
		t.Fatalf("metadata: %s", created.Body)
	}
	rv := created.str("metadata.resourceVersion")
	got := c.do("GET", base+"/a", nil)
	c.mustCode(got, 200)
	if got.str("metadata.resourceVersion") != rv || got.str("data.k") != "1" {
		t.Fatalf("get: %s", got.Body)
	}
	// PUT with the current resourceVersion succeeds and bumps it.
	obj := got.JSON
	obj["data"] = map[string]any{"k": "2"}
	put := c.do("PUT", base+"/a", obj)
	c.mustCode(put, 200)
	if put.str("metadata.resourceVersion") == rv {
		t.Fatal("update kept the resourceVersion")
	}
	// The stale resourceVersion now conflicts, with kube-apiserver's message.
	obj["data"] = map[string]any{"k": "3"}
	stale := c.do("PUT", base+"/a", obj)
	c.mustCode(stale, 409)
	if stale.str("reason") != "Conflict" || stale.str("message") != `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again` {
		t.Fatalf("conflict: %s", stale.Body)
	}
	// Patches of every supported type.
	for _, p := range []struct{ ct, body, key string }{
		{"application/merge-patch+json", `{"data":{"m":"1"}}`, "m"},
		{"application/json-patch+json", `[{"op":"add","path":"/data/j","value":"1"}]`, "j"},
		{"application/strategic-merge-patch+json", `{"data":{"s":"1"}}`, "s"},
	} {
		r := c.do("PATCH", base+"/a", p.body, "Content-Type", p.ct)
		c.mustCode(r, 200)
		if r.str("data."+p.key) != "1" || r.str("data.k") != "2" {
			t.Fatalf("%s: %s", p.ct, r.Body)
		}
	}
	c.mustCode(c.do("PATCH", base+"/a", `{}`, "Content-Type", "text/plain"), 415)
	// List and label selectors.
	c.mustCode(c.do("POST", base, cm("b", nil, map[string]string{"app": "y"})), 201)
	l := c.do("GET", base+"?labelSelector=app%3Dy", nil)
	c.mustCode(l, 200)
	if items := l.get("items").([]any); len(items) != 1 || l.str("items.0.metadata.name") != "b" {
		t.Fatalf("selector: %s", l.Body)
	}
	if l.str("kind") != "ConfigMapList" || l.str("metadata.resourceVersion") == "" {
		t.Fatalf("list: %s", l.Body)
	}
	fs := c.do("GET", base+"?fieldSelector=metadata.name%3Da", nil)
	if items := fs.get("items").([]any); len(items) != 1 {
		t.Fatalf("field selector: %s", fs.Body)
	}
	c.mustCode(c.do("GET", base+"?fieldSelector=spec.x%3Da", nil), 400)
	// Delete answers a Success Status for configmaps.
	del := c.do("DELETE", base+"/a", nil)
	c.mustCode(del, 200)
	if del.str("kind") != "Status" || del.str("status") != "Success" || del.str("details.name") != "a" || del.str("details.kind") != "configmaps" {
		t.Fatalf("delete: %s", del.Body)
	}
	c.mustCode(c.do("GET", base+"/a", nil), 404)
	// deletecollection with a selector returns what it deleted.
	c.mustCode(c.do("POST", base, cm("c", nil, map[string]string{"app": "y"})), 201)
	dc := c.do("DELETE", base+"?labelSelector=app%3Dy", nil)
	c.mustCode(dc, 200)
	if items := dc.get("items").([]any); len(items) != 2 {
		t.Fatalf("deletecollection: %s", dc.Body)
	}
}

func TestErrorReasons(t *testing.T) {
	_, c := startTest(t)
	c.ns("e")
	base := "/api/v1/namespaces/e/configmaps"
	c.mustCode(c.do("POST", base, cm("exists", nil, nil)), 201)
	big := strings.Repeat("x", 3<<20+10)
	cases := []struct {
		name, method, path string
		body               any
		hdr                []string
		code               int
		reason, msg        string
	}{
		{"malformed json", "POST", base, `{bad`, nil, 400, "BadRequest", "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({bad)"},
		{"wrong type", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"x":1}}`, nil, 400, "BadRequest", `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"kind mismatch", "POST", base, `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}`, nil, 400, "BadRequest", `Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion`},
		{"namespace mismatch", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"other"}}`, nil, 400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request"},
		{"invalid name", "POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"A_b"}}`, nil, 422, "Invalid", ""},
		{"already exists", "POST", base, cm("exists", nil, nil), nil, 409, "AlreadyExists", `configmaps "exists" already exists`},
		{"not found", "GET", base + "/nope", nil, nil, 404, "NotFound", `configmaps "nope" not found`},
		{"unknown resource", "GET", "/api/v1/widgets", nil, nil, 404, "NotFound", "the server could not find the requested resource"},
		{"method not allowed", "POST", base + "/exists", cm("exists", nil, nil), nil, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},
		{"not acceptable", "GET", base, nil, []string{"Accept", "text/html"}, 406, "NotAcceptable", ""},
		{"unsupported media", "POST", base, `{}`, []string{"Content-Type", "text/plain"}, 415, "UnsupportedMediaType", ""},
		{"too large", "POST", base, big, nil, 413, "RequestEntityTooLarge", ""},
		{"namespace missing", "POST", "/api/v1/namespaces/ghost/configmaps", cm("x", nil, nil), nil, 404, "NotFound", `namespaces "ghost" not found`},
		{"future rv", "GET", base + "/exists?resourceVersion=999999", nil, nil, 504, "Timeout", ""},
		{"bad propagation", "DELETE", base + "/exists", `{"propagationPolicy":"Bogus"}`, nil, 422, "Invalid", ""},
		{"bad dryRun", "POST", base + "?dryRun=x", cm("dr", nil, nil), nil, 422, "Invalid", ""},
		{"bad precondition", "DELETE", base + "/exists", `{"preconditions":{"uid":"x"}}`, nil, 409, "Conflict", ""},
		{"rv match without rv", "GET", base + "?resourceVersionMatch=Exact", nil, nil, 422, "Invalid", ""},
		{"malformed continue", "GET", base + "?continue=abc", nil, nil, 400, "BadRequest", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do(tc.method, tc.path, tc.body, tc.hdr...)
			if r.Code != tc.code || r.str("reason") != tc.reason || r.str("kind") != "Status" || r.str("status") != "Failure" {
				t.Fatalf("got %d: %s", r.Code, r.Body)
			}
			if tc.msg != "" && r.str("message") != tc.msg {
				t.Fatalf("message\n got %q\nwant %q", r.str("message"), tc.msg)
			}
			if int(r.get("code").(float64)) != tc.code {
				t.Fatalf("code field: %s", r.Body)
			}
		})
	}
	// A too-large resourceVersion carries Retry-After and the documented cause.
	r := c.do("GET", base+"/exists?resourceVersion=999999", nil)
	if r.Header.Get("Retry-After") != "1" || r.str("details.causes.0.reason") != "ResourceVersionTooLarge" {
		t.Fatalf("504: %v %s", r.Header, r.Body)
	}
	// Invalid names report the field.
	inv := c.do("POST", base, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"A_b"}}`)
	if inv.str("details.causes.0.field") != "metadata.name" {
		t.Fatalf("causes: %s", inv.Body)
	}
}

func TestGenerateNameAndNamespaceNames(t *testing.T) {
	_, c := startTest(t)
	c.ns("g")
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		r := c.do("POST", "/api/v1/namespaces/g/configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "gen-"}})
		c.mustCode(r, 201)
		name := r.str("metadata.name")
		if !strings.HasPrefix(name, "gen-") || len(name) != len("gen-")+5 || seen[name] {
			t.Fatalf("generated name %q", name)
		}
		seen[name] = true
	}
	// Namespaces use DNS labels: a dot is refused.
	c.mustCode(c.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "a.b"}}), 422)
}

func TestFinalizersAndPreconditions(t *testing.T) {
	_, c := startTest(t)
	c.ns("f")
	base := "/api/v1/namespaces/f/configmaps"
	body := cm("fin", nil, nil)
	body["metadata"].(map[string]any)["finalizers"] = []string{"example.com/hold"}
	c.mustCode(c.do("POST", base, body), 201)
	del := c.do("DELETE", base+"/fin", nil)
	c.mustCode(del, 200)
	ts := del.str("metadata.deletionTimestamp")
	if ts == "" || del.get("metadata.deletionGracePeriodSeconds") != float64(0) {
		t.Fatalf("delete with finalizers: %s", del.Body)
	}
	cur := c.do("GET", base+"/fin", nil)
	c.mustCode(cur, 200)
	// deletionTimestamp cannot be unset: like kube-apiserver, the server
	// answers 200 and keeps the stored value.
	obj := cur.JSON
	delete(obj["metadata"].(map[string]any), "deletionTimestamp")
	put := c.do("PUT", base+"/fin", obj)
	c.mustCode(put, 200)
	if got := put.str("metadata.deletionTimestamp"); got != ts {
		t.Fatalf("PUT without deletionTimestamp left %q, want %q kept", got, ts)
	}
	// Nor can a finalizer be added while the object is being deleted.
	c.mustCode(c.do("PATCH", base+"/fin", `{"metadata":{"finalizers":["example.com/hold","example.com/more"]}}`, "Content-Type", "application/merge-patch+json"), 422)
	// Removing the last finalizer removes the object.
	r := c.do("PATCH", base+"/fin", `{"metadata":{"finalizers":null}}`, "Content-Type", "application/merge-patch+json")
	c.mustCode(r, 200)
	c.mustCode(c.do("GET", base+"/fin", nil), 404)
	// Preconditions.
	cr := c.do("POST", base, cm("pre", nil, nil))
	c.mustCode(cr, 201)
	c.mustCode(c.do("DELETE", base+"/pre", `{"preconditions":{"resourceVersion":"1"}}`), 409)
	c.mustCode(c.do("DELETE", base+"/pre", fmt.Sprintf(`{"preconditions":{"uid":%q}}`, cr.str("metadata.uid"))), 200)
}

func TestNamespaceDeletionRemovesContents(t *testing.T) {
	s, c := startTest(t)
	c.ns("gone")
	c.mustCode(c.do("POST", "/api/v1/namespaces/gone/configmaps", cm("x", nil, nil)), 201)
	del := c.do("DELETE", "/api/v1/namespaces/gone", nil)
	c.mustCode(del, 200)
	if del.str("status.phase") != "Terminating" {
		t.Fatalf("delete namespace: %s", del.Body)
	}
	// The namespace controller runs in the background: poll with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for c.do("GET", "/api/v1/namespaces/gone", nil).Code != 404 {
		if time.Now().After(deadline) {
			t.Fatal("namespace not removed within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.mustCode(c.do("GET", "/api/v1/namespaces/gone", nil), 404)
	c.mustCode(c.do("GET", "/api/v1/namespaces/gone/configmaps/x", nil), 404)
	_ = s
}

func TestSecretsAndTablesAndYAML(t *testing.T) {
	_, c := startTest(t)
	c.ns("s")
	r := c.do("POST", "/api/v1/namespaces/s/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"stringData":{"a":"hi"}}`)
	c.mustCode(r, 201)
	if r.str("data.a") != "aGk=" || r.str("type") != "Opaque" || r.get("stringData") != nil {
		t.Fatalf("secret: %s", r.Body)
	}
	c.mustCode(c.do("POST", "/api/v1/namespaces/s/configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  a: b\n", "Content-Type", "application/yaml"), 201)
	y := c.do("GET", "/api/v1/namespaces/s/configmaps/cfg", nil, "Accept", "application/yaml")
	if y.Header.Get("Content-Type") != "application/yaml" || !strings.Contains(string(y.Body), "name: cfg") {
		t.Fatalf("yaml: %s", y.Body)
	}
	tbl := c.do("GET", "/api/v1/namespaces/s/configmaps", nil, "Accept", "application/json;as=Table;g=meta.k8s.io;v=v1")
	c.mustCode(tbl, 200)
	if tbl.str("kind") != "Table" || tbl.str("columnDefinitions.0.name") != "Name" || tbl.str("columnDefinitions.1.name") != "Data" ||
		tbl.str("rows.0.cells.0") != "cfg" || tbl.str("rows.0.object.kind") != "PartialObjectMetadata" {
		t.Fatalf("table: %s", tbl.Body)
	}
}

// TestObjectTables: a table of one object carries the object's
// resourceVersion, and in a watch only the first table carries the column
// definitions (null in the rest), as kube-apiserver's (observed with curl).
func TestObjectTables(t *testing.T) {
	_, c := startTest(t)
	const asTable = "application/json;as=Table;g=meta.k8s.io;v=v1"
	c.ns("tb")
	created := c.do("POST", "/api/v1/namespaces/tb/configmaps", cm("one", nil, nil))
	c.mustCode(created, 201)
	tbl := c.do("GET", "/api/v1/namespaces/tb/configmaps/one", nil, "Accept", asTable)
	c.mustCode(tbl, 200)
	if rv := created.str("metadata.resourceVersion"); tbl.str("metadata.resourceVersion") != rv {
		t.Errorf("table of one object: metadata %v, want resourceVersion %s", tbl.get("metadata"), rv)
	}
	next, stop := c.watch("/api/v1/namespaces/tb/configmaps?watch=1", "Accept", asTable)
	defer stop()
	first := next()
	if cols, _ := first["object"].(map[string]any)["columnDefinitions"].([]any); len(cols) == 0 || evRV(first) != created.str("metadata.resourceVersion") {
		t.Errorf("first table event: %v", first)
	}
	c.mustCode(c.do("POST", "/api/v1/namespaces/tb/configmaps", cm("two", nil, nil)), 201)
	second := next()
	if o := second["object"].(map[string]any); o["columnDefinitions"] != nil || evRV(second) == "" || len(o["rows"].([]any)) != 1 {
		t.Errorf("second table event: %v", second)
	}
}

// TestStorageVersionHashes: legacy discovery lists kube-apiserver v1.36.3's
// storageVersionHash for each stored resource (observed): events.k8s.io/v1
// events list core's, CRDs their v1beta1 storage's, subresources and the
// review resources none.
func TestStorageVersionHashes(t *testing.T) {
	_, c := startTest(t)
	for gv, want := range map[string]map[string]string{
		"/api/v1": {"configmaps": "qFsyl6wFWjQ=", "events": "r2yiGXH7wu8=", "namespaces": "Q3oi5N2YM8M=", "namespaces/status": "",
			"secrets": "S6u1pOWzb84=", "serviceaccounts": "pbx9ZvyFpBE="},
		"/apis/events.k8s.io/v1":             {"events": "r2yiGXH7wu8="},
		"/apis/coordination.k8s.io/v1":       {"leases": "gqkMMb/YqFM="},
		"/apis/rbac.authorization.k8s.io/v1": {"roles": "7FuwZcIIItM=", "clusterrolebindings": "48tpQ8gZHFc="},
		"/apis/apiextensions.k8s.io/v1":      {"customresourcedefinitions": "jfWCUB31mvA=", "customresourcedefinitions/status": ""},
		"/apis/authorization.k8s.io/v1":      {"selfsubjectaccessreviews": ""},
	} {
		r := c.do("GET", gv, nil)
		c.mustCode(r, 200)
		got := map[string]string{}
		for _, res := range r.get("resources").([]any) {
			m := res.(map[string]any)
			h, _ := m["storageVersionHash"].(string)
			got[m["name"].(string)] = h
		}
		for name, hash := range want {
			if got[name] != hash {
				t.Errorf("%s %s: storageVersionHash %q, want %q", gv, name, got[name], hash)
			}
		}
	}
}

func TestDiscoveryAndHealth(t *testing.T) {
	_, c := startTest(t)
	for _, p := range []string{"/livez", "/readyz", "/healthz"} {
		r := c.do("GET", p, nil)
		if r.Code != 200 || string(r.Body) != "ok" {
			t.Fatalf("%s: %d %s", p, r.Code, r.Body)
		}
	}
	if v := c.do("GET", "/version", nil); v.str("major") != "1" || v.str("gitVersion") == "" {
		t.Fatalf("version: %s", v.Body)
	}
	if a := c.do("GET", "/api", nil); a.str("kind") != "APIVersions" || a.str("versions.0") != "v1" {
		t.Fatalf("/api: %s", a.Body)
	}
	apis := c.do("GET", "/apis", nil, "Accept", "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json")
	if apis.Header.Get("Content-Type") != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" || apis.str("kind") != "APIGroupDiscoveryList" {
		t.Fatalf("/apis: %s", apis.Body)
	}
	if legacy := c.do("GET", "/apis", nil); legacy.str("kind") != "APIGroupList" || legacy.str("groups.0.name") != "events.k8s.io" || legacy.str("groups.1.name") != "authentication.k8s.io" {
		t.Fatalf("/apis: %s", legacy.Body)
	}
	v1 := c.do("GET", "/api/v1", nil)
	found := false
	for _, r := range v1.get("resources").([]any) {
		m := r.(map[string]any)
		if m["name"] == "configmaps" && m["kind"] == "ConfigMap" && m["namespaced"] == true && len(m["verbs"].([]any)) == 8 {
			found = true
		}
	}
	if !found {
		t.Fatalf("/api/v1: %s", v1.Body)
	}
	for _, p := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1"} {
		c.mustCode(c.do("GET", p, nil), 200)
	}
}

func TestAdminEndpoints(t *testing.T) {
	_, c := startTest(t)
	r := c.do("GET", "/apiconform/admin", nil)
	c.mustCode(r, 200)
	if string(r.Body) == "" || r.get("endpoints").([]any)[0] != "compact" {
		t.Fatalf("admin: %s", r.Body)
	}
	c.ns("adm")
	c.ns("adm2")
	comp := c.do("POST", "/apiconform/admin/compact", nil)
	c.mustCode(comp, 200)
	if comp.get("compactedRevision").(float64) < 1 {
		t.Fatalf("compact: %s", comp.Body)
	}
	// Exact lists below the compacted revision are gone.
	g := c.do("GET", "/api/v1/namespaces?resourceVersion=1&resourceVersionMatch=Exact", nil)
	c.mustCode(g, 410)
	if g.str("reason") != "Expired" || g.str("message") != "The resourceVersion for the provided list is too old." {
		t.Fatalf("410: %s", g.Body)
	}
	// A page served right after a compaction is at the compacted revision,
	// whose state stays readable (as etcd's compact revision does): its
	// continue token still works after the next write, and so does an
	// Exact list there, while one below it is gone.
	for _, n := range []string{"a", "b", "c", "d"} {
		c.mustCode(c.do("POST", "/api/v1/namespaces/adm/configmaps", cm(n, nil, nil)), 201)
	}
	comp = c.do("POST", "/apiconform/admin/compact", nil)
	c.mustCode(comp, 200)
	at := fmt.Sprint(int64(comp.get("compactedRevision").(float64)))
	first := c.do("GET", "/api/v1/namespaces/adm/configmaps?limit=2", nil)
	c.mustCode(first, 200)
	if first.str("metadata.resourceVersion") != at || first.str("metadata.continue") == "" {
		t.Fatalf("first page after compacting to %s: %s", at, first.Body)
	}
	c.mustCode(c.do("POST", "/api/v1/namespaces/adm2/configmaps", cm("later", nil, nil)), 201)
	rest := c.do("GET", "/api/v1/namespaces/adm/configmaps?limit=2&continue="+url.QueryEscape(first.str("metadata.continue")), nil)
	c.mustCode(rest, 200)
	if rest.str("items.0.metadata.name") != "c" || rest.str("items.1.metadata.name") != "d" || rest.str("metadata.resourceVersion") != at {
		t.Fatalf("second page after a write: %s", rest.Body)
	}
	c.mustCode(c.do("GET", "/api/v1/namespaces/adm/configmaps?resourceVersionMatch=Exact&resourceVersion="+at, nil), 200)
	below := fmt.Sprint(int64(comp.get("compactedRevision").(float64)) - 1)
	c.mustCode(c.do("GET", "/api/v1/namespaces/adm/configmaps?resourceVersionMatch=Exact&resourceVersion="+below, nil), 410)
	// Without the flag the paths are 404; a non-admin user is refused.
	_, off := startTest(t, func(c *Config) { c.EnableAdminEndpoints = false })
	off.mustCode(off.do("GET", "/apiconform/admin", nil), 404)
	_, users := startTest(t, func(c *Config) {
		c.Tokens = map[string]authUser{"u1": {Name: "jane"}}
	})
	users.token = "u1"
	users.mustCode(users.do("POST", "/apiconform/admin/compact", nil), 403)
	users.token = "wrong"
	users.mustCode(users.do("GET", "/api/v1/namespaces", nil), 401)
}

func TestAuthorizationRules(t *testing.T) {
	rules, err := auth.ParseRules([]byte("rules:\n- users: [viewer]\n  verbs: [get, list]\n  resources: [configmaps]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, c := startTest(t, func(cfg *Config) {
		cfg.Tokens = auth.Tokens{"v": {Name: "viewer", Groups: []string{"system:authenticated"}}}
		cfg.Rules = rules
	})
	admin := c.token
	c.ns("authz")
	c.token = "v"
	c.mustCode(c.do("GET", "/api/v1/namespaces/authz/configmaps", nil), 200)
	r := c.do("POST", "/api/v1/namespaces/authz/configmaps", cm("x", nil, nil))
	c.mustCode(r, 403)
	if r.str("reason") != "Forbidden" || !strings.Contains(r.str("message"), `User "viewer" cannot create resource "configmaps"`) {
		t.Fatalf("forbidden: %s", r.Body)
	}
	c.token = admin
	c.mustCode(c.do("POST", "/api/v1/namespaces/authz/configmaps", cm("x", nil, nil)), 201)
}

func TestListenAddressChecks(t *testing.T) {
	if _, err := New(Config{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "--allow-non-loopback") {
		t.Fatalf("non-loopback address: %v", err)
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("no address must be refused")
	}
	s, err := New(Config{Addr: "[::1]:0", InsecureAddr: "localhost:0", Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
}

// TestDryRunAuthorizedLikeRealRequest: "to make a dry-run request, you must be
// authorized to make the non-dry-run request" — for every write verb, a user
// who may not write is refused the dry run too, and one who may is served it.
func TestDryRunAuthorizedLikeRealRequest(t *testing.T) {
	rules, err := auth.ParseRules([]byte("rules:\n- users: [viewer]\n  verbs: [get, list]\n  resources: [configmaps]\n" +
		"- users: [writer]\n  verbs: [get, list, create, update, patch, delete, deletecollection]\n  resources: [configmaps]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, c := startTest(t, func(cfg *Config) {
		cfg.Tokens = auth.Tokens{
			"v": {Name: "viewer", Groups: []string{"system:authenticated"}},
			"w": {Name: "writer", Groups: []string{"system:authenticated"}},
		}
		cfg.Rules = rules
	})
	admin := c.token
	c.ns("dryauthz")
	c.mustCode(c.do("POST", "/api/v1/namespaces/dryauthz/configmaps", cm("live", map[string]string{"k": "v"}, nil)), 201)
	item := "/api/v1/namespaces/dryauthz/configmaps/live?dryRun=All"
	coll := "/api/v1/namespaces/dryauthz/configmaps?dryRun=All"
	tests := []struct {
		verb, method, path string
		body               any
		hdr                []string
		allowed            int
	}{
		{"create", "POST", coll, cm("new", nil, nil), nil, 201},
		{"update", "PUT", item, cm("live", map[string]string{"k": "changed"}, nil), nil, 200},
		{"patch", "PATCH", item, `{"data":{"k":"patched"}}`, []string{"Content-Type", "application/merge-patch+json"}, 200},
		{"delete", "DELETE", item, nil, nil, 200},
		{"deletecollection", "DELETE", coll, nil, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.verb, func(t *testing.T) {
			c.t = t
			c.token = "v"
			r := c.do(tt.method, tt.path, tt.body, tt.hdr...)
			c.mustCode(r, 403)
			if !strings.Contains(r.str("message"), `User "viewer" cannot `+tt.verb+` resource "configmaps"`) {
				t.Fatalf("dry-run %s by viewer: %s", tt.verb, r.Body)
			}
			c.token = "w"
			c.mustCode(c.do(tt.method, tt.path, tt.body, tt.hdr...), tt.allowed)
		})
	}
	// Nothing any dry run did was stored.
	c.t, c.token = t, admin
	r := c.do("GET", "/api/v1/namespaces/dryauthz/configmaps/live", nil)
	c.mustCode(r, 200)
	if r.str("data.k") != "v" {
		t.Fatalf("a dry run changed the object: %s", r.Body)
	}
	c.mustCode(c.do("GET", "/api/v1/namespaces/dryauthz/configmaps/new", nil), 404)
}
