// Command apiconform-refserver runs the apiconform reference server, with the
// flags of `apiconform serve`. It links the server alone, so it reaches main
// about 45 ms sooner: use it where start-up counts (a restart in a test, a
// container).
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/apiconform/apiconform/cmd/internal/buildinfo"
	"github.com/apiconform/apiconform/cmd/internal/servecmd"
)

const name = "apiconform-refserver"

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }

// run serves until SIGINT, SIGTERM or the end of ctx and returns the exit
// code: 0 after a clean stop, 2 for every error (all are usage errors; see
// servecmd.New).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := servecmd.New(name, name)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Version = buildinfo.Line()
	cmd.SetVersionTemplate(name + " {{.Version}}\n")
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, name+":", err)
		return 2
	}
	return 0
}
