// Command apiconform tests servers that speak the Kubernetes API against the
// documented API machinery behaviour, serves a reference implementation of it,
// renders reports, and checks OpenAPI documents statically.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every subcommand.
const (
	exitOK     = 0
	exitFailed = 1 // the check ran and found failures at or above the gate
	exitUsage  = 2 // bad usage, unreadable input, or the target could not be reached or was lost
	// exitIncomplete: the run did not check everything it selected — it was
	// interrupted (SIGINT/SIGTERM), its --timeout elapsed, a worker failed,
	// or a spec ended in error. Never green, whatever passed.
	exitIncomplete = 3
)

// exitError carries an exit code and a one-line message up to main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withExit wraps err so that main exits with code.
func withExit(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// rootCmd is the apiconform command; each subcommand adds itself from its own file's init.
var rootCmd = &cobra.Command{
	Use:           "apiconform",
	Short:         "Conformance harness and spec checker for the Kubernetes API machinery",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	os.Exit(execute(os.Args[1:]))
}

func execute(args []string) int {
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.code != exitFailed || ee.err.Error() != "" {
			fmt.Fprintln(os.Stderr, "apiconform:", ee.err)
		}
		return ee.code
	}
	// Cobra's own errors (unknown flag, missing argument) are usage errors.
	fmt.Fprintln(os.Stderr, "apiconform:", err)
	return exitUsage
}
