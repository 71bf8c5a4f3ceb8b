// Package buildinfo says which build of an apiconform binary is running.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at build time with
// -ldflags "-X github.com/apiconform/apiconform/cmd/internal/buildinfo.version=v1.2.3";
// otherwise the module version from the build info is used.
var version = ""

// Version is the build's version: the one set at link time, else the
// module's, else "(devel)".
func Version() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}

// Line is the version with the Go release and the platform:
// "v1.2.3 (go1.26.8, linux/amd64)".
func Line() string {
	return fmt.Sprintf("%s (%s, %s/%s)", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
