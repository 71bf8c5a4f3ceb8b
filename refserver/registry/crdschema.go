package registry

import (
	"encoding/json"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/apiconform/apiconform/refserver/fieldcheck"
)

// The structural schemas of custom resources: defaulting and validation.

// schemaNode is the subset of a structural schema used for defaulting
// (pruning is fieldcheck.Prune's, when the request body is decoded).
type schemaNode struct {
	Type                 string
	Properties           map[string]*schemaNode
	Items                *schemaNode
	AdditionalProperties *schemaNode
	Default              any
	HasDefault           bool
}

func parseSchemaNode(m map[string]any) *schemaNode {
	if m == nil {
		return nil
	}
	n := &schemaNode{Type: str(m["type"])}
	if d, ok := m["default"]; ok {
		n.Default, n.HasDefault = d, true
	}
	if props := mapOf(m["properties"]); props != nil {
		n.Properties = map[string]*schemaNode{}
		for key, v := range props {
			n.Properties[key] = parseSchemaNode(mapOf(v))
		}
	}
	if it := mapOf(m["items"]); it != nil {
		n.Items = parseSchemaNode(it)
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		n.AdditionalProperties = parseSchemaNode(ap)
	}
	return n
}

// applyDefaults fills absent fields that have defaults.
func (n *schemaNode) applyDefaults(v any, root bool) {
	if n == nil {
		return
	}
	switch val := v.(type) {
	case map[string]any:
		for key, p := range n.Properties {
			if p == nil || (root && (key == "metadata" || key == "apiVersion" || key == "kind")) {
				continue
			}
			if _, ok := val[key]; !ok && p.HasDefault {
				val[key] = normalize(p.Default)
			}
			if sub, ok := val[key]; ok {
				p.applyDefaults(sub, false)
			}
		}
		if n.AdditionalProperties != nil {
			for key, sub := range val {
				if _, known := n.Properties[key]; !known {
					n.AdditionalProperties.applyDefaults(sub, false)
				}
			}
		}
	case []any:
		for _, it := range val {
			n.Items.applyDefaults(it, false)
		}
	}
}

// compileSchema loads an openAPIV3Schema into kin-openapi.
func compileSchema(raw map[string]any) (*openapi3.Schema, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	s := &openapi3.Schema{}
	if err := s.UnmarshalJSON(b); err != nil {
		return nil, err
	}
	return s, nil
}

// validateCustom validates a custom resource against its schema: the type
// errors worded as kube-apiserver words them (fieldcheck.TypeErrors), then
// the other constraints.
func validateCustom(raw map[string]any, s *openapi3.Schema, obj Object) field.ErrorList {
	return append(fieldcheck.TypeErrors(obj, raw), validateAgainst(s, obj)...)
}

// validateAgainst validates everything but metadata against the schema,
// leaving type and nullability errors to fieldcheck.TypeErrors.
func validateAgainst(s *openapi3.Schema, obj Object) field.ErrorList {
	if s == nil {
		return nil
	}
	body := map[string]any{}
	for key, v := range obj {
		if key != "metadata" {
			body[key] = v
		}
	}
	val := normalize(body)
	err := s.VisitJSON(val, openapi3.MultiErrors())
	if err == nil {
		return nil
	}
	var errs field.ErrorList
	var collect func(error)
	collect = func(e error) {
		switch te := e.(type) {
		case openapi3.MultiError:
			for _, x := range te {
				collect(x)
			}
		case *openapi3.SchemaError:
			ptr := te.JSONPointer()
			path := strings.Join(ptr, ".")
			if path == "" {
				path = "<root>"
			}
			fp := field.NewPath(path)
			msg := te.Reason
			switch te.SchemaField {
			case "type", "nullable": // fieldcheck.TypeErrors
			case "required":
				errs = append(errs, field.Required(fp, msg))
			default:
				errs = append(errs, field.Invalid(fp, te.Value, msg))
			}
		default:
			errs = append(errs, field.Invalid(field.NewPath("<root>"), nil, e.Error()))
		}
	}
	collect(err)
	return errs
}
