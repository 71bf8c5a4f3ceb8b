package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/cmd/internal/buildinfo"
	"github.com/apiconform/apiconform/reports/result"
	"github.com/apiconform/apiconform/spec/catalog"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the apiconform version, the catalogue size and the result schema",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "apiconform %s\ncatalogue: %d requirements in %d areas\nresult schema: %s\n",
				buildinfo.Line(),
				len(catalog.All()), len(catalog.Areas()), result.SchemaVersion)
			return err
		},
	})
}
