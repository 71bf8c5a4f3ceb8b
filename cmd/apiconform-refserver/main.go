// Command apiconform-refserver runs the apiconform reference server, with the
// flags of `apiconform serve`. It links the server alone, so it starts in
// about half the time: use it where start-up counts (a restart in a test,
// a container).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/apiconform/apiconform/cmd/internal/servecmd"
)

const name = "apiconform-refserver"

// version is set at build time with -ldflags "-X main.version=v1.2.3";
// otherwise the module version from the build info is used.
var version = ""

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// run serves until SIGINT, SIGTERM or the end of ctx and returns the exit
// code: 0 after a clean stop, 2 for every error (all are usage errors; see
// servecmd.New).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := servecmd.New(name, name)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Version = fmt.Sprintf("%s (%s, %s/%s)", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cmd.SetVersionTemplate(name + " {{.Version}}\n")
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 2
	}
	return 0
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" {
		return info.Main.Version
	}
	return "(devel)"
}
