package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiconform/apiconform/spec/catalog"
)

// specOptions are the flags of `apiconform spec`.
type specOptions struct {
	format   string
	area     string
	level    string
	coverage bool
}

func newSpecCmd() *cobra.Command {
	o := &specOptions{}
	cmd := &cobra.Command{
		Use:   "spec",
		Short: "Print the requirement catalogue (and the documented resourceVersion tables)",
		Long: `Print the requirement catalogue: every documented behaviour the suites check,
with its ID (the spec label is req:<ID>), level, source and known kube-apiserver
deviation. Markdown prints one table per area followed by the documented
resourceVersion tables; JSON prints {"requirements": [...], "tables": [...]}.

With --coverage it prints the coverage map instead: every section of every
stored document with the requirements drawn from it, or the static rules that
check it, or why nothing can (untestable), or that it is a known gap.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withExit(exitUsage, runSpec(cmd.OutOrStdout(), o))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "md", "output format: md or json")
	f.StringVar(&o.area, "area", "", "only this area (e.g. resourceversion, paging, watch)")
	f.StringVar(&o.level, "level", "", "only this level: must, should or may")
	f.BoolVar(&o.coverage, "coverage", false, "print the coverage map: each document section → requirements, static rules or a reason")
	return cmd
}

func init() { rootCmd.AddCommand(newSpecCmd()) }

// specOutput is the JSON shape of `apiconform spec --format json`.
type specOutput struct {
	Requirements []catalog.Requirement `json:"requirements"`
	Tables       []catalog.Table       `json:"tables"`
}

func runSpec(w io.Writer, o *specOptions) error {
	if o.coverage {
		return runCoverage(w, o.format)
	}
	reqs, tables, err := selectSpec(o)
	if err != nil {
		return err
	}
	switch o.format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(specOutput{Requirements: reqs, Tables: tables})
	case "md":
		writeSpecMarkdown(w, reqs, tables)
		return nil
	default:
		return fmt.Errorf("--format %q: want md or json", o.format)
	}
}

// selectSpec applies the --area and --level filters. Tables are kept when
// their cells' requirements survive the filters.
func selectSpec(o *specOptions) ([]catalog.Requirement, []catalog.Table, error) {
	if o.area != "" && !slices.Contains(catalog.Areas(), o.area) {
		return nil, nil, fmt.Errorf("--area %q: want one of %s", o.area, strings.Join(catalog.Areas(), ", "))
	}
	var level catalog.Level
	if o.level != "" {
		level = catalog.Level(strings.ToUpper(o.level))
		if level != catalog.Must && level != catalog.Should && level != catalog.May {
			return nil, nil, fmt.Errorf("--level %q: want must, should or may", o.level)
		}
	}
	keep := map[string]bool{}
	reqs := []catalog.Requirement{}
	for _, r := range catalog.All() {
		if (o.area == "" || r.Area == o.area) && (level == "" || r.Level == level) {
			reqs = append(reqs, r)
			keep[r.ID] = true
		}
	}
	tables := []catalog.Table{}
	for _, t := range catalog.Tables() {
		for _, c := range t.Cells() {
			if keep[c.Requirement] {
				tables = append(tables, t)
				break
			}
		}
	}
	return reqs, tables, nil
}

func writeSpecMarkdown(w io.Writer, reqs []catalog.Requirement, tables []catalog.Table) {
	if len(reqs) == 0 {
		fmt.Fprintln(w, "No requirements match.")
		return
	}
	area := ""
	for _, r := range reqs {
		if r.Area != area {
			if area != "" {
				fmt.Fprintln(w)
			}
			area = r.Area
			fmt.Fprintf(w, "## %s\n\n", area)
			fmt.Fprintln(w, "| ID | Level | Title | Source | kube-apiserver deviation |")
			fmt.Fprintln(w, "|----|-------|-------|--------|--------------------------|")
		}
		title := r.Title
		if r.Since != "" {
			title += " (since " + r.Since + ")"
		}
		source := r.Source.Doc + " § " + r.Source.Section
		if r.Source.Ref != "" {
			source += " · " + r.Source.Ref
		}
		deviation := ""
		if r.Deviation != nil {
			deviation = r.Deviation.Observed + " (" + r.Deviation.Version + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.ID, r.Level, mdCell(title), mdCell(source), mdCell(deviation))
	}
	for _, t := range tables {
		fmt.Fprintf(w, "\n## Table: %s\n\n", t.Caption)
		fmt.Fprintln(w, "| "+strings.Join(mdCells(t.Headers), " | ")+" |")
		fmt.Fprintln(w, strings.Repeat("|---", len(t.Headers))+"|")
		for _, row := range t.Rows {
			cells := mdCells(row.Headers)
			for _, c := range row.Cells {
				cells = append(cells, mdCell(c.Text)+" ("+c.Requirement+")")
			}
			fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
		}
	}
}

// mdCell makes s safe inside one Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}

func mdCells(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdCell(s)
	}
	return out
}
