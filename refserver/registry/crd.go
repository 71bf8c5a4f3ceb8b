package registry

import (
	"context"
	"encoding/json"
	"fmt"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/apply"
	"github.com/apiconform/apiconform/refserver/storage"
)

const crdGroup = "apiextensions.k8s.io"

// crdKind is the strategy of CustomResourceDefinition; writing one starts
// (or stops) serving the kind it defines.
func crdKind(r *Registry) *Kind {
	return &Kind{
		Group: crdGroup, Versions: []string{"v1"}, Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
		Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList", ShortNames: []string{"crd", "crds"},
		Categories: []string{"api-extensions"}, StatusSubresource: true, TrackGeneration: true,
		// The Go type decides unknown fields under field validation and the
		// strategic merge patch rules, as for kube-apiserver; TypedFor rather
		// than Typed keeps the schema-based field manager.
		TypedFor:       func(string) func() any { return func() any { return &apiextensionsv1.CustomResourceDefinition{} } },
		StrategicMerge: apiextensionsv1.CustomResourceDefinition{},
		Prepare: func(obj, old Object) {
			spec := mapOf(obj["spec"])
			if spec == nil {
				return
			}
			names := mapOf(spec["names"])
			if names != nil {
				if str(names["singular"]) == "" {
					names["singular"] = strings.ToLower(str(names["kind"]))
				}
				if str(names["listKind"]) == "" && str(names["kind"]) != "" {
					names["listKind"] = str(names["kind"]) + "List"
				}
			}
			if _, ok := spec["conversion"]; !ok {
				spec["conversion"] = map[string]any{"strategy": "None"}
			}
			obj["status"] = map[string]any{
				"acceptedNames": names,
				"conditions": []any{
					map[string]any{"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": r.now()},
					map[string]any{"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": r.now()},
				},
				"storedVersions": []any{storageVersionOf(spec)},
			}
		},
		Validate: func(obj, old Object) field.ErrorList { return validateCRD(r, obj, old) },
		AfterWrite: func(obj, old Object) {
			r.syncCRD(obj, old)
		},
		OnStart: func(ctx context.Context) error { return r.loadCRDs(ctx) },
		Columns: []Column{{Name: "Created At", Type: "date", Cell: func(o Object) any { return str(meta(o)["creationTimestamp"]) }}},
	}
}

func storageVersionOf(spec map[string]any) string {
	for _, v := range sliceOf(spec["versions"]) {
		if boolOf(mapOf(v)["storage"]) {
			return str(mapOf(v)["name"])
		}
	}
	return ""
}

func validateCRD(r *Registry, obj, old Object) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	spec := mapOf(obj["spec"])
	group := str(spec["group"])
	names := mapOf(spec["names"])
	plural := str(names["plural"])
	if group == "" {
		errs = append(errs, field.Required(sp.Child("group"), ""))
	} else if len(strings.Split(group, ".")) < 2 {
		errs = append(errs, field.Invalid(sp.Child("group"), group, "should be a domain with at least one dot"))
	}
	if name := str(meta(obj)["name"]); name != plural+"."+group {
		errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), name, "must be spec.names.plural+\".\"+spec.group"))
	}
	for _, f := range []string{"plural", "singular", "kind", "listKind"} {
		v := str(names[f])
		if v == "" {
			errs = append(errs, field.Required(sp.Child("names", f), ""))
			continue
		}
		if f == "plural" || f == "singular" {
			for _, msg := range utilvalidation.IsDNS1035Label(v) {
				errs = append(errs, field.Invalid(sp.Child("names", f), v, msg))
			}
		}
	}
	switch str(spec["scope"]) {
	case "Namespaced", "Cluster":
	default:
		errs = append(errs, field.NotSupported(sp.Child("scope"), spec["scope"], []string{"Cluster", "Namespaced"}))
	}
	versions := sliceOf(spec["versions"])
	if len(versions) == 0 {
		errs = append(errs, field.Invalid(sp.Child("versions"), versions, "must have exactly one version marked as storage version"))
	}
	storage := 0
	for i, v := range versions {
		vm := mapOf(v)
		vp := sp.Child("versions").Index(i)
		if boolOf(vm["storage"]) {
			storage++
		}
		for _, msg := range utilvalidation.IsDNS1035Label(str(vm["name"])) {
			errs = append(errs, field.Invalid(vp.Child("name"), vm["name"], msg))
		}
		sch := mapOf(mapOf(vm["schema"])["openAPIV3Schema"])
		if sch == nil {
			errs = append(errs, field.Required(vp.Child("schema", "openAPIV3Schema"), "schemas are required"))
			continue
		}
		if _, err := compileSchema(sch); err != nil {
			errs = append(errs, field.Invalid(vp.Child("schema", "openAPIV3Schema"), "", err.Error()))
		}
	}
	if len(versions) > 0 && storage != 1 {
		errs = append(errs, field.Invalid(sp.Child("versions"), versions, "must have exactly one version marked as storage version"))
	}
	if old != nil {
		os := mapOf(old["spec"])
		if str(os["group"]) != group {
			errs = append(errs, field.Invalid(sp.Child("group"), group, "field is immutable"))
		}
		if str(mapOf(os["names"])["plural"]) != plural {
			errs = append(errs, field.Invalid(sp.Child("names", "plural"), plural, "field is immutable"))
		}
		if str(os["scope"]) != str(spec["scope"]) {
			errs = append(errs, field.Invalid(sp.Child("scope"), spec["scope"], "field is immutable"))
		}
	} else if k := r.Lookup(group, plural); k != nil && group != "" && plural != "" {
		errs = append(errs, field.Invalid(sp.Child("names", "plural"), plural, "is already in use"))
	}
	return errs
}

// loadCRDs serves the kinds of the CRDs found in the store (after a restart).
func (r *Registry) loadCRDs(ctx context.Context) error {
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: prefixOf(r.Lookup(crdGroup, "customresourcedefinitions"), "")})
	if err != nil {
		return err
	}
	for _, kv := range res.Items {
		var obj Object
		if err := json.Unmarshal(kv.Value, &obj); err == nil {
			r.syncCRD(obj, nil)
		}
	}
	return nil
}

// syncCRD starts, updates or stops serving the kind a CRD defines.
func (r *Registry) syncCRD(obj, old Object) {
	if obj == nil {
		if old == nil {
			return
		}
		spec := mapOf(old["spec"])
		group, plural := str(spec["group"]), str(mapOf(spec["names"])["plural"])
		if k := r.Lookup(group, plural); k != nil {
			r.Unregister(group, plural)
			r.dropAll(k)
		}
		return
	}
	if str(meta(obj)["deletionTimestamp"]) != "" {
		return
	}
	k, err := kindFromCRD(obj)
	if err != nil {
		return
	}
	r.Register(k)
}

// dropAll removes every stored object of k.
func (r *Registry) dropAll(k *Kind) {
	ctx := context.Background()
	res, err := r.store.List(ctx, storage.ListOptions{Prefix: basePrefix(k)})
	if err != nil {
		return
	}
	for _, kv := range res.Items {
		_, _, _ = r.store.Delete(ctx, kv.Key, 0)
	}
}

// crdVersion is what a CR kind needs from one CRD version.
type crdVersion struct {
	name    string
	raw     map[string]any // the openAPIV3Schema
	schema  *schemaNode
	compile *openapi3.Schema
	columns []Column
}

func kindFromCRD(obj Object) (*Kind, error) {
	spec := mapOf(obj["spec"])
	names := mapOf(spec["names"])
	k := &Kind{
		Group: str(spec["group"]), Resource: str(names["plural"]), Singular: str(names["singular"]),
		Kind: str(names["kind"]), ListKind: str(names["listKind"]), Namespaced: str(spec["scope"]) == "Namespaced",
		TrackGeneration: true, DeleteReturnsStatus: true,
	}
	for _, s := range sliceOf(names["shortNames"]) {
		k.ShortNames = append(k.ShortNames, str(s))
	}
	for _, s := range sliceOf(names["categories"]) {
		k.Categories = append(k.Categories, str(s))
	}
	var versions []crdVersion
	var storageV crdVersion
	for _, v := range sliceOf(spec["versions"]) {
		vm := mapOf(v)
		raw := mapOf(mapOf(vm["schema"])["openAPIV3Schema"])
		cv := crdVersion{name: str(vm["name"]), raw: raw, schema: parseSchemaNode(raw)}
		if k.Schemas == nil {
			k.Schemas = map[string]map[string]any{}
		}
		k.Schemas[cv.name] = raw
		if fm, err := apply.ForSchema(schema.GroupVersionKind{Group: k.Group, Version: cv.name, Kind: k.Kind}, raw); err == nil {
			if k.FieldManagers == nil {
				k.FieldManagers = map[string]*apply.Manager{}
			}
			k.FieldManagers[cv.name] = fm
		}
		compiled, err := compileSchema(raw)
		if err != nil {
			return nil, err
		}
		cv.compile = compiled
		for _, c := range sliceOf(vm["additionalPrinterColumns"]) {
			cm := mapOf(c)
			path := str(cm["jsonPath"])
			cv.columns = append(cv.columns, Column{Name: str(cm["name"]), Type: str(cm["type"]), Format: str(cm["format"]),
				Description: str(cm["description"]), Priority: int32(toInt(cm["priority"])),
				Cell: func(o Object) any { return jsonPathValue(o, path) }})
		}
		if boolOf(vm["storage"]) {
			storageV = cv
			sub := mapOf(vm["subresources"])
			if _, ok := sub["status"]; ok {
				k.StatusSubresource = true
			}
			if sc := mapOf(sub["scale"]); sc != nil {
				k.Scale = &ScaleSpec{SpecReplicasPath: str(sc["specReplicasPath"]), StatusReplicasPath: str(sc["statusReplicasPath"]), LabelSelectorPath: str(sc["labelSelectorPath"])}
			}
		}
		if served, ok := vm["served"].(bool); !ok || served {
			versions = append(versions, cv)
		}
	}
	if storageV.name == "" {
		return nil, fmt.Errorf("no storage version")
	}
	// The storage version leads; the rest keep their order.
	k.Versions = []string{storageV.name}
	for _, v := range versions {
		if v.name != storageV.name {
			k.Versions = append(k.Versions, v.name)
		}
	}
	k.Columns = storageV.columns
	if len(k.Columns) == 0 {
		// kube-apiserver's default for custom resources: an Age column of type date.
		k.Columns = []Column{{Name: "Age", Type: "date", Description: AgeColumn.Description,
			Cell: func(o Object) any { return str(meta(o)["creationTimestamp"]) }}}
	}
	sch := storageV
	k.Prepare = func(o, old Object) {
		sch.schema.applyDefaults(o, true)
	}
	k.Validate = func(o, old Object) field.ErrorList { return validateCustom(sch.raw, sch.compile, o) }
	return k, nil
}

// jsonPathValue evaluates a simple JSONPath like .spec.replicas.
func jsonPathValue(o Object, path string) any {
	var cur any = o
	for _, part := range strings.Split(strings.TrimPrefix(path, "."), ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}
