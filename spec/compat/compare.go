package compat

import (
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

// Compare reports the incompatible changes from old to new. Each definition is
// compared once per (old name, new name) pair; $refs are never followed inline
// except through that memo, so self-referencing schemas (JSONSchemaProps) end.
func Compare(oldDoc, newDoc *openapi.Document) *openapi.Report {
	c := &comparer{
		old:        oldDoc,
		new:        newDoc,
		seen:       map[string]bool{},
		done:       map[[2]string]bool{},
		removedGVs: map[string]bool{},
	}
	c.compareVersions()
	c.compareOperations()
	c.compareCRDs()
	for _, name := range oldDoc.Names {
		if _, ok := newDoc.Schemas[name]; ok {
			c.comparePair(name, name)
		} else {
			c.definitionRemoved(name)
		}
	}
	c.compareDefaultsAcrossVersions()
	c.dropRemovalsReportedAtFields()
	c.finish()
	r := &openapi.Report{
		Tool:     "compat",
		Inputs:   []string{oldDoc.Source, newDoc.Source},
		Rules:    Rules(),
		Findings: c.findings,
	}
	r.Sort()
	return r
}

type comparer struct {
	old, new   *openapi.Document
	findings   []openapi.Finding
	seen       map[string]bool
	done       map[[2]string]bool
	removedGVs map[string]bool
}

// loc is a schema location being compared: a definition of the new document and
// a pointer in it. status marks locations under a kind's status.
type loc struct {
	def, ptr string
	oldDef   string // set when the old definition had another name
	status   bool
	kindRoot bool // def declares a kind, so /properties/status is its status
}

func (l loc) child(token string) loc {
	c := l
	c.ptr = l.ptr + token
	c.kindRoot = l.kindRoot
	if l.kindRoot && openapi.IsStatusPointer(c.ptr) {
		c.status = true
	}
	return c
}

// statusLoosened lists the rules the document relaxes for status fields: their
// writers are under the project's control, so tightening them is allowed.
var statusLoosened = map[string]bool{
	ValidationTightened:  true,
	RequiredAdded:        true,
	FieldBecameImmutable: true,
}

// add records a finding at the rule's level and returns it (nil when it was already recorded).
func (c *comparer) add(l loc, rule, msg string) *openapi.Finding {
	r, ok := registry[rule]
	if !ok {
		panic("compat: unregistered rule " + rule) // programming error, caught by tests
	}
	key := rule + "\x00" + l.def + "\x00" + l.ptr + "\x00" + msg
	if c.seen[key] {
		return nil
	}
	c.seen[key] = true
	f := openapi.Finding{Rule: rule, Level: r.Level, Definition: l.def, Pointer: l.ptr, Message: msg}
	if l.oldDef != "" && l.oldDef != l.def {
		f.Note = "compared with old definition " + l.oldDef
	}
	if l.status && statusLoosened[rule] && f.Level > openapi.Info {
		f.Level = openapi.Info
		f.Note = joinNote(f.Note, "status field: the document allows tightening validation of status")
	}
	c.findings = append(c.findings, f)
	return &c.findings[len(c.findings)-1]
}

// lower sets a finding's level down to level with the reason, if it is higher.
func lower(f *openapi.Finding, level openapi.Level, why string) {
	if f != nil && f.Level > level {
		f.Level = level
		f.Note = joinNote(f.Note, why)
	}
}

// rollbackRules protect apiserver rollback (etcd must stay decodable); that holds for alpha versions too.
var rollbackRules = map[string]bool{NewVersionStorage: true, NewVersionPreferred: true}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// finish lists what reaches each finding and applies the alpha allowance.
func (c *comparer) finish() {
	for i := range c.findings {
		f := &c.findings[i]
		doc := c.new
		if _, ok := doc.Schemas[f.Definition]; !ok {
			doc = c.old
		}
		if _, ok := doc.Schemas[f.Definition]; ok {
			reach := doc.ReachedBy(f.Definition)
			f.Kinds, f.Operations = reach.Kinds, reach.Operations
			alpha := reach.AllAlpha || (len(reach.Kinds) == 0 && strings.Contains(openapi.VersionOfDefinition(f.Definition), "alpha"))
			if alpha && f.Level > openapi.Warning && !rollbackRules[f.Rule] {
				f.Level = openapi.Warning
				f.Note = joinNote(f.Note, "alpha API version: compatibility is not strictly required")
			}
		}
		if f.Level > openapi.Warning && !rollbackRules[f.Rule] {
			if why := c.alphaFieldOf(f.Definition, f.Pointer); why != "" {
				lower(f, openapi.Warning, why+": the document's alpha rules apply")
			}
		}
	}
}

// alphaFieldOf reports why a location lies in an alpha field: on the way from its
// definition (in either document), or because only alpha fields use the definition.
func (c *comparer) alphaFieldOf(def, ptr string) string {
	for _, d := range []*openapi.Document{c.new, c.old} {
		if d.Schemas[def] == nil {
			continue
		}
		if why := alphaAt(d, def, ptr); why != "" {
			return why
		}
		if why := c.alphaDefinition(d, def, map[string]bool{}); why != "" {
			return why
		}
	}
	return ""
}

// alphaDefinition: a definition no kind declares, every use of which lies in an alpha field.
func (c *comparer) alphaDefinition(d *openapi.Document, name string, visiting map[string]bool) string {
	if len(d.Kinds[name]) > 0 || visiting[name] {
		return ""
	}
	visiting[name] = true
	referrers := d.Referrers(name)
	if len(referrers) == 0 {
		return ""
	}
	why := ""
	for _, from := range referrers {
		for _, e := range d.Edges(from) {
			if e.Target != name {
				continue
			}
			w := alphaAt(d, from, e.Pointer)
			if w == "" {
				w = c.alphaDefinition(d, from, visiting)
			}
			if w == "" {
				return ""
			}
			why = "used only by alpha fields; " + w
		}
	}
	return why
}

func (c *comparer) comparePair(oldName, newName string) {
	key := [2]string{oldName, newName}
	if c.done[key] {
		return
	}
	c.done[key] = true
	o, n := c.old.Schemas[oldName], c.new.Schemas[newName]
	if o == nil || n == nil {
		return
	}
	l := loc{def: newName, oldDef: oldName, status: c.new.StatusOnly(newName), kindRoot: len(c.new.Kinds[newName]) > 0}
	c.compareSchema(l, o, n)
}

// compareSchema compares one location. Named definitions on both sides are
// compared on their own (memoized); here only what the wrapper adds is compared.
func (c *comparer) compareSchema(l loc, o, n *openapi3.SchemaRef) {
	if o == nil || n == nil {
		return
	}
	oRef, nRef := openapi.EffectiveRef(o), openapi.EffectiveRef(n)
	switch {
	case oRef != "" && nRef != "":
		if oRef != nRef {
			c.add(l, RefChanged, fmt.Sprintf("$ref changed from %s to %s", oRef, nRef))
			c.comparePair(oRef, nRef)
		}
		c.runChecks(&pair{c: c, l: l, o: wrapper(o), n: wrapper(n), wrapperOnly: true})
		return
	case oRef != "" || nRef != "":
		if oRef != "" {
			c.add(l, RefChanged, fmt.Sprintf("$ref %s replaced by an inline schema", oRef))
		} else {
			c.add(l, RefChanged, fmt.Sprintf("inline schema replaced by $ref %s", nRef))
		}
	}
	ov, nv := resolved(o), resolved(n)
	if ov == nil || nv == nil {
		return
	}
	p := &pair{c: c, l: l, o: ov, n: nv, oExt: extensions(o), nExt: extensions(n)}
	c.runChecks(p)
	for _, name := range sortedProps(ov.Properties) {
		if ns, ok := nv.Properties[name]; ok {
			c.compareSchema(l.child("/properties/"+openapi.EscapePointer(name)), ov.Properties[name], ns)
		}
	}
	c.compareSchema(l.child("/items"), ov.Items, nv.Items)
	c.compareSchema(l.child("/additionalProperties"), ov.AdditionalProperties.Schema, nv.AdditionalProperties.Schema)
	for i := 0; i < len(ov.AllOf) && i < len(nv.AllOf); i++ {
		c.compareSchema(l.child(fmt.Sprintf("/allOf/%d", i)), ov.AllOf[i], nv.AllOf[i])
	}
	for i := 0; i < len(ov.OneOf) && i < len(nv.OneOf); i++ {
		c.compareSchema(l.child(fmt.Sprintf("/oneOf/%d", i)), ov.OneOf[i], nv.OneOf[i])
	}
	for i := 0; i < len(ov.AnyOf) && i < len(nv.AnyOf); i++ {
		c.compareSchema(l.child(fmt.Sprintf("/anyOf/%d", i)), ov.AnyOf[i], nv.AnyOf[i])
	}
}

// wrapper is what a ref'ing schema adds on top of its target: nothing but sibling
// extensions for a plain $ref, the allOf wrapper itself otherwise.
func wrapper(s *openapi3.SchemaRef) *openapi3.Schema {
	if s.Ref != "" || s.Value == nil {
		return &openapi3.Schema{Extensions: s.Extensions}
	}
	return s.Value
}

// resolved is the schema a location stands for, following a $ref or allOf wrapper one step.
func resolved(s *openapi3.SchemaRef) *openapi3.Schema {
	if s.Ref == "" && s.Value != nil && openapi.EffectiveRef(s) != "" {
		return s.Value.AllOf[0].Value
	}
	return s.Value
}

// extensions are a location's own x- fields (not its $ref target's).
func extensions(s *openapi3.SchemaRef) map[string]any {
	if s.Ref != "" || s.Value == nil {
		return s.Extensions
	}
	return s.Value.Extensions
}

func sortedProps(m openapi3.Schemas) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// definitionRemoved reports a definition gone from the new document, unless its
// whole group/version went (reported once as version-removed).
func (c *comparer) definitionRemoved(name string) {
	if gv := c.groupVersionOf(c.old, name); gv != "" && c.removedGVs[gv] {
		return
	}
	f := c.add(loc{def: name}, DefinitionRemoved, fmt.Sprintf("definition %s is not in the new document", name))
	// A kind dropped from a version that stays served, while another version of the
	// group serves it in both releases, is a resource version removal.
	if ks := c.old.Kinds[name]; len(ks) == 1 && c.old.Format != openapi.FormatCRD && !strings.Contains(ks[0].Version, "alpha") {
		if repl := c.replacement(ks[0].Group, ks[0].Version, []string{ks[0].Kind}); repl != "" {
			lower(f, openapi.Warning, fmt.Sprintf("kind %s stays served by %s in both releases: removing a version of a resource after the deprecation period is allowed (OpenAPI does not show the deprecation; check it was announced)", ks[0].Kind, repl))
		}
	}
}

// groupVersionOf finds the group/version a definition belongs to: its own GVK, or
// that of a kind declared in the same package (io.k8s.api.<group>.<version>.*).
func (c *comparer) groupVersionOf(d *openapi.Document, name string) string {
	if ks := d.Kinds[name]; len(ks) == 1 {
		if d.Format == openapi.FormatCRD {
			return ks[0].GroupVersion() + "/" + ks[0].Kind
		}
		return ks[0].GroupVersion()
	}
	pkg := name
	if i := strings.LastIndex(name, "."); i >= 0 {
		pkg = name[:i]
	}
	for _, other := range d.Names {
		if strings.HasPrefix(other, pkg+".") && !strings.Contains(other[len(pkg)+1:], ".") {
			if ks := d.Kinds[other]; len(ks) == 1 {
				return ks[0].GroupVersion()
			}
		}
	}
	return ""
}

// dropRemovalsReportedAtFields keeps a removed helper definition from being reported
// twice: when every old $ref to it sat in a field already reported removed (or in
// a definition that went too), the field finding is the one report of the change.
func (c *comparer) dropRemovalsReportedAtFields() {
	removedAt := map[string]bool{}
	for _, f := range c.findings {
		if f.Rule == FieldRemoved {
			removedAt[f.Location()] = true
		}
	}
	covered := func(name string) bool {
		if len(c.old.Kinds[name]) > 0 {
			return false
		}
		referrers := c.old.Referrers(name)
		if len(referrers) == 0 {
			return false
		}
		for _, from := range referrers {
			if _, still := c.new.Schemas[from]; !still {
				continue
			}
			for _, e := range c.old.Edges(from) {
				if e.Target == name && !underRemovedField(from, e.Pointer, removedAt) {
					return false
				}
			}
		}
		return true
	}
	kept := c.findings[:0]
	for _, f := range c.findings {
		if f.Rule == DefinitionRemoved && covered(f.Definition) {
			continue
		}
		kept = append(kept, f)
	}
	c.findings = kept
}

func underRemovedField(def, ptr string, removedAt map[string]bool) bool {
	for p := ptr; p != ""; p = p[:strings.LastIndex(p, "/")] {
		if removedAt[def+"#"+p] {
			return true
		}
	}
	return false
}
