// Package auth authenticates bearer tokens from a kube-apiserver style token
// file and authorizes requests with a small YAML rule file.
package auth

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
}

// Anonymous is the user of open (token-less) servers.
var Anonymous = User{Name: "system:anonymous", Groups: []string{"system:unauthenticated"}}

// IsAdmin reports whether u may use the admin endpoints.
func (u User) IsAdmin() bool {
	if u.Name == "admin" {
		return true
	}
	for _, g := range u.Groups {
		if g == "system:masters" {
			return true
		}
	}
	return false
}

// Tokens maps bearer tokens to users.
type Tokens map[string]User

// ParseTokenFile reads the kube-apiserver CSV format: token,user,uid,"group1,group2".
func ParseTokenFile(r io.Reader) (Tokens, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.Comment = '#'
	out := Tokens{}
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("token file: %w", err)
		}
		if len(rec) < 3 {
			return nil, fmt.Errorf("token file line %d: want token,user,uid[,\"groups\"]", line)
		}
		tok := strings.TrimSpace(rec[0])
		if tok == "" {
			return nil, fmt.Errorf("token file line %d: empty token", line)
		}
		u := User{Name: strings.TrimSpace(rec[1]), UID: strings.TrimSpace(rec[2])}
		if len(rec) > 3 && strings.TrimSpace(rec[3]) != "" {
			for _, g := range strings.Split(rec[3], ",") {
				u.Groups = append(u.Groups, strings.TrimSpace(g))
			}
		}
		u.Groups = append(u.Groups, "system:authenticated")
		out[tok] = u
	}
	return out, nil
}

// LoadTokenFile reads a token file from disk.
func LoadTokenFile(path string) (Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseTokenFile(f)
}

// Rule allows verbs on resources to users and groups. "*" matches anything.
type Rule struct {
	Users     []string `json:"users,omitempty"`
	Groups    []string `json:"groups,omitempty"`
	Verbs     []string `json:"verbs"`
	Resources []string `json:"resources"` // "configmaps", "widgets.example.com", "*"; "nonresource" for paths like /version
}

// Rules is the authorization file: {"rules":[...]}.
type Rules struct {
	Rules []Rule `json:"rules"`
}

// ParseRules reads the YAML rule file.
func ParseRules(b []byte) (*Rules, error) {
	var rs Rules
	if err := yaml.UnmarshalStrict(b, &rs); err != nil {
		return nil, fmt.Errorf("authorization rules: %w", err)
	}
	for i, r := range rs.Rules {
		if len(r.Users) == 0 && len(r.Groups) == 0 {
			return nil, fmt.Errorf("authorization rules: rule %d names no users or groups", i)
		}
	}
	return &rs, nil
}

// LoadRules reads a rule file from disk.
func LoadRules(path string) (*Rules, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRules(b)
}

func matchAny(list []string, v string) bool {
	for _, x := range list {
		if x == "*" || x == v {
			return true
		}
	}
	return false
}

// Allows reports whether u may do verb on resource (group-qualified for non-core groups).
// A nil Rules allows everything; system:masters is always allowed.
func (rs *Rules) Allows(u User, verb, resource string) bool {
	if rs == nil {
		return true
	}
	for _, g := range u.Groups {
		if g == "system:masters" {
			return true
		}
	}
	for _, r := range rs.Rules {
		who := matchAny(r.Users, u.Name)
		for _, g := range u.Groups {
			who = who || matchAny(r.Groups, g)
		}
		if who && matchAny(r.Verbs, verb) && matchAny(r.Resources, resource) {
			return true
		}
	}
	return false
}
