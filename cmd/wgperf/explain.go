package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/findingdoc"
)

// coverageDoc renders docs/coverage.md from the finding and scenario
// catalogs; nil in the router build, which leaves the scenarios out
// (coverage.go).
var coverageDoc func() string

func checksCmd() *cobra.Command {
	var (
		asJSON   bool
		markdown string
		coverage string
	)
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List every finding wgperf can report: its stable ID and what it means",
		Long: `checks lists the finding catalog from this binary: each stable ID (the one JSON,
alerts and "wgperf fix --only" use), its title and what reports it. "wgperf
explain ID" says what raises one, why it matters and what fixes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if markdown != "" || coverage != "" { // make docs
				if coverage != "" {
					if coverageDoc == nil {
						return fmt.Errorf("--coverage: the coverage page is written from the lab's scenarios, which the router build leaves out")
					}
					if err := os.WriteFile(coverage, []byte(coverageDoc()), 0o644); err != nil {
						return err
					}
				}
				if markdown == "" {
					return nil
				}
				return findingdoc.WriteDocs(markdown)
			}
			all := findingdoc.Explanations()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), document.Checks, map[string]any{"checks": all})
			}
			return findingdoc.WriteTable(cmd.OutOrStdout(), all)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as JSON")
	cmd.Flags().StringVar(&markdown, "markdown", "", "write a Markdown page per finding and their index into this directory (make docs)")
	_ = cmd.Flags().MarkHidden("markdown")
	cmd.Flags().StringVar(&coverage, "coverage", "", "write what wgperf covers of the five cases, from the catalogs, to this file (make docs: docs/coverage.md)")
	_ = cmd.Flags().MarkHidden("coverage")
	return cmd
}

func explainCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "explain ID",
		Short: "Say what a finding means, what raises it and how it is fixed",
		Example: `  wgperf explain mtu.pmtud-blackhole
  wgperf checks    # every ID`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: catalogIDs(),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, ok := findingdoc.Explain(finding.ID(args[0]))
			if !ok {
				hint := "wgperf checks lists them"
				if s := findingdoc.Suggest(args[0]); len(s) > 0 {
					hint = "did you mean " + finding.JoinIDs(s, ", ") + "?"
				}
				return couldNotRun(fmt.Errorf("no finding %q: %s", args[0], hint))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), document.Explanation, e)
			}
			return e.WriteText(cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the explanation as JSON")
	return cmd
}

// catalogIDs are the finding IDs, for completion and argument checks.
func catalogIDs() []string {
	var out []string
	for _, id := range catalog.IDs() {
		out = append(out, string(id))
	}
	return out
}
