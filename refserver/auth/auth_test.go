package auth

import (
	"strings"
	"testing"
)

func TestParseTokenFile(t *testing.T) {
	toks, err := ParseTokenFile(strings.NewReader("# comment\nt1,alice,u1,\"dev,ops\"\nt2,bob,u2\n"))
	if err != nil {
		t.Fatal(err)
	}
	a := toks["t1"]
	if a.Name != "alice" || a.UID != "u1" || len(a.Groups) != 3 || a.Groups[0] != "dev" || a.Groups[1] != "ops" {
		t.Fatalf("alice: %+v", a)
	}
	if toks["t2"].Name != "bob" {
		t.Fatalf("bob: %+v", toks["t2"])
	}
	for _, bad := range []string{"onlytoken\n", ",user,uid\n", "a,\"b\n"} {
		if _, err := ParseTokenFile(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

func TestRules(t *testing.T) {
	rs, err := ParseRules([]byte(`
rules:
- users: [alice]
  verbs: ["*"]
  resources: [configmaps]
- groups: [viewers]
  verbs: [get, list, watch]
  resources: ["*"]
- users: [dana]
  verbs: [get, list, watch]
  resources: [configmaps, secrets]
  namespaces: [team-a]
- users: [erin]
  verbs: [get, update]
  resources: [configmaps]
  namespaces: [team-a]
  resourceNames: [settings]
- users: [frank]
  verbs: [update]
  resources: [frobbers.compat.apiconform.io/status]
- users: ["*"]
  verbs: [get]
  resources: [namespaces]
- users: [system:anonymous]
  verbs: [get]
  nonResourceURLs: [/api, /apis/*]
`))
	if err != nil {
		t.Fatal(err)
	}
	authed := func(name string, groups ...string) User {
		return User{Name: name, Groups: append(groups, Authenticated)}
	}
	res := func(verb, resource, ns, name string) Attributes {
		return Attributes{Verb: verb, Resource: resource, Namespace: ns, Name: name}
	}
	path := func(verb, p string) Attributes { return Attributes{Verb: verb, Path: p} }
	cases := []struct {
		name string
		u    User
		a    Attributes
		want bool
	}{
		{"user rule", authed("alice"), res("delete", "configmaps", "x", "a"), true},
		{"other resource", authed("alice"), res("get", "secrets", "x", "a"), false},
		{"group rule, any resource", authed("carol", "viewers"), res("list", "widgets.example.com", "", ""), true},
		{"group rule, other verb", authed("carol", "viewers"), res("create", "configmaps", "x", ""), false},
		{"system:masters", authed("root", Masters), res("delete", "secrets", "x", "s"), true},
		{"namespace rule, its namespace", authed("dana"), res("list", "secrets", "team-a", ""), true},
		{"namespace rule, other namespace", authed("dana"), res("get", "configmaps", "team-b", "c"), false},
		{"namespace rule, all namespaces", authed("dana"), res("list", "configmaps", "", ""), false},
		{"namespace rule, cluster scope", authed("dana"), res("get", "namespaces", "", "team-a"), true}, // via the "*" rule
		{"resourceNames, named object", authed("erin"), res("update", "configmaps", "team-a", "settings"), true},
		{"resourceNames, other object", authed("erin"), res("get", "configmaps", "team-a", "other"), false},
		{"resourceNames, list", authed("erin"), res("list", "configmaps", "team-a", ""), false},
		{"subresource rule", authed("frank"), Attributes{Verb: "update", Resource: "frobbers.compat.apiconform.io", Subresource: "status", Name: "f"}, true},
		{"subresource rule, main resource", authed("frank"), res("update", "frobbers.compat.apiconform.io", "", "f"), false},
		{"* admits authenticated users", authed("zed"), res("get", "namespaces", "", "default"), true},
		{"* does not admit anonymous", Anonymous, res("get", "namespaces", "", "default"), false},
		{"public path, anonymous", Anonymous, path("get", "/readyz"), true},
		{"public path, version", Anonymous, path("get", "/version"), true},
		{"discovery, authenticated", authed("zed"), path("get", "/openapi/v2"), true},
		{"discovery, anonymous without a rule", Anonymous, path("get", "/openapi/v2"), false},
		{"discovery, anonymous with a rule", Anonymous, path("get", "/apis/apps"), true},
		{"non-resource rule, other verb", Anonymous, path("post", "/api"), false},
	}
	for _, c := range cases {
		if got := rs.Allows(c.u, c.a); got != c.want {
			t.Errorf("%s: %s %+v: got %v", c.name, c.u.Name, c.a, got)
		}
	}
	var none *Rules
	if !none.Allows(authed("x"), res("delete", "y", "", "")) {
		t.Error("no rules allow authenticated users everything")
	}
	if none.Allows(Anonymous, res("get", "y", "", "")) || none.Allows(Anonymous, path("get", "/api")) {
		t.Error("no rules must not allow anonymous clients resources or discovery")
	}
}

func TestParseRulesRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"no users or groups": "rules:\n- verbs: [get]\n  resources: [x]\n",
		"no verbs":           "rules:\n- users: [a]\n  resources: [x]\n",
		"nothing to act on":  "rules:\n- users: [a]\n  verbs: [get]\n",
		"mixed":              "rules:\n- users: [a]\n  verbs: [get]\n  resources: [x]\n  nonResourceURLs: [/api]\n",
		"unknown field":      "rules:\n- users: [a]\n  verbs: [get]\n  resources: [x]\n  namespace: [y]\n",
	} {
		if _, err := ParseRules([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
