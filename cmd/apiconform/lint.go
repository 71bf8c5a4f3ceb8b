package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/spec/lint"
	"github.com/apiconform/apiconform/spec/openapi"
)

func init() { rootCmd.AddCommand(newLintCmd()) }

func newLintCmd() *cobra.Command {
	var f specFlags
	cmd := &cobra.Command{
		Use:   "lint SPEC",
		Short: "Check an OpenAPI document or CRD manifest against the Kubernetes API conventions",
		Long: `lint checks every definition of an API description — Swagger 2.0, OpenAPI 3
(file or directory) or CRD manifests, or the live /openapi/v2 of --server —
against the API conventions that a schema shows: camelCase field names, no
floats in spec, int32/int64 integers, list kinds, apiVersion/kind/metadata,
spec/status split, conditions (type/status, map list keyed by type,
lastTransitionTime/reason/message/observedGeneration), list types on every
array, bounded strings/arrays/numbers in CRDs, no phase fields, fooSeconds
durations (integers, not strings), fooName/fooRef references, somethingTime
RFC 3339 times, CamelCase enum values, no default on a required field, the
status subresource, no nullable, no free-form objects, quantities for resource
amounts, union discriminators, no maps of subobjects and policy-like bools.

Rules look at API objects (kinds served by resource endpoints, every CRD kind)
and the types they use: discovery documents, option kinds, watch events and
JSON Schema (JSONSchemaProps) are not API objects. Each rule says what it applies to.

Kubernetes itself has accepted exceptions: spec/lint/kubernetes-exceptions.txt
lists those of v1.36.3. Record your own with --format exceptions and pass the
file back with --exceptions so a CI gate reports only new ones.

Exit codes: 0 no finding at or above --fail-on, 1 some, 2 unreadable input or bad usage.`,
		Example: `  apiconform lint k8s-v1.36.3-swagger.json --format exceptions > accepted.txt
  apiconform lint my-crd.yaml --exceptions accepted.txt --fail-on warning`,
		RunE: func(cmd *cobra.Command, args []string) error {
			level, exceptions, err := f.prepare()
			if err != nil {
				return withExit(exitUsage, err)
			}
			var doc *openapi.Document
			switch {
			case len(args) == 1 && len(f.servers) == 0:
				doc, err = openapi.Load(args[0])
			case len(args) == 0 && len(f.servers) == 1:
				doc, err = f.fetch(cmd.Context(), f.servers[0])
			default:
				return withExit(exitUsage, errors.New("lint needs one SPEC file or one --server"))
			}
			if err != nil {
				return withExit(exitUsage, err)
			}
			return f.finish(cmd, lint.Lint(doc), level, exceptions)
		},
	}
	f.register(cmd, "fetch /openapi/v2 from this API server instead of reading SPEC")
	return cmd
}
