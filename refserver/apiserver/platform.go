package apiserver

import (
	"runtime"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func goVersion() string { return runtime.Version() }
func platform() string  { return runtime.GOOS + "/" + runtime.GOARCH }

func schemaGR(group, resource string) schema.GroupResource {
	return schema.GroupResource{Group: group, Resource: resource}
}

func schemaGK(group, kind string) schema.GroupKind { return schema.GroupKind{Group: group, Kind: kind} }

func fieldErrs(path string, v any, msg string) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath(path), v, msg)}
}
