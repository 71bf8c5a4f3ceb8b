package main

import "github.com/apiconform/apiconform/cmd/internal/servecmd"

// Every error of serve is a usage error (exit 2), as main treats an error
// without an exit code.
func init() { rootCmd.AddCommand(servecmd.New("serve", "apiconform serve")) }
