package compat

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

// pair is one location's old and new schema, handed to every schema check.
type pair struct {
	c          *comparer
	l          loc
	o, n       *openapi3.Schema
	oExt, nExt map[string]any
	// wrapperOnly: both sides name definitions compared on their own; only what
	// the location adds (defaults, validations, extensions) is checked here.
	wrapperOnly bool
}

func (p *pair) report(rule, format string, args ...any) {
	p.c.add(p.l, rule, fmt.Sprintf(format, args...))
}

func (p *pair) reportAt(token, rule, format string, args ...any) {
	p.c.add(p.l.child(token), rule, fmt.Sprintf(format, args...))
}

func (p *pair) ext(old bool) map[string]any {
	if old {
		return p.oExt
	}
	return p.nExt
}

// schemaCheck is one small rule function; structural checks need the whole schema,
// the others also run on ref wrappers.
type schemaCheck struct {
	name       string
	structural bool
	fn         func(p *pair)
}

var schemaChecks = []schemaCheck{
	{"properties", true, checkProperties},
	{"required", true, checkRequired},
	{"type", true, checkType},
	{"format", true, checkFormat},
	{"enum", true, checkEnum},
	{"validation", true, checkValidation},
	{"x-kubernetes-validations", false, checkCELRules},
	{"default", false, checkDefault},
	{"list-semantics", false, checkListSemantics},
	{"extensions", false, checkExtensions},
}

func (c *comparer) runChecks(p *pair) {
	if p.wrapperOnly {
		p.oExt, p.nExt = p.o.Extensions, p.n.Extensions
	}
	for _, chk := range schemaChecks {
		if p.wrapperOnly && chk.structural {
			continue
		}
		chk.fn(p)
	}
}

// checkProperties: field removed or renamed (field-removed).
func checkProperties(p *pair) {
	var removed, added []string
	for name := range p.o.Properties {
		if _, ok := p.n.Properties[name]; !ok {
			removed = append(removed, name)
		}
	}
	for name := range p.n.Properties {
		if _, ok := p.o.Properties[name]; !ok {
			added = append(added, name)
		}
	}
	sort.Strings(removed)
	sort.Strings(added)
	for _, name := range removed {
		msg := fmt.Sprintf("field %q removed", name)
		if len(removed) == 1 && len(added) == 1 && sameShape(p.o.Properties[name], p.n.Properties[added[0]]) {
			msg = fmt.Sprintf("field %q renamed to %q", name, added[0])
		}
		p.reportAt("/properties/"+openapi.EscapePointer(name), FieldRemoved, "%s", msg)
	}
}

func sameShape(a, b *openapi3.SchemaRef) bool {
	if openapi.EffectiveRef(a) != "" || openapi.EffectiveRef(b) != "" {
		return openapi.EffectiveRef(a) == openapi.EffectiveRef(b)
	}
	return a.Value != nil && b.Value != nil && typeString(a.Value) == typeString(b.Value) && a.Value.Format == b.Value.Format
}

// checkRequired: optional field became required, or a new required field (required-added).
func checkRequired(p *pair) {
	was := map[string]bool{}
	for _, r := range p.o.Required {
		was[r] = true
	}
	req := append([]string(nil), p.n.Required...)
	sort.Strings(req)
	for _, r := range req {
		if was[r] {
			continue
		}
		at := p.l.child("/properties/" + openapi.EscapePointer(r))
		if _, existed := p.o.Properties[r]; !existed {
			f := p.c.add(at, RequiredAdded, fmt.Sprintf("new required field %q", r))
			if fc, ok := facts[p.l.def+"#"+r]; ok && fc.kind == "not-enforced" {
				lower(f, openapi.Info, "annotation only: the release's validation does not enforce it ("+fc.why+")")
			}
			continue
		}
		f := p.c.add(at, RequiredAdded, fmt.Sprintf("optional field %q became required", r))
		if why := p.annotationOnly(r); why != "" {
			lower(f, openapi.Info, "annotation only: "+why)
		}
	}
	// A dropped requirement is a relaxation like any other (values that were
	// invalid become valid); a field that went entirely is reported as removed.
	now := map[string]bool{}
	for _, r := range p.n.Required {
		now[r] = true
	}
	for _, r := range sortedSet(was) {
		if _, still := p.n.Properties[r]; !still || now[r] {
			continue
		}
		f := p.c.add(p.l.child("/properties/"+openapi.EscapePointer(r)), ValidationRelaxed, fmt.Sprintf("field %q is no longer required", r))
		switch {
		case describesRequired(p.n.Properties[r]):
			lower(f, openapi.Info, "annotation only: its description still says it is required")
		case p.c.new.Format != openapi.FormatCRD:
			// kube-apiserver validates built-in types in Go code, not against this
			// schema (a CRD's schema is enforced): the annotation alone admits nothing new.
			lower(f, openapi.Warning, "built-in type: validated in code, so the dropped annotation alone makes no request valid; check the release's validation")
		}
	}
}

func typeString(s *openapi3.Schema) string {
	if s.Type == nil {
		return ""
	}
	t := append([]string(nil), s.Type.Slice()...)
	sort.Strings(t)
	return strings.Join(t, ",")
}

// checkType: type changed (type-changed); a type appearing or vanishing tightens or relaxes validation.
func checkType(p *pair) {
	ot, nt := typeString(p.o), typeString(p.n)
	switch {
	case ot == nt:
	case ot == "":
		p.report(ValidationTightened, "type constrained to %q", nt)
	case nt == "":
		p.report(ValidationRelaxed, "type %q no longer constrained", ot)
	default:
		p.report(TypeChanged, "type changed from %q to %q", ot, nt)
	}
}

// checkFormat: format changed (format-changed).
func checkFormat(p *pair) {
	if p.o.Format == p.n.Format {
		return
	}
	switch {
	case p.o.Format == "":
		p.report(FormatChanged, "format %q added", p.n.Format)
	case p.n.Format == "":
		p.report(FormatChanged, "format %q removed", p.o.Format)
	default:
		p.report(FormatChanged, "format changed from %q to %q", p.o.Format, p.n.Format)
	}
}

func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// checkEnum: enum values added (enum-value-added) or removed (enum-value-removed).
func checkEnum(p *pair) {
	if len(p.o.Enum) == 0 && len(p.n.Enum) == 0 {
		return
	}
	if len(p.o.Enum) == 0 {
		p.report(ValidationTightened, "enum %s introduced", canonical(p.n.Enum))
		return
	}
	if len(p.n.Enum) == 0 {
		p.report(ValidationRelaxed, "enum %s dropped", canonical(p.o.Enum))
		return
	}
	oldSet, newSet := map[string]bool{}, map[string]bool{}
	for _, v := range p.o.Enum {
		oldSet[canonical(v)] = true
	}
	for _, v := range p.n.Enum {
		newSet[canonical(v)] = true
	}
	for _, v := range sortedSet(newSet) {
		if !oldSet[v] {
			p.report(EnumValueAdded, "enum value %s added", v)
		}
	}
	for _, v := range sortedSet(oldSet) {
		if !newSet[v] {
			p.report(EnumValueRemoved, "enum value %s removed", v)
		}
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkValidation: bounds, pattern, uniqueness, nullability (validation-tightened / validation-relaxed).
func checkValidation(p *pair) {
	upper := func(name string, o, n *uint64) {
		switch {
		case o == nil && n == nil:
		case o == nil:
			p.report(ValidationTightened, "%s %d added", name, *n)
		case n == nil:
			p.report(ValidationRelaxed, "%s %d removed", name, *o)
		case *n < *o:
			p.report(ValidationTightened, "%s lowered from %d to %d", name, *o, *n)
		case *n > *o:
			p.report(ValidationRelaxed, "%s raised from %d to %d", name, *o, *n)
		}
	}
	lower := func(name string, o, n uint64) {
		switch {
		case n > o:
			p.report(ValidationTightened, "%s raised from %d to %d", name, o, n)
		case n < o:
			p.report(ValidationRelaxed, "%s lowered from %d to %d", name, o, n)
		}
	}
	upper("maxLength", p.o.MaxLength, p.n.MaxLength)
	upper("maxItems", p.o.MaxItems, p.n.MaxItems)
	upper("maxProperties", p.o.MaxProps, p.n.MaxProps)
	lower("minLength", p.o.MinLength, p.n.MinLength)
	lower("minItems", p.o.MinItems, p.n.MinItems)
	lower("minProperties", p.o.MinProps, p.n.MinProps)
	bound := func(name string, o, n *float64, tighterIsLower bool) {
		switch {
		case o == nil && n == nil:
		case o == nil:
			p.report(ValidationTightened, "%s %v added", name, *n)
		case n == nil:
			p.report(ValidationRelaxed, "%s %v removed", name, *o)
		case *n != *o:
			dir := "raised"
			if *n < *o {
				dir = "lowered"
			}
			if (*n < *o) == tighterIsLower {
				p.report(ValidationTightened, "%s %s from %v to %v", name, dir, *o, *n)
			} else {
				p.report(ValidationRelaxed, "%s %s from %v to %v", name, dir, *o, *n)
			}
		}
	}
	bound("maximum", p.o.Max, p.n.Max, true)
	bound("minimum", p.o.Min, p.n.Min, false)
	flag := func(name string, o, n bool) {
		switch {
		case !o && n:
			p.report(ValidationTightened, "%s added", name)
		case o && !n:
			p.report(ValidationRelaxed, "%s removed", name)
		}
	}
	flag("exclusiveMaximum", p.o.ExclusiveMax.IsTrue(), p.n.ExclusiveMax.IsTrue())
	flag("exclusiveMinimum", p.o.ExclusiveMin.IsTrue(), p.n.ExclusiveMin.IsTrue())
	flag("uniqueItems", p.o.UniqueItems, p.n.UniqueItems)
	switch {
	case p.o.Pattern == p.n.Pattern:
	case p.o.Pattern == "":
		p.report(ValidationTightened, "pattern %q added", p.n.Pattern)
	case p.n.Pattern == "":
		p.report(ValidationRelaxed, "pattern %q removed", p.o.Pattern)
	default:
		p.report(ValidationTightened, "pattern changed from %q to %q", p.o.Pattern, p.n.Pattern)
	}
	switch {
	case p.o.Nullable && !p.n.Nullable:
		p.report(ValidationTightened, "no longer nullable")
	case !p.o.Nullable && p.n.Nullable:
		p.report(ValidationRelaxed, "became nullable")
	}
	oOpen, nOpen := p.o.AdditionalProperties.Has == nil || *p.o.AdditionalProperties.Has, p.n.AdditionalProperties.Has == nil || *p.n.AdditionalProperties.Has
	switch {
	case oOpen && !nOpen:
		p.report(ValidationTightened, "additionalProperties set to false")
	case !oOpen && nOpen:
		p.report(ValidationRelaxed, "additionalProperties no longer false")
	}
}

// immutableRE matches CEL transition rules that pin a value: self == oldSelf (or a subfield of each).
var immutableRE = regexp.MustCompile(`\bself((?:\.\w+)*)\s*==\s*oldSelf((?:\.\w+)*)|\boldSelf((?:\.\w+)*)\s*==\s*self((?:\.\w+)*)`)

// immutableSubfield returns x for a rule "self.x == oldSelf.x" written on the parent object.
func immutableSubfield(rule string) string {
	m := immutableRE.FindStringSubmatch(rule)
	if m == nil {
		return ""
	}
	a, b := m[1], m[2]
	if a == "" && b == "" {
		a, b = m[3], m[4]
	}
	if a == "" || a != b || strings.Count(a, ".") != 1 {
		return ""
	}
	return a[1:]
}

// IsImmutabilityRule reports whether a CEL rule makes a field immutable.
func IsImmutabilityRule(rule string) bool { return immutableRE.MatchString(rule) }

func celRules(ext map[string]any) map[string]bool {
	out := map[string]bool{}
	list, _ := ext["x-kubernetes-validations"].([]any)
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			if r, ok := m["rule"].(string); ok {
				out[strings.TrimSpace(r)] = true
			}
		}
	}
	return out
}

// checkCELRules: x-kubernetes-validations added (validation-tightened, or
// field-became-immutable for self == oldSelf) or removed (validation-relaxed).
func checkCELRules(p *pair) {
	o, n := celRules(p.ext(true)), celRules(p.ext(false))
	for _, r := range sortedSet(n) {
		if o[r] {
			continue
		}
		if IsImmutabilityRule(r) {
			if sub := immutableSubfield(r); sub != "" && p.n.Properties[sub] != nil {
				p.reportAt("/properties/"+openapi.EscapePointer(sub), FieldBecameImmutable, "transition rule %q on the parent makes field %q immutable", r, sub)
			} else {
				p.report(FieldBecameImmutable, "transition rule %q makes the field immutable", r)
			}
		} else {
			p.report(ValidationTightened, "x-kubernetes-validations rule %q added", r)
		}
	}
	for _, r := range sortedSet(o) {
		if !n[r] {
			p.report(ValidationRelaxed, "x-kubernetes-validations rule %q removed", r)
		}
	}
}

// checkDefault: default changed or removed (default-changed), added to an existing field (default-added).
func checkDefault(p *pair) {
	od, nd := p.o.Default, p.n.Default
	switch {
	case od == nil && nd == nil:
	case od == nil:
		f := p.c.add(p.l, DefaultAdded, fmt.Sprintf("default %s added to an existing field", canonical(nd)))
		if p.c.new.Format != openapi.FormatCRD && openapi.IsZeroValue(nd) {
			// Built-in OpenAPI v3 writes the zero value as the default of non-pointer
			// fields: an absent field decoded to it before the annotation too.
			lower(f, openapi.Info, "the zero value, which an absent non-pointer field of a built-in type always decoded to")
		}
	case nd == nil:
		p.report(DefaultChanged, "default %s removed", canonical(od))
	case canonical(od) != canonical(nd):
		p.report(DefaultChanged, "default changed from %s to %s", canonical(od), canonical(nd))
	}
}

func extString(ext map[string]any, key, unset string) string {
	v, ok := ext[key]
	if !ok || v == nil {
		return unset
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ",")
	}
	return canonical(v)
}

// checkListSemantics: x-kubernetes-list-type / list-map-keys / map-type and the
// strategic-merge-patch strategy and merge key. Absent list-type means atomic,
// absent map-type means granular, absent patch strategy means replace.
func checkListSemantics(p *pair) {
	oe, ne := p.ext(true), p.ext(false)
	// An unset list type means atomic; on non-arrays (byte strings, refs) the
	// generator's "atomic" means nothing, so unset and atomic are the same everywhere.
	for _, x := range []struct{ key, rule, unset string }{
		{"x-kubernetes-list-type", ListTypeChanged, "atomic"},
		{"x-kubernetes-list-map-keys", ListMapKeysChanged, ""},
		{"x-kubernetes-map-type", MapTypeChanged, "granular"},
		{"x-kubernetes-patch-strategy", PatchStrategyChanged, ""},
		{"x-kubernetes-patch-merge-key", PatchMergeKeyChanged, ""},
	} {
		ov, nv := extString(oe, x.key, x.unset), extString(ne, x.key, x.unset)
		if ov == nv {
			continue
		}
		f := p.c.add(p.l, x.rule, fmt.Sprintf("%s changed from %s to %s", x.key, quoteOrUnset(ov), quoteOrUnset(nv)))
		if x.rule == ListMapKeysChanged {
			if why := p.keysExtendedByNewOptionalFields(ov, nv); why != "" {
				lower(f, openapi.Info, why)
			}
		}
	}
}

func quoteOrUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return fmt.Sprintf("%q", s)
}

// handledExtensions are compared by their own rules, or describe the definition rather than the field.
var handledExtensions = map[string]bool{
	"x-kubernetes-validations":        true,
	"x-kubernetes-list-type":          true,
	"x-kubernetes-list-map-keys":      true,
	"x-kubernetes-map-type":           true,
	"x-kubernetes-patch-strategy":     true,
	"x-kubernetes-patch-merge-key":    true,
	"x-kubernetes-group-version-kind": true,
}

// checkExtensions: any other x-kubernetes-* extension changed (extension-changed).
func checkExtensions(p *pair) {
	oe, ne := p.ext(true), p.ext(false)
	keys := map[string]bool{}
	for k := range oe {
		keys[k] = true
	}
	for k := range ne {
		keys[k] = true
	}
	for _, k := range sortedSet(keys) {
		if !strings.HasPrefix(k, "x-kubernetes-") || handledExtensions[k] {
			continue
		}
		ov, oOK := oe[k]
		nv, nOK := ne[k]
		switch {
		case !oOK:
			p.report(ExtensionChanged, "%s: %s added", k, canonical(nv))
		case !nOK:
			p.report(ExtensionChanged, "%s: %s removed", k, canonical(ov))
		case canonical(ov) != canonical(nv):
			p.report(ExtensionChanged, "%s changed from %s to %s", k, canonical(ov), canonical(nv))
		}
	}
}

// keysExtendedByNewOptionalFields: list-map keys that only gained keys naming
// fields the old items did not have and the new items do not require. Existing
// items and every existing patch lack those fields, so they address the same items.
func (p *pair) keysExtendedByNewOptionalFields(oldKeys, newKeys string) string {
	ok, nk := strings.Split(oldKeys, ","), strings.Split(newKeys, ",")
	if oldKeys == "" || len(nk) <= len(ok) {
		return ""
	}
	for i := range ok {
		if ok[i] != nk[i] {
			return ""
		}
	}
	oItem, nItem := p.c.itemSchema(p.c.old, p.o), p.c.itemSchema(p.c.new, p.n)
	if oItem == nil || nItem == nil {
		return ""
	}
	added := nk[len(ok):]
	for _, k := range added {
		if oItem.Properties[k] != nil || nItem.Properties[k] == nil || slices.Contains(nItem.Required, k) {
			return ""
		}
	}
	return fmt.Sprintf("keys extended by new optional field(s) %s: existing items and patches, which lack them, keep their identity", strings.Join(added, ", "))
}

// itemSchema resolves the item schema of an array location.
func (c *comparer) itemSchema(d *openapi.Document, s *openapi3.Schema) *openapi3.Schema {
	if s == nil || s.Items == nil {
		return nil
	}
	if ref := openapi.EffectiveRef(s.Items); ref != "" {
		if t := d.Schemas[ref]; t != nil {
			return t.Value
		}
		return nil
	}
	return s.Items.Value
}
