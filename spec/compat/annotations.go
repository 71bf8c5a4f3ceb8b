package compat

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/apiconform/apiconform/spec/openapi"
)

//go:embed facts.txt
var factsText string

// fact is one line of facts.txt.
type fact struct{ kind, why string }

// facts maps "definition#field" to what the release's validation code says about it.
var facts = parseFacts(factsText)

func parseFacts(text string) map[string]fact {
	out := map[string]fact{}
	for _, line := range strings.Split(text, "\n") {
		why := ""
		if i := strings.Index(line, " #"); i >= 0 {
			line, why = line[:i], strings.TrimSpace(line[i+2:])
		}
		parts := strings.Fields(line)
		if len(parts) != 2 || strings.HasPrefix(parts[0], "#") {
			continue
		}
		if parts[0] != "required-before" && parts[0] != "not-enforced" {
			panic("compat: facts.txt: unknown fact " + parts[0]) // caught by tests
		}
		out[parts[1]] = fact{kind: parts[0], why: why}
	}
	return out
}

// requiredWordRE finds a description that already called the field required
// ("Required.", "name is required"); "not required" and conditional wording do not count.
var (
	requiredWordRE    = regexp.MustCompile(`(?i)(^|[\s.(])(required[.:)]|(is|are) required\b)`)
	notRequiredWordRE = regexp.MustCompile(`(?i)(not|never|only) required|required (if|when|only|unless|for)`)
)

func describesRequired(s *openapi3.SchemaRef) bool {
	d := description(s)
	return requiredWordRE.MatchString(d) && !notRequiredWordRE.MatchString(d)
}

// description is the text written at a location (beside a $ref, or on the schema).
func description(s *openapi3.SchemaRef) string {
	if s == nil || s.Value == nil {
		return ""
	}
	return s.Value.Description
}

// annotationOnly explains why a field that became required was required by the
// server already, or "" when the requirement is new.
func (p *pair) annotationOnly(name string) string {
	key := p.l.def + "#" + name
	if f, ok := facts[key]; ok {
		if f.kind == "not-enforced" {
			return "the release's validation does not enforce it (" + f.why + ")"
		}
		return "the server required it before (" + f.why + ")"
	}
	old := p.o.Properties[name]
	if p.l.ptr == "" && p.l.kindRoot && name == "metadata" {
		return "every object's metadata is validated (a name or generateName is required)"
	}
	if p.c.new.Format == openapi.FormatCRD {
		// A CRD's schema is what the server enforces: a requirement it did not
		// state was not enforced, whatever the description said.
		return ""
	}
	if describesRequired(old) {
		return "its old description already said it is required"
	}
	if p.l.ptr == "" && p.l.kindRoot && name == "spec" {
		return p.c.specAlwaysValidated(old)
	}
	return ""
}

// specAlwaysValidated: a kind's spec whose type has fields the server required
// could never be omitted (an absent spec fails those fields' validation).
func (c *comparer) specAlwaysValidated(old *openapi3.SchemaRef) string {
	name := openapi.EffectiveRef(old)
	s := c.old.Schemas[name]
	if s == nil || s.Value == nil {
		return ""
	}
	if len(s.Value.Required) > 0 {
		return fmt.Sprintf("an absent spec always failed validation: %s requires %s", name, strings.Join(s.Value.Required, ", "))
	}
	for field := range s.Value.Properties {
		if _, ok := facts[name+"#"+field]; ok && facts[name+"#"+field].kind == "required-before" {
			return fmt.Sprintf("an absent spec always failed validation: the server required %s.%s", name, field)
		}
		if describesRequired(s.Value.Properties[field]) {
			return fmt.Sprintf("an absent spec always failed validation: %s.%s is described as required", name, field)
		}
	}
	return ""
}

// alphaFieldRE matches the way Kubernetes marks a feature-gated alpha field in its
// description ("This field is alpha-level", "(Alpha) Using this field requires",
// "This is an alpha field", "Alpha, gated by").
var alphaFieldRE = regexp.MustCompile(`(?i)\balpha-level\b|\(alpha\)|\b(is|an) alpha field\b|(^|\n)\s*alpha,|\bthis field is alpha\b`)

// alphaField reports why a property is an alpha field: its description says so, or
// it refers (by a fooReference type) to a kind that only alpha versions serve.
func alphaField(d *openapi.Document, s *openapi3.SchemaRef) string {
	if s == nil {
		return ""
	}
	if alphaFieldRE.MatchString(description(s)) {
		return "alpha field (its description says so)"
	}
	target := openapi.EffectiveRef(s)
	if s.Value != nil && s.Value.Items != nil && target == "" {
		target = openapi.EffectiveRef(s.Value.Items)
	}
	short := target[strings.LastIndex(target, ".")+1:]
	if kind, ok := strings.CutSuffix(short, "Reference"); ok && kind != "" && kind != "Object" {
		if versions := d.KindVersions(kind); len(versions) > 0 && allAlpha(versions) {
			return fmt.Sprintf("alpha field (it refers to %s, served only by %s)", kind, strings.Join(versions, ", "))
		}
	}
	return ""
}

func allAlpha(versions []string) bool {
	for _, v := range versions {
		if !strings.Contains(v, "alpha") {
			return false
		}
	}
	return true
}

// alphaAt walks a finding's pointer inside its definition, in the document that
// has it, and reports the first alpha field on the way.
func alphaAt(d *openapi.Document, def, ptr string) string {
	s := d.Schemas[def]
	tokens := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i := 0; s != nil && i < len(tokens); i++ {
		v := s.Value
		if s.Ref == "" && v != nil && openapi.EffectiveRef(s) != "" {
			v = v.AllOf[0].Value
		}
		if v == nil {
			return ""
		}
		switch tokens[i] {
		case "properties":
			if i+1 >= len(tokens) {
				return ""
			}
			i++
			s = v.Properties[unescape(tokens[i])]
			if why := alphaField(d, s); why != "" {
				return why
			}
			if s != nil && s.Ref != "" {
				return "" // the pointer continues in another definition, which is checked on its own
			}
		case "items":
			s = v.Items
		case "additionalProperties":
			s = v.AdditionalProperties.Schema
		default:
			return ""
		}
	}
	return ""
}

func unescape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}
