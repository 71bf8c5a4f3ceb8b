package apiserver

import (
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	timeType = reflect.TypeOf(metav1.Time{})
	metaType = reflect.TypeOf(metav1.ObjectMeta{})
)

// schemaFromType derives an OpenAPI schema from a Go API type's JSON tags,
// so clients (kubectl validation, explain) see the fields of built-in kinds.
func schemaFromType(t reflect.Type, ref string, depth int) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == metaType && depth > 0:
		return map[string]any{"$ref": ref + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
	case depth > 8:
		return map[string]any{"type": "object"}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64, reflect.Int16, reflect.Int8, reflect.Uint8, reflect.Uint16:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "format": "byte"}
		}
		return map[string]any{"type": "array", "items": schemaFromType(t.Elem(), ref, depth+1)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFromType(t.Elem(), ref, depth+1)}
	case reflect.Struct:
		props := map[string]any{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name := strings.Split(tag, ",")[0]
			if f.Anonymous && (name == "" || strings.Contains(tag, "inline")) {
				if sub, ok := schemaFromType(f.Type, ref, depth)["properties"].(map[string]any); ok {
					for k, v := range sub {
						props[k] = v
					}
				}
				continue
			}
			if name == "-" || name == "" || !f.IsExported() {
				continue
			}
			props[name] = schemaFromType(f.Type, ref, depth+1)
		}
		return map[string]any{"type": "object", "properties": props}
	}
	return map[string]any{}
}
