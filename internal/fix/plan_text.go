package fix

import (
	"fmt"
	"io"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

// A plan for people: the text "wgperf fix" prints and the shell script of
// --print-script.

func (p *Plan) platformName() string {
	if p.Platform == remedy.OpenWrt {
		return "OpenWrt"
	}
	return "Linux"
}

// WriteText prints the plan for a person: what, why, exact commands, files
// touched (as a line diff) and how each step is undone.
func (p *Plan) WriteText(w io.Writer) error {
	pw := &errWriter{w: w}
	pw.printf("Fix plan for %s (%s, kernel %s): %d to change, %d already in place.\n",
		p.Host, p.platformName(), p.Kernel, p.Pending(), len(p.Items)-p.Pending())
	for i, it := range p.Items {
		st := it.Step
		pw.printf("\n%d. [%s] %s\n", i+1, finding.JoinIDs(it.Findings, ", "), it.rem.Describe())
		if it.Description != "" {
			pw.printf("   why: %s\n", it.Description)
		}
		pw.printf("   now: %s\n", st.Summary)
		if st.Done {
			pw.printf("   already in place, nothing to do\n")
			continue
		}
		for _, f := range st.Files {
			state := "edit"
			if !f.Existed {
				state = "new"
			}
			pw.printf("   file %s (%s):\n", f.Path, state)
			for _, l := range lineDiff(remedy.RedactKeys(f.Old), remedy.RedactKeys(f.New)) {
				pw.printf("     %s\n", l)
			}
		}
		if len(st.Commands) > 0 {
			pw.printf("   run:\n")
			for _, c := range st.Commands {
				pw.printf("     %s\n", indentMore(c, "     "))
			}
		}
		if len(st.Undo) > 0 || len(st.Files) > 0 {
			pw.printf("   undo:\n")
			for _, c := range st.Undo {
				pw.printf("     %s\n", indentMore(c, "     "))
			}
			for _, f := range st.Files {
				if f.Existed {
					pw.printf("     restore %s\n", f.Path)
				} else {
					pw.printf("     rm %s\n", f.Path)
				}
			}
		}
		for _, n := range st.Notes {
			pw.printf("   note: %s\n", n)
		}
	}
	for _, m := range p.Manual {
		pw.printf("\n- [%s] %s (by hand; wgperf has no action for it)\n", m.Finding, m.Fix.Description)
		for _, c := range m.Fix.Commands {
			pw.printf("     %s\n", c)
		}
		for _, c := range m.Fix.Config {
			pw.printf("   in %s:\n", c.Path)
			for _, l := range c.Lines {
				pw.printf("     %s\n", l)
			}
		}
	}
	return pw.err
}

func indentMore(s, ind string) string { return strings.ReplaceAll(s, "\n", "\n"+ind) }

// lineDiff shows the lines new adds ("+") and old loses ("-"), in file order.
func lineDiff(old, new []byte) []string {
	o, n := splitLines(string(old)), splitLines(string(new))
	inOld, inNew := map[string]int{}, map[string]int{}
	for _, l := range o {
		inOld[l]++
	}
	for _, l := range n {
		inNew[l]++
	}
	var out []string
	for _, l := range o {
		if inNew[l] == 0 {
			out = append(out, "- "+l)
		}
	}
	for _, l := range n {
		if inOld[l] == 0 {
			out = append(out, "+ "+l)
		}
	}
	return out
}

// WriteScript prints the plan as a POSIX shell script for people who apply
// changes by hand; each step's rollback is in comments below it.
func (p *Plan) WriteScript(w io.Writer) error {
	pw := &errWriter{w: w}
	pw.printf("#!/bin/sh\n# wgperf fix plan for %s (%s, kernel %s).\n", shell.Comment(p.Host), p.platformName(), shell.Comment(p.Kernel))
	pw.printf("# Review it, then run it as root on that host. Each step's rollback is in the comments below it.\nset -eu\n")
	for i, it := range p.Items {
		st := it.Step
		pw.printf("\n# %d. [%s] %s\n", i+1, shell.Comment(finding.JoinIDs(it.Findings, ", ")), shell.Comment(it.rem.Describe()))
		pw.printf("#    now: %s\n", shell.Comment(st.Summary))
		if st.Done {
			pw.printf("#    already in place, nothing to do\n")
			continue
		}
		for _, n := range st.Notes {
			pw.printf("#    note: %s\n", shell.Comment(n))
		}
		for _, f := range st.Files {
			if len(f.Edit) > 0 {
				for _, e := range f.Edit {
					pw.printf("%s\n", e)
				}
				continue
			}
			pw.printf("mkdir -p %s\n", shell.Join(remedy.Dir(f.Path)))
			if remedy.HasRedacted(remedy.RedactKeys(f.New)) {
				// Keys stay on the host: the script takes them from the live file.
				pw.printf("%s\n", writeLines(f.Path, f.New, fileModeOf(f), "{ echo "+shell.Quote("wgperf: "+f.Path+" not written: its key lines could not be taken from the live file")+" >&2; exit 1; }"))
			} else {
				pw.printf("%s\n", remedy.Heredoc(f.Path, f.New))
			}
		}
		for _, c := range st.Commands {
			pw.printf("%s\n", c)
		}
		pw.printf("# rollback:\n")
		for _, c := range st.Undo {
			for _, line := range strings.Split(c, "\n") {
				pw.printf("#   %s\n", shell.Comment(line))
			}
		}
		for _, f := range st.Files {
			if !f.Existed {
				pw.printf("#   rm -f %s\n", shell.Comment(shell.Quote(f.Path)))
				continue
			}
			pw.printf("#   restore %s to its previous content:\n", shell.Comment(f.Path))
			for _, l := range lineDiff(remedy.RedactKeys(f.New), remedy.RedactKeys(f.Old)) {
				pw.printf("#     %s\n", shell.Comment(l))
			}
		}
	}
	return pw.err
}

// splitLines splits text into lines without a trailing empty one.
func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
