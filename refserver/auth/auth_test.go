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
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		u        User
		verb     string
		resource string
		want     bool
	}{
		{User{Name: "alice"}, "delete", "configmaps", true},
		{User{Name: "alice"}, "get", "secrets", false},
		{User{Name: "carol", Groups: []string{"viewers"}}, "list", "widgets.example.com", true},
		{User{Name: "carol", Groups: []string{"viewers"}}, "create", "configmaps", false},
		{User{Name: "root", Groups: []string{"system:masters"}}, "delete", "secrets", true},
	}
	for _, c := range cases {
		if got := rs.Allows(c.u, c.verb, c.resource); got != c.want {
			t.Errorf("%s %s %s: got %v", c.u.Name, c.verb, c.resource, got)
		}
	}
	if _, err := ParseRules([]byte("rules:\n- verbs: [get]\n  resources: [x]\n")); err == nil {
		t.Error("a rule without users or groups must be refused")
	}
	var open *Rules
	if !open.Allows(User{Name: "x"}, "delete", "y") {
		t.Error("no rules allow everything")
	}
}
