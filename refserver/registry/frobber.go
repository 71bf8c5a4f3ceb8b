package registry

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/frobber"
)

// frobberKind serves the changing-the-API document's Frobber example
// (compat.apiconform.io v6 and v7beta1, stored in v6).
func frobberKind() *Kind {
	k := &Kind{
		Group: frobber.Group, Versions: frobber.Versions, Resource: frobber.Resource, Singular: frobber.Singular,
		Kind: frobber.Kind, ListKind: frobber.ListKind, Namespaced: true, TrackGeneration: true,
		TypedFor: frobber.NewTyped,
		Convert:  frobber.Convert,
		PrepareVersioned: func(obj, old Object, version string) error {
			if err := frobber.Default(obj, version); err != nil {
				return err
			}
			return frobber.Normalize(obj, old, version)
		},
		Validate: func(obj, old Object) field.ErrorList { return frobber.Validate(obj, old) },
		Schemas:  map[string]map[string]any{},
		Columns:  []Column{AgeColumn},
	}
	k.FieldManagers = map[string]*apply.Manager{}
	for _, v := range frobber.Versions {
		k.Schemas[v] = frobber.Schema(v)
		if fm, err := apply.ForSchema(frobber.GVK(v), frobber.Schema(v)); err == nil {
			k.FieldManagers[v] = fm
		}
	}
	return k
}
