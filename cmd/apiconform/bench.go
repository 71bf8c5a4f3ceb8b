package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/loadgen"
	"github.com/apiconform/apiconform/suites/framework"
)

func init() {
	var (
		tf      targetFlags
		plan    loadgen.Plan
		timeout time.Duration
		jsonOut string
	)
	cmd := &cobra.Command{
		Use:   "bench [--kubeconfig … | --server …]",
		Short: "Drive the same bounded load against the reference server and a target, and print the ratios",
		Long: `Drive one bounded load — creates, gets, paged lists and a watch fan-out — against
the embedded reference server and, when a target is given, against it too,
then print each phase's throughput and latency side by side with the ratios.
The load works in a namespace of its own and deletes it at the end.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			stderr := cmd.ErrOrStderr()
			ref := targetFlags{}
			refTarget, stop, err := ref.resolve(ctx, stderr)
			if err != nil {
				return withExit(exitUsage, err)
			}
			defer stop()
			targets := []framework.Target{refTarget}
			if !tf.embedded() {
				t, cleanup, err := tf.resolve(ctx, stderr)
				if err != nil {
					return withExit(exitUsage, err)
				}
				defer cleanup()
				targets = append(targets, t)
			}
			var results []loadgen.Result
			for _, t := range targets {
				if _, err := preflight(ctx, t); err != nil {
					return withExit(exitUsage, err)
				}
				hc, base, err := t.HTTPClient()
				if err != nil {
					return withExit(exitUsage, err)
				}
				fmt.Fprintf(stderr, "bench: %s (%s): %d objects, %d watchers × %d events\n", t.Name, base,
					planOrDefault(plan).Objects, planOrDefault(plan).Watchers, planOrDefault(plan).WatchEvents)
				res, err := loadgen.Run(ctx, loadgen.Target{Name: t.Name, BaseURL: base, Client: hc}, plan)
				if err != nil {
					return withExit(exitFailed, err)
				}
				results = append(results, res)
			}
			out := cmd.OutOrStdout()
			other := results[len(results)-1]
			if err := loadgen.WriteComparison(out, results[0], other); err != nil {
				return err
			}
			if jsonOut != "" {
				data, err := json.MarshalIndent(results, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(jsonOut, append(data, '\n'), 0o644); err != nil {
					return withExit(exitUsage, err)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	tf.register(f)
	f.IntVar(&plan.Objects, "objects", 0, fmt.Sprintf("configmaps to create, get and list (default %d)", loadgen.DefaultPlan.Objects))
	f.IntVar(&plan.Concurrency, "concurrency", 0, fmt.Sprintf("parallel creates and gets (default %d)", loadgen.DefaultPlan.Concurrency))
	f.IntVar(&plan.PageSize, "page-size", 0, fmt.Sprintf("limit of each paged list (default %d)", loadgen.DefaultPlan.PageSize))
	f.IntVar(&plan.Watchers, "watchers", 0, fmt.Sprintf("concurrent watches in the fan-out (default %d)", loadgen.DefaultPlan.Watchers))
	f.IntVar(&plan.WatchEvents, "events", 0, fmt.Sprintf("events each watcher must receive (default %d)", loadgen.DefaultPlan.WatchEvents))
	f.DurationVar(&timeout, "timeout", 15*time.Minute, "deadline of the whole benchmark")
	f.StringVar(&jsonOut, "json", "", "also write the figures as JSON to this file")
	rootCmd.AddCommand(cmd)
}

func planOrDefault(p loadgen.Plan) loadgen.Plan { return p.WithDefaults() }
