// Package lint checks one API description against the Kubernetes API
// conventions that can be read from a schema: field naming, number types,
// list and object shape, conditions, durations, references, maps and times.
package lint

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

// Rule IDs.
const (
	FieldNameCamelCase = "field-name-camelcase"
	NoFloatInSpec      = "no-float-in-spec"
	IntegerFormat      = "integer-format"
	ListKind           = "list-kind"
	ObjectTypeMeta     = "object-typemeta-metadata"
	SpecStatusSplit    = "spec-status-split"
	ConditionFields    = "condition-type-status"
	DurationSeconds    = "duration-seconds"
	ReferenceNaming    = "reference-naming"
	NoMapOfSubobjects  = "no-map-of-subobjects"
	BoolPolicy         = "bool-looks-like-policy"
	TimeRFC3339        = "time-rfc3339"
	TimeFieldName      = "time-field-name"
	ConditionsShape    = "conditions-shape"
	ListType           = "list-type"
	CRDBounds          = "crd-bounded"
	CRDNumericBounds   = "crd-numeric-bounds"
	PhaseField         = "phase-field"
	NameReference      = "name-reference"
	EnumCamelCase      = "enum-camelcase"
	RequiredDefault    = "required-with-default"
	StatusSubresource  = "status-subresource"
	Nullable           = "nullable"
	FreeFormObject     = "free-form-object"
	Quantity           = "quantity"
	UnionDiscriminator = "union-discriminator"
)

const conv = "API Conventions § "

var registry = map[string]openapi.Rule{}

// fieldRule checks one field (a property) of an object schema.
type fieldRule func(f *field)

// kindRule checks one definition that declares a kind.
type kindRule func(k *kind)

var fieldRules []fieldRule
var kindRules []kindRule

func register(id string, level openapi.Level, section, statement string) {
	registry[id] = openapi.Rule{ID: id, Level: level, Source: conv + section, Statement: statement, AppliesTo: appliesTo[id]}
}

// Where each rule looks. API objects are the kinds a resource endpoint serves
// (every CRD kind); discovery documents, option kinds, watch events and
// definitions mirroring an external format (JSON Schema) are not checked.
const (
	inObjects = "fields of API objects and the types they use"
)

var appliesTo = map[string]string{
	FieldNameCamelCase: inObjects,
	NoFloatInSpec:      inObjects + ", outside status",
	IntegerFormat:      inObjects,
	ListKind:           "kinds served by resource endpoints",
	ObjectTypeMeta:     "kinds served by resource endpoints",
	SpecStatusSplit:    "kinds served by resource endpoints",
	ConditionFields:    "fields named conditions in API objects",
	DurationSeconds:    "integer and string fields of API objects whose name or format says duration",
	ReferenceNaming:    "fields of API objects holding an object reference",
	NoMapOfSubobjects:  "map fields of API objects",
	BoolPolicy:         "boolean fields of API objects",
	TimeRFC3339:        "fields of API objects named like a time",
	TimeFieldName:      "date-time fields of API objects",
	ConditionsShape:    "fields named conditions in API objects",
	ListType:           "array fields of API objects (not a list kind's items)",
	CRDBounds:          "string and array fields of CRD schemas",
	CRDNumericBounds:   "integer and number fields of CRD schemas",
	PhaseField:         "fields named phase in API objects",
	NameReference:      "string fields of API objects described as the name of another object",
	EnumCamelCase:      "string enum values in API objects",
	RequiredDefault:    "required fields of API objects",
	StatusSubresource:  "CRD versions whose schema has a status field",
	Nullable:           "fields of API objects",
	FreeFormObject:     "object fields of API objects",
	Quantity:           "scalar fields of API objects named for a resource amount (cpu, memory, storage)",
	UnionDiscriminator: "objects in API objects whose fields form a union (oneOf/anyOf of required members)",
}

func init() {
	register(FieldNameCamelCase, openapi.Breaking, "Naming conventions",
		"JSON field names must be camelCase, with no underscores nor dashes.")
	register(NoFloatInSpec, openapi.Breaking, "Primitive types",
		"Avoid floating-point values as much as possible, and never use them in spec.")
	register(IntegerFormat, openapi.Breaking, "Primitive types",
		"Public integer fields must be int32 or int64; do not use unsigned integers.")
	register(ListKind, openapi.Breaking, "Resources / Lists and Simple kinds",
		"The name of a list kind must end with \"List\" and lists use the required \"items\" field; any kind with an \"items\" field must be a list kind.")
	register(ObjectTypeMeta, openapi.Breaking, "Objects / Metadata",
		"Every object kind carries apiVersion and kind and has its metadata in a nested object field called \"metadata\".")
	register(SpecStatusSplit, openapi.Warning, "Spec and Status",
		"Objects that contain both spec and status should not contain additional top-level fields other than the standard metadata fields.")
	register(ConditionFields, openapi.Breaking, "Typical status properties",
		"Conditions are a list whose items must contain at least type and status fields.")
	register(DurationSeconds, openapi.Warning, "Naming conventions / Units",
		"Units must be explicit in the field name; durations use the fooSeconds convention (fooPeriodSeconds, fooTimeoutSeconds, fooDeadlineSeconds).")
	register(ReferenceNaming, openapi.Warning, "Naming conventions / Object references",
		"A field referring to an object of kind Foo by name is called fooName; by ObjectReference (or a subset of it) fooRef.")
	register(NoMapOfSubobjects, openapi.Warning, "Lists of named subobjects preferred over maps",
		"There are no maps of subobjects in API objects; use a list of subobjects with name fields (pure maps such as labels, annotations and data excepted).")
	register(BoolPolicy, openapi.Info, "Primitive types",
		"Think twice about bool fields: options that may grow should be a string policy type (e.g. TerminationMessagePolicy).")
	register(TimeRFC3339, openapi.Breaking, "Objects / Metadata",
		"Times (creationTimestamp, deletionTimestamp, ...) are strings holding an RFC 3339 date and time (format date-time).")
	register(TimeFieldName, openapi.Info, "Naming conventions",
		"The name of a field that specifies the time at which something occurs should be called somethingTime; do not use stamp (e.g. creationTimestamp).")
	registerMore()
	fieldRules = []fieldRule{checkFieldName, checkFloat, checkInteger, checkDuration, checkReference, checkMap, checkBool, checkTime, checkConditions,
		checkConditionsShape, checkListType, checkCRDBounds, checkPhase, checkNameReference, checkEnumCase, checkRequiredDefault,
		checkNullable, checkFreeForm, checkQuantity, checkUnion}
	kindRules = []kindRule{checkListKind, checkTypeMeta, checkSpecStatus, checkStatusSubresource}
}

// Rules lists the lint rules sorted by ID.
func Rules() []openapi.Rule {
	out := make([]openapi.Rule, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

type linter struct {
	doc      *openapi.Document
	scope    *scope
	findings []openapi.Finding
}

// field is one property with its resolved schema and where it sits.
type field struct {
	l      *linter
	def    string
	ptr    string
	name   string
	ref    string // the definition the property names, if any
	s      *openapi3.Schema
	raw    *openapi3.SchemaRef // the property as written (extensions beside a $ref live here)
	parent *openapi3.Schema    // the object holding the property
	status bool                // under a kind's status, or in a definition reached only through status
	crd    bool                // in a CRD schema (the API server enforces it as written)
	// typeMeta: a kind's own apiVersion, kind or metadata, whose shape the API machinery fixes.
	typeMeta bool
}

type kind struct {
	l    *linter
	def  string
	gvks []openapi.GVK
	s    *openapi3.Schema
}

func (l *linter) add(rule, def, ptr, format string, args ...any) {
	r := registry[rule]
	l.findings = append(l.findings, openapi.Finding{Rule: rule, Level: r.Level, Definition: def, Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

func (f *field) report(rule, format string, args ...any) {
	f.l.add(rule, f.def, f.ptr, format, args...)
}

// Lint checks every definition of d, including those reachable from no path.
func Lint(d *openapi.Document) *openapi.Report {
	l := &linter{doc: d, scope: newScope(d)}
	for _, name := range d.Names {
		if !l.scope.checked[name] {
			continue // not an API object, nor used by one (discovery, options, JSON Schema)
		}
		root := d.Schemas[name]
		statusDef := d.StatusOnly(name)
		isKind := l.scope.objects[name]
		if isKind && root.Value != nil {
			k := &kind{l: l, def: name, gvks: d.Kinds[name], s: root.Value}
			for _, rule := range kindRules {
				rule(k)
			}
		}
		openapi.WalkInline(root, "", func(ptr string, s *openapi3.SchemaRef) bool {
			if s.Ref != "" || s.Value == nil {
				return false
			}
			for _, pname := range sortedNames(s.Value.Properties) {
				ps := s.Value.Properties[pname]
				childPtr := ptr + "/properties/" + openapi.EscapePointer(pname)
				f := &field{l: l, def: name, ptr: childPtr, name: pname, ref: openapi.EffectiveRef(ps), s: resolve(ps), raw: ps, parent: s.Value,
					status: statusDef || (isKind && openapi.IsStatusPointer(childPtr)), crd: d.Format == openapi.FormatCRD}
				if isKind && ptr == "" && (pname == "apiVersion" || pname == "kind" || pname == "metadata") {
					f.typeMeta = true
				}
				if f.s == nil {
					continue
				}
				for _, rule := range fieldRules {
					rule(f)
				}
			}
			return true
		})
	}
	r := &openapi.Report{Tool: "lint", Inputs: []string{d.Source}, Rules: Rules(), Findings: l.findings}
	for i := range r.Findings {
		reach := d.ReachedBy(r.Findings[i].Definition)
		r.Findings[i].Kinds, r.Findings[i].Operations = reach.Kinds, reach.Operations
	}
	r.Sort()
	return r
}

func sortedNames(m openapi3.Schemas) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func resolve(s *openapi3.SchemaRef) *openapi3.Schema {
	if s == nil || s.Value == nil {
		return nil
	}
	if s.Ref == "" && openapi.EffectiveRef(s) != "" {
		return s.Value.AllOf[0].Value
	}
	return s.Value
}

func is(s *openapi3.Schema, t string) bool { return s != nil && s.Type != nil && s.Type.Is(t) }

var camelRE = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)

// checkFieldName: field-name-camelcase.
func checkFieldName(f *field) {
	if !camelRE.MatchString(f.name) {
		f.report(FieldNameCamelCase, "field %q is not camelCase (letters and digits, lower-case first)", f.name)
	}
}

// checkFloat: no-float-in-spec (status may report floats; the rule forbids them in spec).
func checkFloat(f *field) {
	if f.status {
		return
	}
	for s, where := f.s, ""; s != nil; s, where = itemsOf(s), where+" items" {
		if is(s, "number") {
			format := s.Format
			if format == "" {
				format = "number"
			}
			f.report(NoFloatInSpec, "field %q%s is a floating-point %s outside status", f.name, where, format)
			return
		}
	}
}

func itemsOf(s *openapi3.Schema) *openapi3.Schema {
	if is(s, "array") && s.Items != nil {
		return s.Items.Value
	}
	return nil
}

// checkInteger: integer-format.
func checkInteger(f *field) {
	for s := f.s; s != nil; s = itemsOf(s) {
		if is(s, "integer") && s.Format != "int32" && s.Format != "int64" {
			if s.Format == "" {
				f.report(IntegerFormat, "integer field %q has no int32/int64 format", f.name)
			} else {
				f.report(IntegerFormat, "integer field %q has format %q (want int32 or int64, never unsigned)", f.name, s.Format)
			}
			return
		}
	}
}

var durationWordRE = regexp.MustCompile(`(?i)(timeout|period|interval|duration|delay|deadline|ttl|grace|backoff)`)
var unitRE = regexp.MustCompile(`(Seconds|Millis|Milliseconds|Minutes|Hours|Nanoseconds|Count|Limit|Percent)`)

// checkDuration: duration-seconds.
func checkDuration(f *field) {
	switch {
	case is(f.s, "string") && (f.s.Format == "duration" || durationSuffixRE.MatchString(f.name)):
		f.report(DurationSeconds, "duration field %q is a string; use an integer fooSeconds", f.name)
	case !is(f.s, "integer") || !durationWordRE.MatchString(f.name) || unitRE.MatchString(f.name):
	default:
		f.report(DurationSeconds, "integer duration field %q does not name its unit (fooSeconds)", f.name)
	}
}

// durationSuffixRE: names that end in a duration word, so a string there holds a duration ("30s").
var durationSuffixRE = regexp.MustCompile(`(Timeout|Duration|Interval|Period|Delay|TTL|Ttl)$|^(timeout|duration|interval|period|delay|ttl)$`)

var refSuffixRE = regexp.MustCompile(`(Ref|Refs)$`)

// referenceFields are ObjectReference's fields; an inline object made only of them
// (with a name) is a reference by shape.
var referenceFields = map[string]bool{"apiVersion": true, "apiGroup": true, "kind": true, "name": true, "namespace": true, "uid": true, "fieldPath": true, "resourceVersion": true}

func isReferenceShape(s *openapi3.Schema) bool {
	if s == nil || s.Properties["name"] == nil {
		return false
	}
	identifies := false
	for p := range s.Properties {
		if !referenceFields[p] {
			return false
		}
		// A bare {name} is a named subobject as much as a reference; a reference
		// also says what it points at (kind, group, namespace or uid).
		identifies = identifies || (p != "name" && p != "fieldPath" && p != "resourceVersion")
	}
	return identifies
}

// checkReference: reference-naming. Fields holding an ObjectReference-like type
// (a *Reference definition, or an inline object of ObjectReference fields) should end in Ref.
func checkReference(f *field) {
	target, s := f.ref, f.s
	if is(s, "array") && s.Items != nil {
		target, s = openapi.EffectiveRef(s.Items), resolve(s.Items)
	}
	short := target[strings.LastIndex(target, ".")+1:]
	what := ""
	switch {
	case target != "" && strings.HasSuffix(short, "Reference"):
		what = "a " + short
	case target == "" && isReferenceShape(s):
		what = "an object reference (" + strings.Join(sortedNames(s.Properties), ", ") + ")"
	default:
		return
	}
	if !refSuffixRE.MatchString(f.name) {
		f.report(ReferenceNaming, "field %q holds %s but is not named fooRef", f.name, what)
	}
}

// checkMap: no-map-of-subobjects.
func checkMap(f *field) {
	if !is(f.s, "object") || f.s.AdditionalProperties.Schema == nil {
		return
	}
	v := resolve(f.s.AdditionalProperties.Schema)
	if v != nil && len(v.Properties) > 0 {
		f.report(NoMapOfSubobjects, "field %q is a map of objects; use a list of named subobjects", f.name)
	}
}

var policyWordRE = regexp.MustCompile(`(Policy|Mode|Strategy|Behavior|Behaviour|Action|Type|Level)$`)

// checkBool: bool-looks-like-policy.
func checkBool(f *field) {
	if is(f.s, "boolean") && policyWordRE.MatchString(f.name) {
		f.report(BoolPolicy, "boolean field %q names a policy or mode; consider a string enum", f.name)
	}
}

// checkTime: time-rfc3339. A field named like a time must be a date-time string;
// a date-time field should be called somethingTime (not ...Timestamp).
func checkTime(f *field) {
	timeLike := f.name == "time" || strings.HasSuffix(f.name, "Time") || strings.HasSuffix(f.name, "Timestamp")
	dateTime := is(f.s, "string") && f.s.Format == "date-time"
	switch {
	case timeLike && !dateTime && !is(f.s, "array") && !is(f.s, "object"):
		f.report(TimeRFC3339, "time field %q is not an RFC 3339 string (type %q, format %q)", f.name, typeOf(f.s), f.s.Format)
	case dateTime && strings.HasSuffix(f.name, "Timestamp"):
		f.report(TimeFieldName, "time field %q should be called somethingTime, not ...Timestamp", f.name)
	case dateTime && !timeLike:
		f.report(TimeFieldName, "time field %q should be called somethingTime", f.name)
	}
}

func typeOf(s *openapi3.Schema) string {
	if s.Type == nil {
		return ""
	}
	return strings.Join(s.Type.Slice(), ",")
}

// checkConditions: condition-type-status.
func checkConditions(f *field) {
	if f.name != "conditions" || !is(f.s, "array") || f.s.Items == nil {
		return
	}
	item := resolve(f.s.Items)
	if item == nil {
		return
	}
	var missing []string
	for _, want := range []string{"type", "status"} {
		if _, ok := item.Properties[want]; !ok {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		f.report(ConditionFields, "conditions items lack %s", strings.Join(missing, " and "))
	}
}

func (k *kind) has(name string) bool { _, ok := k.s.Properties[name]; return ok }

// checkListKind: list-kind.
func checkListKind(k *kind) {
	isList := false
	for _, g := range k.gvks {
		if strings.HasSuffix(g.Kind, "List") {
			isList = true
		}
	}
	items, hasItems := k.s.Properties["items"]
	switch {
	case isList && !hasItems:
		k.l.add(ListKind, k.def, "", "list kind %s has no items field", k.gvks[0].Kind)
	case isList && !is(resolve(items), "array"):
		k.l.add(ListKind, k.def, "/properties/items", "items of list kind %s is not an array", k.gvks[0].Kind)
	case !isList && hasItems:
		k.l.add(ListKind, k.def, "/properties/items", "kind %s has an items field but its name does not end in List", k.gvks[0].Kind)
	}
}

// checkTypeMeta: object-typemeta-metadata.
func checkTypeMeta(k *kind) {
	var missing []string
	for _, want := range []string{"apiVersion", "kind", "metadata"} {
		if !k.has(want) {
			missing = append(missing, want)
		}
	}
	if len(missing) > 0 {
		k.l.add(ObjectTypeMeta, k.def, "", "kind %s lacks %s", k.gvks[0].Kind, strings.Join(missing, ", "))
	}
}

// checkSpecStatus: spec-status-split.
func checkSpecStatus(k *kind) {
	if !k.has("spec") || !k.has("status") {
		return
	}
	for _, name := range sortedNames(k.s.Properties) {
		switch name {
		case "apiVersion", "kind", "metadata", "spec", "status":
			continue
		}
		k.l.add(SpecStatusSplit, k.def, "/properties/"+openapi.EscapePointer(name), "kind %s has spec and status and also a top-level field %q", k.gvks[0].Kind, name)
	}
}
