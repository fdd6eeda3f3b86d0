package findingdoc

// The catalog for people: "wgperf explain ID" (Explanation.WriteText); the
// docs pages are written from the same explanations (docs_pages.go).

import (
	"fmt"
	"io"
	"strings"
)

// DocsDir is where the pages live in the repository; alerts and "wgperf
// explain" point there.
const DocsDir = "docs/findings"

// WriteText prints the explanation for a terminal ("wgperf explain ID").
func (e Explanation) WriteText(w io.Writer) error {
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
		if err == nil && e.bothEnds() {
			_, err = fmt.Fprintln(w, bothEnds)
		}
	} else {
		_, err = fmt.Fprintln(w, "\nwgperf fix has nothing to apply for it: the steps above find the cause.")
	}
	return err
}

// bothEnds says how a fix whose halves go on the two ends is applied.
const bothEnds = "Its two halves go on the two ends, and either alone cuts the tunnel: wgperf doctor --fix applies them as one " +
	"(the far end's first, rolled back unless the near end's is kept); by hand, apply each end's plan at once, the far end's first."

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
