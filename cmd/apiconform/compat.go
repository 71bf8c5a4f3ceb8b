package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/spec/compat"
	"github.com/apiconform/apiconform/spec/openapi"
)

func init() { rootCmd.AddCommand(newCompatCmd()) }

// specFlags are the output, gate and source flags compat and lint share.
type specFlags struct {
	format     string
	output     string
	failOn     string
	ignores    []string
	exceptions string
	servers    []string
	crd        string
	token      string
	insecure   bool
}

func (f *specFlags) register(cmd *cobra.Command, serverHelp string) {
	fl := cmd.Flags()
	fl.StringVar(&f.format, "format", "text", "output format: "+strings.Join(openapi.Formats, ", ")+" (exceptions writes a baseline file)")
	fl.StringVarP(&f.output, "output", "o", "", "write the report to this file instead of stdout")
	fl.StringVar(&f.failOn, "fail-on", "error", "exit 1 when a finding is at or above this level: error, warning or info")
	fl.StringArrayVar(&f.ignores, "ignore", nil, "accept findings of RULE, optionally only at PATH (glob on definition, or definition#pointer); repeatable")
	fl.StringVar(&f.exceptions, "exceptions", "", "file of accepted exceptions, one RULE[:PATH] per line ('#' comments)")
	fl.StringArrayVar(&f.servers, "server", nil, serverHelp)
	fl.StringVar(&f.token, "token", "", "bearer token for --server")
	fl.BoolVar(&f.insecure, "insecure-skip-tls-verify", false, "do not verify the --server certificate")
}

// prepare validates the flags before any input is read.
func (f *specFlags) prepare() (openapi.Level, []openapi.Exception, error) {
	level, err := openapi.ParseLevel(f.failOn)
	if err != nil {
		return 0, nil, fmt.Errorf("--fail-on: %w", err)
	}
	known := false
	for _, name := range openapi.Formats {
		known = known || name == f.format || (f.format == "md" && name == "markdown")
	}
	if !known {
		return 0, nil, fmt.Errorf("--format: unknown format %q (want %s)", f.format, strings.Join(openapi.Formats, ", "))
	}
	var exceptions []openapi.Exception
	for _, s := range f.ignores {
		e, err := openapi.ParseException(s)
		if err != nil {
			return 0, nil, fmt.Errorf("--ignore: %w", err)
		}
		exceptions = append(exceptions, e)
	}
	if f.exceptions != "" {
		more, err := openapi.LoadExceptions(f.exceptions)
		if err != nil {
			return 0, nil, err
		}
		exceptions = append(exceptions, more...)
	}
	return level, exceptions, nil
}

func (f *specFlags) fetch(ctx context.Context, server string) (*openapi.Document, error) {
	return openapi.Fetch(ctx, server, openapi.FetchOptions{Token: f.token, InsecureSkipTLSVerify: f.insecure})
}

// finish filters, renders and gates a report.
func (f *specFlags) finish(cmd *cobra.Command, r *openapi.Report, level openapi.Level, exceptions []openapi.Exception) error {
	r.Apply(exceptions)
	var w io.Writer = cmd.OutOrStdout()
	if f.output != "" {
		file, err := os.Create(f.output)
		if err != nil {
			return withExit(exitUsage, fmt.Errorf("--output: %w", err))
		}
		defer file.Close()
		w = file
	}
	if err := openapi.Render(w, r, f.format); err != nil {
		return withExit(exitUsage, fmt.Errorf("write report: %w", err))
	}
	if n := r.CountAtLeast(level); n > 0 {
		return withExit(exitFailed, fmt.Errorf("%s: %d finding(s) at or above %s", r.Tool, n, level))
	}
	return nil
}

func newCompatCmd() *cobra.Command {
	var f specFlags
	cmd := &cobra.Command{
		Use:   "compat OLD NEW",
		Short: "Report incompatible API changes between two OpenAPI documents or CRD manifests",
		Long: `compat compares two API descriptions and reports the changes the Kubernetes
"Changing the API" document calls incompatible, once per schema location
(definition + JSON pointer) with the kinds and operations that reach it.

OLD and NEW are Swagger 2.0 (/openapi/v2, api/openapi-spec/swagger.json) or
OpenAPI 3 documents, directories of OpenAPI 3 documents (/openapi/v3/...), or
CustomResourceDefinition manifests (YAML or JSON). With --server twice, both
documents are fetched live from /openapi/v2. With --server and --crd NAME, the
server's CRD is the old side and a manifest the new one: an operator's upgrade
check (stored versions, storage version, conversion, printer columns,
subresources, and every version's schema).

Operations are compared too (removed, new required or retyped parameters,
changed request/response body types); alpha API versions and alpha fields
(feature-gated, marked alpha in their description) get the document's alpha
rules: warnings, not errors.

Exit codes: 0 no finding at or above --fail-on, 1 some, 2 unreadable input or bad usage.`,
		Example: `  apiconform compat k8s-v1.35.4-swagger.json k8s-v1.36.3-swagger.json
  apiconform compat old-crd.yaml new-crd.yaml --format markdown --exceptions accepted.txt
  apiconform compat --server https://old:6443 --server https://new:6443 --token $TOKEN
  apiconform compat --server https://cluster:6443 --crd widgets.example.com widgets-crd.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			level, exceptions, err := f.prepare()
			if err != nil {
				return withExit(exitUsage, err)
			}
			var oldDoc, newDoc *openapi.Document
			switch {
			case len(f.servers) == 0 && len(args) == 2:
				if oldDoc, err = openapi.Load(args[0]); err == nil {
					newDoc, err = openapi.Load(args[1])
				}
			case f.crd != "" && len(f.servers) == 1 && len(args) == 1:
				// Upgrade check: the CRD as the server has it (with status.storedVersions) against a manifest.
				if oldDoc, err = openapi.FetchCRD(cmd.Context(), f.servers[0], f.crd, openapi.FetchOptions{Token: f.token, InsecureSkipTLSVerify: f.insecure}); err == nil {
					newDoc, err = openapi.Load(args[0])
				}
			case f.crd != "":
				return withExit(exitUsage, errors.New("--crd NAME needs one --server (the live CRD) and one NEW manifest"))
			case len(f.servers) == 2 && len(args) == 0:
				if oldDoc, err = f.fetch(cmd.Context(), f.servers[0]); err == nil {
					newDoc, err = f.fetch(cmd.Context(), f.servers[1])
				}
			default:
				return withExit(exitUsage, errors.New("compat needs OLD and NEW files, or --server OLD --server NEW"))
			}
			if err != nil {
				return withExit(exitUsage, err)
			}
			return f.finish(cmd, compat.Compare(oldDoc, newDoc), level, exceptions)
		},
	}
	f.register(cmd, "fetch /openapi/v2 from this API server; give it twice (old, then new) instead of OLD NEW")
	cmd.Flags().StringVar(&f.crd, "crd", "", "with one --server and a NEW manifest: compare the server's CustomResourceDefinition NAME (and its status.storedVersions) with the manifest")
	return cmd
}
