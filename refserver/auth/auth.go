// Package auth authenticates bearer tokens from a kube-apiserver style token
// file and authorizes requests with a small YAML rule file.
package auth

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// User is an authenticated identity.
type User struct {
	Name   string
	UID    string
	Groups []string
}

// Anonymous is every client that presents no credentials, and every client
// of an open (token-less) server.
var Anonymous = User{Name: "system:anonymous", Groups: []string{Unauthenticated}}

// IsAdmin reports whether u is in system:masters: allowed everything,
// served the admin endpoints, and exempt from the in-flight limit.
func (u User) IsAdmin() bool { return slices.Contains(u.Groups, Masters) }

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
		u.Groups = append(u.Groups, Authenticated)
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

// Group names kube-apiserver gives every request.
const (
	Authenticated   = "system:authenticated"
	Unauthenticated = "system:unauthenticated"
	Masters         = "system:masters"
)

// IsAuthenticated reports whether u presented valid credentials.
func (u User) IsAuthenticated() bool { return slices.Contains(u.Groups, Authenticated) }

// Rule allows verbs on resources, or on non-resource paths, to users and
// groups. In Users and Groups "*" means every authenticated user (kube's
// system:authenticated group); anonymous clients are admitted only by name
// (users: [system:anonymous] or groups: [system:unauthenticated]). In the
// other lists "*" matches anything, and an empty Namespaces or
// ResourceNames list means no restriction.
type Rule struct {
	Users  []string `json:"users,omitempty"`
	Groups []string `json:"groups,omitempty"`
	Verbs  []string `json:"verbs"`
	// Resources are plural names, group-qualified outside the core group
	// ("configmaps", "widgets.example.com"); "name/subresource" names one
	// subresource, and a bare name also covers its subresources.
	Resources []string `json:"resources,omitempty"`
	// Namespaces restricts the rule to requests in these namespaces; a
	// restricted rule never matches cluster-scoped or all-namespace requests.
	Namespaces []string `json:"namespaces,omitempty"`
	// ResourceNames restricts the rule to requests naming these objects
	// (so never to list, watch, create or deletecollection).
	ResourceNames []string `json:"resourceNames,omitempty"`
	// NonResourceURLs are paths such as "/api", "/openapi/*" (a trailing
	// "*" matches by prefix); verbs for them are lower-case HTTP methods.
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
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
		switch {
		case len(r.Users) == 0 && len(r.Groups) == 0:
			return nil, fmt.Errorf("authorization rules: rule %d names no users or groups", i)
		case len(r.Verbs) == 0:
			return nil, fmt.Errorf("authorization rules: rule %d names no verbs", i)
		case len(r.Resources) == 0 && len(r.NonResourceURLs) == 0:
			return nil, fmt.Errorf("authorization rules: rule %d names no resources or nonResourceURLs", i)
		case len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0 || len(r.ResourceNames) > 0):
			return nil, fmt.Errorf("authorization rules: rule %d mixes nonResourceURLs with resources, namespaces or resourceNames", i)
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

// Attributes describe one request for authorization.
type Attributes struct {
	Verb string
	// Resource requests: Resource is group-qualified outside the core group.
	Resource, Subresource, Namespace, Name string
	// Path is set instead for non-resource requests.
	Path string
}

// publicPaths are readable by everyone, as kube-apiserver's
// system:public-info-viewer role grants them to authenticated and
// unauthenticated users alike.
var publicPaths = []string{"/healthz", "/healthz/*", "/livez", "/livez/*", "/readyz", "/readyz/*", "/version", "/version/"}

// discoveryPaths are readable by every authenticated user, as
// kube-apiserver's system:discovery role grants them.
var discoveryPaths = []string{"/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*"}

// PublicPath reports whether everyone, anonymous clients included, may get path.
func PublicPath(path string) bool { return matchPath(publicPaths, path) }

func matchAny(list []string, v string) bool {
	return slices.Contains(list, "*") || slices.Contains(list, v)
}

func matchPath(patterns []string, path string) bool {
	for _, p := range patterns {
		if p == "*" || p == path {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(path, prefix) {
			return true
		}
	}
	return false
}

// admits reports whether the rule's users or groups include u.
func (r Rule) admits(u User) bool {
	if u.IsAuthenticated() && (slices.Contains(r.Users, "*") || slices.Contains(r.Groups, "*")) {
		return true
	}
	if slices.Contains(r.Users, u.Name) {
		return true
	}
	for _, g := range u.Groups {
		if slices.Contains(r.Groups, g) {
			return true
		}
	}
	return false
}

func (r Rule) matches(a Attributes) bool {
	if !matchAny(r.Verbs, a.Verb) {
		return false
	}
	if a.Path != "" {
		return matchPath(r.NonResourceURLs, a.Path)
	}
	if len(r.Namespaces) > 0 && (a.Namespace == "" || !matchAny(r.Namespaces, a.Namespace)) {
		return false
	}
	if len(r.ResourceNames) > 0 && (a.Name == "" || !matchAny(r.ResourceNames, a.Name)) {
		return false
	}
	return matchAny(r.Resources, a.Resource) || (a.Subresource != "" && slices.Contains(r.Resources, a.Resource+"/"+a.Subresource))
}

// Allows reports whether u may make the request. system:masters may do
// anything; public paths are open to everyone and discovery paths to every
// authenticated user, as kube-apiserver's default roles have it. A nil
// Rules allows every authenticated user everything.
func (rs *Rules) Allows(u User, a Attributes) bool {
	if slices.Contains(u.Groups, Masters) {
		return true
	}
	if a.Path != "" && a.Verb == "get" {
		if matchPath(publicPaths, a.Path) || (u.IsAuthenticated() && matchPath(discoveryPaths, a.Path)) {
			return true
		}
	}
	if rs == nil {
		return u.IsAuthenticated()
	}
	for _, r := range rs.Rules {
		if r.admits(u) && r.matches(a) {
			return true
		}
	}
	return false
}
