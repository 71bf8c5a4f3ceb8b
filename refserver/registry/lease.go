package registry

import (
	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// leaseKind is the strategy of coordination.k8s.io/v1 Lease, as
// kube-apiserver v1.36.3 serves it: the object client-go's leader election
// (and so controller-runtime's manager) takes and renews. A PUT creates a
// missing lease; an update must name the resourceVersion it replaces, so
// two candidates cannot both win.
func leaseKind() *Kind {
	return &Kind{
		Group: "coordination.k8s.io", Versions: []string{"v1"}, Resource: "leases", Singular: "lease", Kind: "Lease", ListKind: "LeaseList",
		Namespaced: true, DeleteReturnsStatus: true, CreateOnUpdate: true, UpdateNeedsResourceVersion: true,
		StrategicMerge: coordinationv1.Lease{}, Typed: func() any { return &coordinationv1.Lease{} },
		// Coordinated leader election is off by default in v1.36, so the
		// strategy drops its two fields, after the writer's entry has
		// recorded them (as kube-apiserver's does).
		PrepareCreated: func(obj Object) { dropCoordinatedFields(obj, nil) },
		PrepareUpdated: dropCoordinatedFields,
		Validate:       func(obj, old Object) field.ErrorList { return validateLeaseSpec(mapOf(obj["spec"])) },
		Columns: []Column{
			{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"],
				Cell: func(o Object) any { return str(mapOf(o["spec"])["holderIdentity"]) }},
			AgeColumn,
		},
	}
}

// validateLeaseSpec is kube-apiserver's check of a lease's spec.
func validateLeaseSpec(spec map[string]any) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if v, ok := spec["leaseDurationSeconds"]; ok && v != nil && toInt(v) <= 0 {
		errs = append(errs, field.Invalid(p.Child("leaseDurationSeconds"), toInt(v), "must be greater than 0"))
	}
	if v, ok := spec["leaseTransitions"]; ok && v != nil && toInt(v) < 0 {
		errs = append(errs, field.Invalid(p.Child("leaseTransitions"), toInt(v), "must be greater than or equal to 0"))
	}
	return errs
}

// dropCoordinatedFields removes spec.strategy and spec.preferredHolder
// unless the stored lease has them.
func dropCoordinatedFields(obj, old Object) {
	spec := mapOf(obj["spec"])
	for _, f := range []string{"strategy", "preferredHolder"} {
		if _, kept := mapOf(mapOf(old)["spec"])[f]; !kept {
			delete(spec, f)
		}
	}
}
