package lint

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

// registerMore registers the conventions that kube-api-linter also checks on Go
// types and that a schema shows as well.
func registerMore() {
	register(ConditionsShape, openapi.Warning, "Typical status properties",
		"Conditions are a list keyed by type (x-kubernetes-list-type: map, x-kubernetes-list-map-keys: [type]) whose items carry lastTransitionTime, reason, message and observedGeneration, like metav1.Condition.")
	register(ListType, openapi.Warning, "Lists of named subobjects preferred over maps / Strategic Merge Patch",
		"Every list states how it merges (x-kubernetes-list-type atomic, set or map); a list of named subobjects is a map keyed by its name, and a map list names its keys.")
	register(CRDBounds, openapi.Warning, "Validation (CustomResourceDefinitions)",
		"Strings carry maxLength and arrays maxItems (or an enum or format that bounds them), so validation and CEL cost stay bounded.")
	register(CRDNumericBounds, openapi.Info, "Validation (CustomResourceDefinitions)",
		"Numbers state their valid range with minimum and maximum.")
	register(PhaseField, openapi.Warning, "Typical status properties",
		"Phase is deprecated: status reports conditions, not a single phase state machine.")
	register(NameReference, openapi.Info, "Naming conventions / Object references",
		"A field holding the name of another object is called fooName (the kind, then Name).")
	register(EnumCamelCase, openapi.Warning, "Constants",
		"Enumerated string values are CamelCase constants starting with an upper-case letter (ClusterFirst, IfNotPresent).")
	register(RequiredDefault, openapi.Warning, "Optional vs. Required",
		"A required field must be set by the client; a default only makes sense on an optional field.")
	register(StatusSubresource, openapi.Warning, "Spec and Status",
		"A resource with a status has the /status subresource, so that status is written separately from spec.")
	register(Nullable, openapi.Warning, "Optional vs. Required",
		"Optional fields are omitted when unset, not null; nullable fields make apply and patches ambiguous.")
	register(FreeFormObject, openapi.Warning, "Primitive types",
		"Fields have declared types; objects that keep unknown fields (x-kubernetes-preserve-unknown-fields) escape validation, pruning and apply.")
	register(Quantity, openapi.Info, "Naming conventions / Units",
		"Resource amounts (cpu, memory, storage) are resource.Quantity values, not plain integers or strings.")
	register(UnionDiscriminator, openapi.Info, "Unions",
		"A union of mutually exclusive fields has a discriminator: a string field whose values name the member set.")
}

// extension reads x- fields written on the property or beside its $ref.
func (f *field) extension(key string) any {
	if f.raw != nil {
		if v, ok := f.raw.Extensions[key]; ok {
			return v
		}
		if f.raw.Value != nil {
			if v, ok := f.raw.Value.Extensions[key]; ok {
				return v
			}
		}
	}
	if f.s != nil {
		return f.s.Extensions[key]
	}
	return nil
}

func (f *field) extString(key string) string {
	s, _ := f.extension(key).(string)
	return s
}

func (f *field) extList(key string) []string {
	list, _ := f.extension(key).([]any)
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// namedSubobject: list items that are objects identified by a name field.
func namedSubobject(item *openapi3.Schema) bool {
	return item != nil && item.Properties["name"] != nil && is(resolve(item.Properties["name"]), "string")
}

// checkConditionsShape: conditions-shape.
func checkConditionsShape(f *field) {
	if f.name != "conditions" || !is(f.s, "array") || f.s.Items == nil {
		return
	}
	item := resolve(f.s.Items)
	if item == nil || len(item.Properties) == 0 {
		return
	}
	var problems []string
	if f.extString("x-kubernetes-list-type") != "map" || !slices.Equal(f.extList("x-kubernetes-list-map-keys"), []string{"type"}) {
		problems = append(problems, "not a map list keyed by type")
	}
	var missing []string
	for _, want := range []string{"lastTransitionTime", "reason", "message", "observedGeneration"} {
		if item.Properties[want] == nil {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "items lack "+strings.Join(missing, ", "))
	}
	if len(problems) > 0 {
		f.report(ConditionsShape, "conditions %s", strings.Join(problems, "; "))
	}
}

// checkListType: list-type.
func checkListType(f *field) {
	if !is(f.s, "array") || f.typeMeta || (f.ptr == "/properties/items" && f.l.scope.objects[f.def] && isListKind(f.l.doc, f.def)) {
		return
	}
	item := resolve(f.s.Items)
	switch lt := f.extString("x-kubernetes-list-type"); {
	case lt == "" && namedSubobject(item):
		f.report(ListType, "list %q of named subobjects has no x-kubernetes-list-type (want map keyed by name)", f.name)
	case lt == "":
		f.report(ListType, "list %q has no x-kubernetes-list-type (atomic, set or map)", f.name)
	case lt == "map" && len(f.extList("x-kubernetes-list-map-keys")) == 0:
		f.report(ListType, "map list %q names no x-kubernetes-list-map-keys", f.name)
	case lt == "set" && item != nil && (is(item, "object") || len(item.Properties) > 0):
		f.report(ListType, "set list %q holds objects; a set holds scalars (use map with keys)", f.name)
	}
}

func isListKind(d *openapi.Document, def string) bool {
	for _, k := range d.Kinds[def] {
		if strings.HasSuffix(k.Kind, "List") {
			return true
		}
	}
	return false
}

// boundingFormats bound a string as well as maxLength does.
var boundingFormats = map[string]bool{"date-time": true, "date": true, "duration": true, "int-or-string": true, "uuid": true, "byte": false}

// checkCRDBounds: crd-bounded and crd-numeric-bounds (CRD schemas only, where the
// API server validates against the schema and estimates CEL cost from it).
func checkCRDBounds(f *field) {
	if !f.crd || f.typeMeta {
		return
	}
	s := f.s
	switch {
	case is(s, "string") && s.MaxLength == nil && len(s.Enum) == 0 && !boundingFormats[s.Format] && f.extension("x-kubernetes-int-or-string") == nil:
		f.report(CRDBounds, "string %q has no maxLength", f.name)
	case is(s, "array") && s.MaxItems == nil:
		f.report(CRDBounds, "array %q has no maxItems", f.name)
	case (is(s, "integer") || is(s, "number")) && (s.Min == nil || s.Max == nil) && len(s.Enum) == 0:
		missing := "minimum and maximum"
		if s.Min != nil {
			missing = "maximum"
		} else if s.Max != nil {
			missing = "minimum"
		}
		f.report(CRDNumericBounds, "number %q has no %s", f.name, missing)
	}
}

// checkPhase: phase-field.
func checkPhase(f *field) {
	if f.name == "phase" && !is(f.s, "object") && !is(f.s, "array") {
		f.report(PhaseField, "field %q: report conditions instead of a phase", f.name)
	}
}

// nameOfRE: a description starting "The name of the Secret ..." (the kind capitalized, as the docs write kinds).
var nameOfRE = regexp.MustCompile(`^\s*(?:[Tt]he\s+)?[Nn]ame\s+of\s+(?:the|a|an)\s+([A-Z][A-Za-z]+)\b`)

// checkNameReference: name-reference.
func checkNameReference(f *field) {
	if !is(f.s, "string") || f.name == "name" || strings.HasSuffix(f.name, "Name") || strings.HasSuffix(f.name, "Names") {
		return
	}
	desc := f.s.Description
	if f.raw != nil && f.raw.Value != nil && f.raw.Value.Description != "" {
		desc = f.raw.Value.Description
	}
	m := nameOfRE.FindStringSubmatch(desc)
	if m == nil {
		return
	}
	// The named thing must be a kind: of this document, or any kind a CRD refers to.
	if f.crd || len(f.l.doc.KindVersions(m[1])) > 0 {
		f.report(NameReference, "string %q holds the name of a %s but is not named %sName", f.name, m[1], lowerFirst(m[1]))
	}
}

var camelValueRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)

// checkEnumCase: enum-camelcase.
func checkEnumCase(f *field) {
	for s := f.s; s != nil; s = itemsOf(s) {
		if !is(s, "string") || len(s.Enum) == 0 {
			continue
		}
		var bad []string
		for _, v := range s.Enum {
			if str, ok := v.(string); ok && str != "" && !camelValueRE.MatchString(str) {
				bad = append(bad, fmt.Sprintf("%q", str))
			}
		}
		if len(bad) > 0 {
			f.report(EnumCamelCase, "enum values of %q are not CamelCase: %s", f.name, strings.Join(bad, ", "))
		}
		return
	}
}

// checkRequiredDefault: required-with-default.
func checkRequiredDefault(f *field) {
	if f.parent == nil || !slices.Contains(f.parent.Required, f.name) {
		return
	}
	d := f.s.Default
	if f.raw != nil && f.raw.Value != nil && f.raw.Value.Default != nil {
		d = f.raw.Value.Default
	}
	// Built-in OpenAPI v3 writes the zero value ("", 0, false, {}) as the default of
	// every non-pointer field: what an absent field decodes to, not a chosen default.
	if d == nil || (!f.crd && openapi.IsZeroValue(d)) {
		return
	}
	f.report(RequiredDefault, "required field %q has a default (%s)", f.name, openapi.JSONString(d))
}

// checkNullable: nullable.
func checkNullable(f *field) {
	if f.s.Nullable || (f.raw != nil && f.raw.Value != nil && f.raw.Value.Nullable) {
		f.report(Nullable, "field %q is nullable", f.name)
	}
}

// checkFreeForm: free-form-object. Only x-kubernetes-preserve-unknown-fields marks
// a free-form object: a Swagger object without properties may be an empty struct.
func checkFreeForm(f *field) {
	if f.typeMeta || f.extension("x-kubernetes-embedded-resource") == true {
		return
	}
	if f.extension("x-kubernetes-preserve-unknown-fields") == true {
		f.report(FreeFormObject, "field %q keeps unknown fields (x-kubernetes-preserve-unknown-fields)", f.name)
	}
}

var amountRE = regexp.MustCompile(`^(cpu|memory|storage|ephemeralStorage)$|(CPU|Cpu|Memory|Storage)$`)

// checkQuantity: quantity.
func checkQuantity(f *field) {
	if !amountRE.MatchString(f.name) || strings.HasSuffix(f.ref, ".Quantity") || f.extension("x-kubernetes-int-or-string") != nil {
		return
	}
	if is(f.s, "integer") || is(f.s, "number") || (is(f.s, "string") && f.s.Format != "quantity") {
		f.report(Quantity, "resource amount %q is a plain %s, not a quantity", f.name, typeOf(f.s))
	}
}

// checkUnion: union-discriminator. A union is written as oneOf/anyOf alternatives
// that each require one member field; its discriminator is a string enum field
// whose values name the members.
func checkUnion(f *field) {
	s := f.s
	if s == nil || len(s.Properties) == 0 {
		return
	}
	var members []string
	for _, alt := range append(append(openapi3.SchemaRefs{}, s.OneOf...), s.AnyOf...) {
		if alt != nil && alt.Value != nil && len(alt.Value.Required) == 1 && s.Properties[alt.Value.Required[0]] != nil {
			members = append(members, alt.Value.Required[0])
		}
	}
	if len(members) < 2 {
		return
	}
	for _, p := range s.Properties {
		v := resolve(p)
		if !is(v, "string") || len(v.Enum) == 0 {
			continue
		}
		named := 0
		for _, m := range members {
			for _, e := range v.Enum {
				if str, ok := e.(string); ok && strings.EqualFold(str, m) {
					named++
					break
				}
			}
		}
		if named == len(members) {
			return
		}
	}
	f.report(UnionDiscriminator, "union of %s in %q has no discriminator field", strings.Join(members, ", "), f.name)
}

// checkStatusSubresource: status-subresource (CRD versions).
func checkStatusSubresource(k *kind) {
	if k.l.doc.Format != openapi.FormatCRD || !k.has("status") {
		return
	}
	g := k.gvks[0]
	for _, v := range k.l.doc.CRDVersions[g.Group+"/"+g.Kind] {
		if v.Version == g.Version && !slices.Contains(v.Subresources, "status") {
			k.l.add(StatusSubresource, k.def, "/properties/status", "version %s of %s has a status field but no status subresource", g.Version, g.Kind)
		}
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
