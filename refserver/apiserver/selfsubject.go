package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/auth"
)

// The review resources kube-apiserver serves to every authenticated user
// (its system:basic-user role), answered from the token users and the
// authorization rules: authorization.k8s.io/v1 SelfSubjectAccessReview and
// SelfSubjectRulesReview, authentication.k8s.io/v1 SelfSubjectReview.
const (
	authzGroup = "authorization.k8s.io"
	authnGroup = "authentication.k8s.io"
)

// reviewResources are the served review resources, for discovery.
var reviewResources = map[string][]metav1.APIResource{
	authzGroup: {
		{Name: "selfsubjectaccessreviews", SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Verbs: metav1.Verbs{"create"}},
		{Name: "selfsubjectrulesreviews", SingularName: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview", Verbs: metav1.Verbs{"create"}},
	},
	authnGroup: {
		{Name: "selfsubjectreviews", SingularName: "selfsubjectreview", Kind: "SelfSubjectReview", Verbs: metav1.Verbs{"create"}},
	},
}

// isReviewPath reports whether p is under a review group's /apis/G/v1.
func isReviewPath(p string) bool {
	return strings.HasPrefix(p, "/apis/"+authzGroup+"/v1/") || strings.HasPrefix(p, "/apis/"+authnGroup+"/v1/")
}

// serveSelfSubject answers POST to the review resources; the group roots
// and resource lists are discovery's.
func (h *Handler) serveSelfSubject(w http.ResponseWriter, r *http.Request, u auth.User) {
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/") // apis G v1 resource
	if len(segs) != 4 {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	group, resource := segs[1], segs[3]
	found := false
	for _, res := range reviewResources[group] {
		found = found || res.Name == resource
	}
	if !found {
		writeStatus(w, r, errNotFoundResource())
		return
	}
	if r.Method != http.MethodPost {
		writeStatus(w, r, errMethodNotAllowed())
		return
	}
	if !u.IsAuthenticated() && !h.allows(u, auth.Attributes{Verb: "create", Resource: resource + "." + group}) {
		writeStatus(w, r, h.forbidden(u, "create", &requestInfo{group: group, resource: resource}))
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeStatus(w, r, err)
		return
	}
	raw := []byte("{}")
	if len(strings.TrimSpace(string(body))) > 0 {
		b, f, err := bodyOf(r.Header.Get("Content-Type"), body)
		if err != nil {
			writeStatus(w, r, err)
			return
		}
		if raw, err = toJSON(b, f); err != nil {
			writeStatus(w, r, err)
			return
		}
	}
	var out runtime.Object
	switch resource {
	case "selfsubjectaccessreviews":
		out, err = h.accessReview(u, raw)
	case "selfsubjectrulesreviews":
		out, err = h.rulesReview(u, raw)
	default:
		out = selfReview(u)
	}
	if err != nil {
		writeStatus(w, r, err)
		return
	}
	writeObject(w, r, http.StatusCreated, out)
}

// allows is the authorizer's answer for u and a.
func (h *Handler) allows(u auth.User, a auth.Attributes) bool {
	return h.openServer() || h.cfg.Rules.Allows(u, a)
}

func decodeReview(raw []byte, into any) error {
	if err := json.Unmarshal(raw, into); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf: %v", err))
	}
	return nil
}

// accessReview answers whether the requesting user may do what the spec says.
func (h *Handler) accessReview(u auth.User, raw []byte) (runtime.Object, error) {
	var rev authorizationv1.SelfSubjectAccessReview
	if err := decodeReview(raw, &rev); err != nil {
		return nil, err
	}
	ra, nra := rev.Spec.ResourceAttributes, rev.Spec.NonResourceAttributes
	var errs field.ErrorList
	switch {
	case ra == nil && nra == nil:
		errs = append(errs, field.Invalid(field.NewPath("spec", "resourceAttributes"), nil, "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
	case ra != nil && nra != nil:
		errs = append(errs, field.Invalid(field.NewPath("spec", "nonResourceAttributes"), *nra, "cannot be specified in combination with resourceAttributes"))
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: authzGroup}, "", errs)
	}
	var a auth.Attributes
	if ra != nil {
		res := ra.Resource
		if ra.Group != "" {
			res += "." + ra.Group
		}
		a = auth.Attributes{Verb: ra.Verb, Resource: res, Subresource: ra.Subresource, Namespace: ra.Namespace, Name: ra.Name}
	} else {
		a = auth.Attributes{Verb: nra.Verb, Path: nra.Path}
	}
	out := &authorizationv1.SelfSubjectAccessReview{TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectAccessReview", APIVersion: authzGroup + "/v1"},
		Spec: rev.Spec, Status: authorizationv1.SubjectAccessReviewStatus{Allowed: h.allows(u, a)}}
	return out, nil
}

// rulesReview lists what the requesting user may do in a namespace: the
// matching rules, and what kube-apiserver's default roles give everyone.
func (h *Handler) rulesReview(u auth.User, raw []byte) (runtime.Object, error) {
	var rev authorizationv1.SelfSubjectRulesReview
	if err := decodeReview(raw, &rev); err != nil {
		return nil, err
	}
	ns := rev.Spec.Namespace
	if ns == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	var resourceRules []authorizationv1.ResourceRule
	nonResourceRules := []authorizationv1.NonResourceRule{{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}}}
	all := func() {
		resourceRules = append(resourceRules, authorizationv1.ResourceRule{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}})
		nonResourceRules = append(nonResourceRules, authorizationv1.NonResourceRule{Verbs: []string{"*"}, NonResourceURLs: []string{"*"}})
	}
	switch {
	case u.IsAdmin():
		all()
	case h.openServer() || (h.cfg.Rules == nil && u.IsAuthenticated()):
		// No rules file: every authenticated user (on an open server,
		// everyone) may do everything.
		all()
	case h.cfg.Rules != nil:
		for _, rule := range h.cfg.Rules.Rules {
			if !ruleApplies(rule, u, ns) {
				continue
			}
			if len(rule.NonResourceURLs) > 0 {
				nonResourceRules = append(nonResourceRules, authorizationv1.NonResourceRule{Verbs: rule.Verbs, NonResourceURLs: rule.NonResourceURLs})
				continue
			}
			for _, res := range rule.Resources {
				name, group := res, ""
				if name == "*" {
					group = "*"
				} else if i := strings.Index(strings.SplitN(res, "/", 2)[0], "."); i >= 0 {
					name, group = res[:i], res[i+1:]
				}
				resourceRules = append(resourceRules, authorizationv1.ResourceRule{Verbs: rule.Verbs, APIGroups: []string{group}, Resources: []string{name}, ResourceNames: rule.ResourceNames})
			}
		}
	}
	if u.IsAuthenticated() {
		resourceRules = append(resourceRules,
			authorizationv1.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{authzGroup}, Resources: []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}},
			authorizationv1.ResourceRule{Verbs: []string{"create"}, APIGroups: []string{authnGroup}, Resources: []string{"selfsubjectreviews"}})
		nonResourceRules = append(nonResourceRules, authorizationv1.NonResourceRule{Verbs: []string{"get"},
			NonResourceURLs: []string{"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"}})
	}
	// kube-apiserver answers with an empty spec.
	return &authorizationv1.SelfSubjectRulesReview{TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectRulesReview", APIVersion: authzGroup + "/v1"},
		Status: authorizationv1.SubjectRulesReviewStatus{ResourceRules: resourceRules, NonResourceRules: nonResourceRules}}, nil
}

// ruleApplies reports whether rule admits u in namespace ns, asking the
// authorizer about one request the rule itself describes.
func ruleApplies(rule auth.Rule, u auth.User, ns string) bool {
	if len(rule.Verbs) == 0 {
		return false
	}
	a := auth.Attributes{Verb: rule.Verbs[0], Namespace: ns}
	switch {
	case len(rule.NonResourceURLs) > 0:
		a = auth.Attributes{Verb: rule.Verbs[0], Path: strings.TrimSuffix(rule.NonResourceURLs[0], "*") + "x"}
		if rule.NonResourceURLs[0] != "*" && !strings.HasSuffix(rule.NonResourceURLs[0], "*") {
			a.Path = rule.NonResourceURLs[0]
		}
	case len(rule.Resources) > 0:
		a.Resource = strings.SplitN(rule.Resources[0], "/", 2)[0]
		if parts := strings.SplitN(rule.Resources[0], "/", 2); len(parts) == 2 {
			a.Subresource = parts[1]
		}
		if len(rule.ResourceNames) > 0 {
			a.Name = rule.ResourceNames[0]
		}
	default:
		return false
	}
	one := &auth.Rules{Rules: []auth.Rule{rule}}
	return one.Allows(auth.User{Name: u.Name, UID: u.UID, Groups: withoutMasters(u.Groups)}, a)
}

func withoutMasters(groups []string) []string {
	out := make([]string, 0, len(groups))
	for _, g := range groups {
		if g != auth.Masters {
			out = append(out, g)
		}
	}
	return out
}

// selfReview tells the requesting user who the server thinks they are.
func selfReview(u auth.User) runtime.Object {
	return &authenticationv1.SelfSubjectReview{TypeMeta: metav1.TypeMeta{Kind: "SelfSubjectReview", APIVersion: authnGroup + "/v1"},
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Now()},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups}}}
}
