package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// progressTo is where a long operation reports progress: standard error when
// it is a terminal and the output is not JSON, otherwise nowhere (nil).
func progressTo(asJSON bool) io.Writer {
	if asJSON || !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return os.Stderr
}

// writeJSON prints v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progressLines returns a func printing "wgperf: LINE" progress where
// progressTo would, and doing nothing elsewhere.
func progressLines(asJSON bool) func(string) {
	w := progressTo(asJSON)
	if w == nil {
		return func(string) {}
	}
	return func(s string) { fmt.Fprintln(w, "wgperf:", shell.Terminal(s)) }
}

// textWriter is a result that renders itself for a person.
type textWriter interface{ WriteText(io.Writer) error }

// writeResult prints a command's result as JSON or as text.
func writeResult(w io.Writer, r textWriter, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	return r.WriteText(w)
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
