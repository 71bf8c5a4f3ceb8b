package registry

import (
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The rbac.authorization.k8s.io/v1 kinds, as kube-apiserver v1.36.3 serves
// them: what operators create to grant their workloads access. They are
// stored and served, not enforced: the reference server authorizes with its
// own rules (refserver/auth), so no escalation check applies either. Every
// one may be created by a PUT; names are path segments; kube-apiserver's
// bootstrap roles (cluster-admin, view, …) are not created, nor is
// aggregation run (kube-controller-manager's job).

const rbacGroup = rbacv1.GroupName

func roleKind() *Kind {
	return withNullEmptyRules(rbacKind("roles", "role", "Role", true, func() any { return &rbacv1.Role{} }, []Column{CreatedAtColumn},
		func(obj, old Object) field.ErrorList { return validateRules(obj, true) }))
}

func clusterRoleKind() *Kind {
	return withNullEmptyRules(rbacKind("clusterroles", "clusterrole", "ClusterRole", false, func() any { return &rbacv1.ClusterRole{} }, []Column{CreatedAtColumn}, func(obj, old Object) field.ErrorList {
		errs := validateRules(obj, false)
		if rule, ok := obj["aggregationRule"]; ok && rule != nil {
			p := field.NewPath("aggregationRule", "clusterRoleSelectors")
			selectors := sliceOf(mapOf(rule)["clusterRoleSelectors"])
			if len(selectors) == 0 {
				errs = append(errs, field.Required(p, "at least one clusterRoleSelector required if aggregationRule is non-nil"))
			}
			for i, s := range selectors {
				var sel metav1.LabelSelector
				if err := convertJSON(s, &sel); err != nil {
					errs = append(errs, field.Invalid(p.Index(i), s, err.Error()))
					continue
				}
				errs = append(errs, metavalidation.ValidateLabelSelector(&sel, metavalidation.LabelSelectorValidationOptions{}, p.Index(i))...)
				if _, err := metav1.LabelSelectorAsSelector(&sel); err != nil {
					errs = append(errs, field.Invalid(p.Index(i), nil, "invalid label selector."))
				}
			}
		}
		return errs
	}))
}

func roleBindingKind() *Kind {
	return withBindingDefaults(rbacKind("rolebindings", "rolebinding", "RoleBinding", true, func() any { return &rbacv1.RoleBinding{} },
		bindingColumns("roleBinding", rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"]),
		func(obj, old Object) field.ErrorList { return validateBinding(obj, old, true) }))
}

func clusterRoleBindingKind() *Kind {
	return withBindingDefaults(rbacKind("clusterrolebindings", "clusterrolebinding", "ClusterRoleBinding", false, func() any { return &rbacv1.ClusterRoleBinding{} },
		bindingColumns("clusterRoleBinding", rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"]),
		func(obj, old Object) field.ErrorList { return validateBinding(obj, old, false) }))
}

// rbacKind is what the four kinds share.
func rbacKind(resource, singular, kind string, namespaced bool, typed func() any, columns []Column, validate func(obj, old Object) field.ErrorList) *Kind {
	return &Kind{
		Group: rbacGroup, Versions: []string{"v1"}, Resource: resource, Singular: singular, Kind: kind, ListKind: kind + "List",
		Namespaced: namespaced, DeleteReturnsStatus: true, CreateOnUpdate: true,
		StrategicMerge: typed(), Typed: typed,
		NameValidation: path.IsValidPathSegmentName,
		Validate:       validate,
		Columns:        columns,
	}
}

// withNullEmptyRules: kube-apiserver's conversion writes a role's missing or
// empty rules as null (after the writer's entry has recorded them).
func withNullEmptyRules(k *Kind) *Kind {
	null := func(obj Object) {
		if len(sliceOf(obj["rules"])) == 0 {
			obj["rules"] = nil
		}
	}
	k.PrepareCreated = null
	k.PrepareUpdated = func(obj, _ Object) { null(obj) }
	return k
}

// withBindingDefaults gives a binding rbac/v1's defaults.
func withBindingDefaults(k *Kind) *Kind {
	k.Prepare = defaultBinding
	return k
}

// defaultBinding is rbac/v1's defaulting: a binding's roleRef and its users'
// and groups' subjects are in the RBAC group unless they say otherwise.
func defaultBinding(obj, _ Object) {
	if ref := mapOf(obj["roleRef"]); ref != nil && str(ref["apiGroup"]) == "" {
		ref["apiGroup"] = rbacGroup
	}
	for _, s := range sliceOf(obj["subjects"]) {
		subject := mapOf(s)
		if k := str(subject["kind"]); str(subject["apiGroup"]) == "" && (k == rbacv1.UserKind || k == rbacv1.GroupKind) {
			subject["apiGroup"] = rbacGroup
		}
	}
}

// validateRules is kube-apiserver's check of a role's rules.
func validateRules(obj Object, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range sliceOf(obj["rules"]) {
		rule := mapOf(r)
		p := field.NewPath("rules").Index(i)
		if len(sliceOf(rule["verbs"])) == 0 {
			errs = append(errs, field.Required(p.Child("verbs"), "verbs must contain at least one value"))
		}
		if urls := sliceOf(rule["nonResourceURLs"]); len(urls) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), stringsOf(urls), "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(sliceOf(rule["apiGroups"])) > 0 || len(sliceOf(rule["resources"])) > 0 || len(sliceOf(rule["resourceNames"])) > 0 {
				errs = append(errs, field.Invalid(p.Child("nonResourceURLs"), stringsOf(urls), "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(sliceOf(rule["apiGroups"])) == 0 {
			errs = append(errs, field.Required(p.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(sliceOf(rule["resources"])) == 0 {
			errs = append(errs, field.Required(p.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

// validateBinding is kube-apiserver's check of a binding: its roleRef, which
// no update may change, and its subjects.
func validateBinding(obj, old Object, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	ref := mapOf(obj["roleRef"])
	refPath := field.NewPath("roleRef")
	if g := str(ref["apiGroup"]); g != rbacGroup {
		errs = append(errs, field.NotSupported(refPath.Child("apiGroup"), g, []string{rbacGroup}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"Role", "ClusterRole"}
	}
	if k := str(ref["kind"]); !slices.Contains(kinds, k) {
		errs = append(errs, field.NotSupported(refPath.Child("kind"), k, kinds))
	}
	if name := str(ref["name"]); name == "" {
		errs = append(errs, field.Required(refPath.Child("name"), ""))
	} else {
		for _, msg := range path.IsValidPathSegmentName(name) {
			errs = append(errs, field.Invalid(refPath.Child("name"), name, msg))
		}
	}
	for i, s := range sliceOf(obj["subjects"]) {
		errs = append(errs, validateSubject(mapOf(s), namespaced, field.NewPath("subjects").Index(i))...)
	}
	if old != nil {
		var now, was rbacv1.RoleRef
		if convertJSON(obj["roleRef"], &now) == nil && convertJSON(old["roleRef"], &was) == nil && now != was {
			// kube-apiserver shows its internal type, whose fields have no
			// JSON names.
			type internalRoleRef struct{ APIGroup, Kind, Name string }
			errs = append(errs, field.Invalid(refPath, internalRoleRef(now), "cannot change roleRef"))
		}
	}
	return errs
}

func validateSubject(subject map[string]any, namespaced bool, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	name, group := str(subject["name"]), str(subject["apiGroup"])
	if name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	}
	switch k := str(subject["kind"]); k {
	case rbacv1.ServiceAccountKind:
		if name != "" {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(p.Child("name"), name, msg))
			}
		}
		if group != "" {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), group, []string{""}))
		}
		if !namespaced && str(subject["namespace"]) == "" {
			errs = append(errs, field.Required(p.Child("namespace"), ""))
		}
	case rbacv1.UserKind, rbacv1.GroupKind:
		if group != rbacGroup {
			errs = append(errs, field.NotSupported(p.Child("apiGroup"), group, []string{rbacGroup}))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), k, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
	}
	return errs
}

// bindingColumns are kube-apiserver's table columns of a binding kind: what
// names its subjects in their descriptions, and its roleRef's description
// (kube-apiserver takes rbac/v1beta1's).
func bindingColumns(what, roleRefDoc string) []Column {
	subjects := func(kind string) func(Object) any {
		return func(o Object) any {
			var names []string
			for _, s := range sliceOf(o["subjects"]) {
				subject := mapOf(s)
				if str(subject["kind"]) != kind {
					continue
				}
				name := str(subject["name"])
				if kind == rbacv1.ServiceAccountKind {
					name = str(subject["namespace"]) + "/" + name
				}
				names = append(names, name)
			}
			return strings.Join(names, ", ")
		}
	}
	return []Column{
		{Name: "Role", Type: "string", Description: roleRefDoc, Cell: func(o Object) any {
			ref := mapOf(o["roleRef"])
			return str(ref["kind"]) + "/" + str(ref["name"])
		}},
		AgeColumn,
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + what, Cell: subjects(rbacv1.UserKind)},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + what, Cell: subjects(rbacv1.GroupKind)},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + what, Cell: subjects(rbacv1.ServiceAccountKind)},
	}
}

func stringsOf(items []any) []string {
	out := make([]string, len(items))
	for i, v := range items {
		out[i] = str(v)
	}
	return out
}
