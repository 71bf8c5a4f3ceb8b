package registry

import (
	corev1 "k8s.io/api/core/v1"
)

// serviceAccountKind is the strategy of core/v1 ServiceAccount, as
// kube-apiserver v1.36.3 serves it: what operators create for the workloads
// they run. A secret reference keeps its name alone. A DELETE answers the
// object. Not served: the /token subresource (TokenRequest), which needs a
// token issuer.
func serviceAccountKind() *Kind {
	return &Kind{
		Group: "", Versions: []string{"v1"}, Resource: "serviceaccounts", Singular: "serviceaccount", Kind: "ServiceAccount", ListKind: "ServiceAccountList",
		ShortNames: []string{"sa"}, Namespaced: true,
		StrategicMerge: corev1.ServiceAccount{}, Typed: func() any { return &corev1.ServiceAccount{} },
		// After the writer's entry has recorded them, as kube-apiserver's
		// strategy does.
		PrepareCreated: func(obj Object) { keepSecretNames(obj) },
		PrepareUpdated: func(obj, _ Object) { keepSecretNames(obj) },
		Columns:        []Column{AgeColumn},
	}
}

// keepSecretNames reduces each of a service account's secret references to
// its name.
func keepSecretNames(obj Object) {
	for _, ref := range sliceOf(obj["secrets"]) {
		m := mapOf(ref)
		for f := range m {
			if f != "name" {
				delete(m, f)
			}
		}
	}
}
