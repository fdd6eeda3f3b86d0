package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

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
