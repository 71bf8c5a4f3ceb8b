package apiserver

import (
	"runtime"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

func goVersion() string { return runtime.Version() }
func platform() string  { return runtime.GOOS + "/" + runtime.GOARCH }

func fieldErrs(path string, v any, msg string) field.ErrorList {
	return field.ErrorList{field.Invalid(field.NewPath(path), v, msg)}
}
