package registry

import (
	"encoding/json"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

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

// customSchema is a version's openAPIV3Schema compiled for validation.
type customSchema struct {
	raw       map[string]any
	validator *validate.SchemaValidator
	// typesOnly: the schema states types alone, so an object the type
	// check passes has nothing for the validator to find (see validate).
	typesOnly bool
}

// compileSchema loads an openAPIV3Schema into kube-openapi's validator,
// the one kube-apiserver validates custom resources with, so the
// constraint errors carry its wording. An error means the schema is not a
// schema (a member of the wrong JSON type).
func compileSchema(raw map[string]any) (*customSchema, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var s spec.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, err
	}
	return &customSchema{raw: raw, validator: validate.NewSchemaValidator(&s, nil, "", strfmt.Default), typesOnly: typesOnly(raw)}, nil
}

// validate validates a custom resource against the schema: the type errors
// worded as kube-apiserver words them (fieldcheck.TypeErrors), then what
// kube-openapi's validator finds. The validator is skipped for an object
// the type check passes against a schema of types alone: it could only
// find type errors, and it costs a custom resource's write about a tenth
// of its handler's time. Where the type check fails it runs, because for
// some type errors it adds one of its own (a fraction where an integer is
// due: "Checked value must be of type integer (default format)").
func (cs *customSchema) validate(obj Object) field.ErrorList {
	if cs == nil {
		return nil
	}
	typeErrs := fieldcheck.TypeErrors(obj, cs.raw)
	if cs.typesOnly && len(typeErrs) == 0 {
		return nil
	}
	return append(typeErrs, validateAgainst(cs.validator, obj, typeErrs)...)
}

// typesOnly reports whether every node of a schema has only members that
// constrain nothing beyond the JSON types (which fieldcheck.TypeErrors
// checks). An allowlist, so that any other member, whatever it is, keeps
// the validator.
func typesOnly(node map[string]any) bool {
	for key, v := range node {
		switch {
		case key == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for _, p := range props {
				if sub, ok := p.(map[string]any); !ok || !typesOnly(sub) {
					return false
				}
			}
		case key == "items" || key == "additionalProperties":
			if b, ok := v.(bool); ok && key == "additionalProperties" && b {
				continue
			}
			if sub, ok := v.(map[string]any); !ok || !typesOnly(sub) {
				return false
			}
		case typeOnlyMembers[key]:
		default:
			return false
		}
	}
	return true
}

// typeOnlyMembers are the schema members that state types, or describe,
// default or mark a field for other machinery, and that kube-openapi's
// validator does not check.
var typeOnlyMembers = map[string]bool{
	"type": true, "nullable": true, "x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true,
	"description": true, "title": true, "default": true, "example": true, "externalDocs": true,
	"x-kubernetes-embedded-resource": true, "x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true,
	"x-kubernetes-map-type": true,
}

// validateAgainst validates everything but metadata against the schema.
// Each error becomes the field error kube-apiserver makes of it: Required,
// NotSupported for an enum, TooLong, TooMany, TypeInvalid (a JSON type, or
// a format such as email), and Invalid with the validator's message
// otherwise. A type error at a field typeErrs already has is left out.
func validateAgainst(s *validate.SchemaValidator, obj Object, typeErrs field.ErrorList) field.ErrorList {
	if s == nil {
		return nil
	}
	body := map[string]any{}
	for key, v := range obj {
		if key != "metadata" {
			body[key] = v
		}
	}
	// The validator only reads the object, and takes its numbers as they
	// come (int64 and float64, as kube-apiserver's decoder makes them):
	// the round trip is only for values of other Go types.
	var data any = body
	if !plainJSON(data) {
		data = normalize(data)
	}
	res := s.Validate(data)
	if res.IsValid() {
		return nil
	}
	var errs field.ErrorList
	for _, e := range res.Errors {
		ve, ok := e.(*openapierrors.Validation)
		if !ok {
			errs = append(errs, field.Invalid(nil, "", e.Error()))
			continue
		}
		var path *field.Path
		if name := strings.TrimPrefix(ve.Name, "."); name != "" {
			path = field.NewPath(name)
		}
		value := ve.Value
		if value == nil {
			value = ""
		}
		switch ve.Code() {
		case openapierrors.InvalidTypeCode:
			if !hasField(typeErrs, path.String()) {
				errs = append(errs, field.TypeInvalid(path, value, ve.Error()))
			}
		case openapierrors.RequiredFailCode:
			errs = append(errs, field.Required(path, ""))
		case openapierrors.EnumFailCode:
			allowed := make([]string, 0, len(ve.Values))
			for _, v := range ve.Values {
				if str, ok := v.(string); ok {
					allowed = append(allowed, str)
				} else {
					b, _ := json.Marshal(v)
					allowed = append(allowed, string(b))
				}
			}
			errs = append(errs, field.NotSupported(path, ve.Value, allowed))
		case openapierrors.TooLongFailCode:
			errs = append(errs, field.TooLong(path, "", int(asInt64(ve.Valid, -1))))
		case openapierrors.MaxItemsFailCode, openapierrors.TooManyPropertiesCode:
			errs = append(errs, field.TooMany(path, int(asInt64(ve.Value, -1)), int(asInt64(ve.Valid, -1))))
		default:
			errs = append(errs, field.Invalid(path, value, ve.Error()))
		}
	}
	return errs
}

func hasField(errs field.ErrorList, f string) bool {
	for _, e := range errs {
		if e.Field == f {
			return true
		}
	}
	return false
}

// asInt64 is v when the validator gave an int64 (a count or a limit), else
// missing.
func asInt64(v any, missing int64) int64 {
	if i, ok := v.(int64); ok {
		return i
	}
	return missing
}
