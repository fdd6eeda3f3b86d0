package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
)

func checksCmd() *cobra.Command {
	var (
		asJSON   bool
		markdown string
	)
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List every finding wgperf can report: its stable ID and what it means",
		Long: `checks lists the finding catalog from this binary: each stable ID (the one JSON,
alerts and "wgperf fix --only" use), its title and what reports it. "wgperf
explain ID" says what raises one, why it matters and what fixes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if markdown != "" { // make docs
				return writeFindingDocs(markdown)
			}
			all := check.Explanations()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), document.Checks, map[string]any{"checks": all})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tREPORTED BY\tMEANING")
			for _, e := range all {
				var by []string
				for _, s := range e.By {
					by = append(by, s.Kind)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e.ID, strings.Join(by, ", "), e.Title)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as JSON")
	cmd.Flags().StringVar(&markdown, "markdown", "", "write a Markdown page per finding and their index into this directory (make docs)")
	_ = cmd.Flags().MarkHidden("markdown")
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
			e, ok := check.Explain(finding.ID(args[0]))
			if !ok {
				hint := "wgperf checks lists them"
				if s := check.Suggest(args[0]); len(s) > 0 {
					hint = "did you mean " + finding.JoinIDs(s, ", ") + "?"
				}
				return couldNotRun(fmt.Errorf("no finding %q: %s", args[0], hint))
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), document.Explanation, e)
			}
			return writeExplanation(cmd.OutOrStdout(), e)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the explanation as JSON")
	return cmd
}

func writeExplanation(w io.Writer, e check.Explanation) error {
	fmt.Fprintf(w, "%s: %s\n", e.ID, e.Title)
	fmt.Fprintln(w, "\nWhy it matters:")
	for _, line := range wrapText(e.Why, 76) {
		fmt.Fprintln(w, "  "+line)
	}
	for _, s := range e.By {
		fmt.Fprintf(w, "\nReported by the %s %q:\n", s.Kind, s.Name)
		for _, line := range strings.Split(strings.TrimSpace(s.Doc), "\n") {
			fmt.Fprintln(w, "  "+strings.TrimSpace(line))
		}
	}
	fmt.Fprintf(w, "\n%s\n", caseSentence(e.Cases))
	if len(e.Example.Fixes) > 0 {
		fmt.Fprintln(w)
		for _, line := range wrapText("Example fix, when "+e.Example.Host+":", 78) {
			fmt.Fprintln(w, line)
		}
		for _, f := range e.Example.Fixes {
			fmt.Fprintln(w, "  "+f.Description)
			for _, c := range f.Commands {
				fmt.Fprintln(w, "    $ "+c)
			}
			for _, c := range f.Config {
				fmt.Fprintf(w, "    persist in %s:\n", c.Path)
				for _, l := range c.Lines {
					fmt.Fprintln(w, "      "+l)
				}
			}
		}
	}
	var err error
	if e.Applicable() {
		_, err = fmt.Fprintf(w, "\nFix it with: wgperf fix --host HOST --only %s (prints the plan for that host; --apply changes it)\n", e.ID)
	} else {
		_, err = fmt.Fprintln(w, "\nwgperf fix has nothing to apply for it: the steps above find the cause.")
	}
	return err
}

// catalogIDs are the finding IDs, for completion and argument checks.
func catalogIDs() []string {
	var out []string
	for _, id := range check.IDs() {
		out = append(out, string(id))
	}
	return out
}

// caseSentence names the real cases a finding comes from, in plain words.
func caseSentence(cases []string) string {
	switch len(cases) {
	case 0:
		return "Not from one case: it is a basic health check of every tunnel."
	case 1:
		return "From the case: " + cases[0] + "."
	}
	return "From the cases: " + strings.Join(cases, "; ") + "."
}

// wrapText breaks prose into lines of at most width columns.
func wrapText(s string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && len([]rune(cur))+1+len([]rune(word)) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}
