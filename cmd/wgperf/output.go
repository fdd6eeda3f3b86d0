package main

import (
	"io"
	"os"

	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/cli"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/report"
)

// progress is this run's: run points it at the run's standard error, and
// newRoot resets its --progress.
var progress = cli.NewProgress(os.Stderr)

// progressTo is where a long operation reports progress (cli.Progress.To):
// nil when it is not shown.
func progressTo() io.Writer { return progress.To() }

// writeJSON prints v as a document of kind, the --json output of every command.
func writeJSON(w io.Writer, kind document.Kind, v any) error {
	return document.Write(w, kind, version, v)
}

// progressLines returns a func printing "wgperf: LINE" progress where
// progressTo would, and doing nothing elsewhere.
func progressLines() func(string) { return progress.Lines() }

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
