package main

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/report"
	"github.com/wgperf/wgperf/internal/shell"
)

// progressTo is where a long operation reports progress: standard error when
// it is a terminal (also with --json, whose document goes to standard
// output), otherwise nowhere (nil), so scripts and logs get results only;
// --progress always or never decides instead ("ssh host wgperf doctor" has
// no terminal and may still want to see it move). Progress names hosts'
// interfaces and addresses: their text is escaped.
func progressTo() io.Writer {
	switch progress.mode {
	case "never":
		return nil
	case "always":
		return stderrProgress
	}
	if f, ok := stderrProgress.w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return stderrProgress
}

// progressModes are what --progress takes.
var progressModes = []string{"auto", "always", "never"}

// progressFlag is --progress: auto (a terminal on standard error), always or never.
type progressFlag struct{ mode string }

func (p *progressFlag) String() string  { return p.mode }
func (p *progressFlag) Type() string    { return "mode" }
func (p *progressFlag) Words() []string { return progressModes }
func (p *progressFlag) Set(s string) error {
	for _, m := range progressModes {
		if s == m {
			p.mode = s
			return nil
		}
	}
	return fmt.Errorf("%q: want auto, always or never", s)
}

// progress is this run's --progress (newRoot resets it).
var progress = progressFlag{mode: "auto"}

// progressWriter is standard error for progress lines, foreign text escaped.
type progressWriter struct {
	*shell.TerminalWriter
	w io.Writer
}

// stderrProgress is where progress goes when it is shown (run points it at
// the run's standard error).
var stderrProgress = newProgressWriter(os.Stderr)

func newProgressWriter(w io.Writer) progressWriter {
	return progressWriter{shell.NewTerminalWriter(w), w}
}

// writeJSON prints v as a document of kind, the --json output of every command.
func writeJSON(w io.Writer, kind document.Kind, v any) error {
	return document.Write(w, kind, version, v)
}

// progressLines returns a func printing "wgperf: LINE" progress where
// progressTo would, and doing nothing elsewhere.
func progressLines() func(string) {
	w := progressTo()
	if w == nil {
		return func(string) {}
	}
	return func(s string) { fmt.Fprintln(w, "wgperf:", shell.Terminal(s)) }
}

// textWriter is a result that renders itself for a person.
type textWriter interface{ WriteText(io.Writer) error }

// writeResult prints a command's result as JSON or as text.
func writeResult(w io.Writer, kind document.Kind, r textWriter, asJSON bool) error {
	if asJSON {
		return writeJSON(w, kind, r)
	}
	return r.WriteText(w)
}

// printResult ends a probe's command: its result as JSON or text, the HTML
// report of it (doc) when htmlPath is set, and the exit code of fs.
func printResult(w io.Writer, kind document.Kind, r textWriter, asJSON bool, htmlPath string, doc func() report.Document, fs []finding.Finding) error {
	if err := writeResult(w, kind, r, asJSON); err != nil {
		return couldNotRun(err)
	}
	if htmlPath != "" {
		if err := report.WriteFile(htmlPath, doc()); err != nil {
			return err
		}
	}
	return findingsExit(fs)
}

// findingsExit maps the worst finding to the exit code: 0 for none or info
// only, 1 for a warning, 2 for a critical finding.
func findingsExit(fs []finding.Finding) error {
	worst, any := finding.Worst(fs)
	switch {
	case !any || worst == finding.Info:
		return nil
	case worst == finding.Critical:
		return &ExitError{Code: exitCritical}
	}
	return &ExitError{Code: exitWarning}
}

// useColor: colours only on a terminal, and never when NO_COLOR is set
// (no-color.org).
func useColor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	switch w := w.(type) {
	case *stdoutWriter:
		return w.tty
	case *os.File:
		return term.IsTerminal(int(w.Fd()))
	}
	return false
}
