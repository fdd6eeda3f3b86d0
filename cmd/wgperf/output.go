package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// progressTo is where a long operation reports progress: standard error when
// it is a terminal (also with --json, whose document goes to standard
// output), otherwise nowhere (nil), so scripts and logs get results only.
// Progress names hosts' interfaces and addresses: their text is escaped.
func progressTo() io.Writer {
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return nil
	}
	return stderrProgress
}

// stderrProgress is standard error for progress lines, foreign text escaped.
var stderrProgress = shell.NewTerminalWriter(os.Stderr)

// writeJSON prints v as indented JSON, the --json output of every command.
func writeJSON(w io.Writer, kind string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeDocument(w, kind, raw)
}

// jsonSchemaVersion versions every JSON document wgperf prints; it grows
// when a field changes meaning or goes away (new fields do not bump it).
const jsonSchemaVersion = 1

// writeDocument prints a JSON object as a wgperf document: what it is
// (kind), which schema and wgperf wrote it and when, then its own fields.
// Fields the object already has (a snapshot's schema_version) stay as they are.
func writeDocument(w io.Writer, kind string, raw []byte) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' {
		return fmt.Errorf("internal error: %s output is not a JSON object", kind)
	}
	var have map[string]json.RawMessage
	if err := json.Unmarshal(raw, &have); err != nil {
		return err
	}
	var head bytes.Buffer
	head.WriteByte('{')
	for _, kv := range []struct {
		key string
		val any
	}{{"schema_version", jsonSchemaVersion}, {"kind", kind}, {"wgperf_version", version}, {"generated_at", time.Now().UTC().Format(time.RFC3339)}} {
		if _, ok := have[kv.key]; ok {
			continue
		}
		b, _ := json.Marshal(kv.val)
		fmt.Fprintf(&head, "%q:%s,", kv.key, b)
	}
	body := raw[1:]
	if len(have) == 0 {
		head.Truncate(head.Len() - 1) // no fields follow the last comma
	}
	var out bytes.Buffer
	if err := json.Indent(&out, append(head.Bytes(), body...), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := w.Write(out.Bytes())
	return err
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
func writeResult(w io.Writer, kind string, r textWriter, asJSON bool) error {
	if asJSON {
		return writeJSON(w, kind, r)
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
