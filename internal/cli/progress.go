package cli

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/wgperf/wgperf/internal/shell"
)

// Progress is where a run's long operations report progress: its standard
// error, and --progress (Mode) deciding whether they show.
type Progress struct {
	Mode ProgressMode
	w    stderrWriter
}

// NewProgress is the progress of a run whose standard error is stderr,
// --progress auto.
func NewProgress(stderr io.Writer) *Progress {
	return &Progress{Mode: "auto", w: stderrWriter{shell.NewTerminalWriter(stderr), stderr}}
}

// stderrWriter is standard error for progress lines, foreign text escaped.
type stderrWriter struct {
	*shell.TerminalWriter
	w io.Writer
}

// To is where a long operation reports progress: standard error when it is
// a terminal (also with --json, whose document goes to standard output),
// otherwise nowhere (nil), so scripts and logs get results only; --progress
// always or never decides instead ("ssh host wgperf doctor" has no terminal
// and may still want to see it move). Progress names hosts' interfaces and
// addresses: their text is escaped.
func (p *Progress) To() io.Writer {
	switch p.Mode {
	case "never":
		return nil
	case "always":
		return p.w
	}
	if f, ok := p.w.w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return p.w
}

// Lines returns a func printing "wgperf: LINE" progress where To would, and
// doing nothing elsewhere.
func (p *Progress) Lines() func(string) {
	w := p.To()
	if w == nil {
		return func(string) {}
	}
	return func(s string) { fmt.Fprintln(w, "wgperf:", shell.Terminal(s)) }
}

// progressModes are what --progress takes.
var progressModes = []string{"auto", "always", "never"}

// ProgressMode is --progress: auto (a terminal on standard error), always or never.
type ProgressMode string

func (p *ProgressMode) String() string  { return string(*p) }
func (p *ProgressMode) Type() string    { return "mode" }
func (p *ProgressMode) Words() []string { return progressModes }
func (p *ProgressMode) Set(s string) error {
	for _, m := range progressModes {
		if s == m {
			*p = ProgressMode(s)
			return nil
		}
	}
	return fmt.Errorf("%q: want auto, always or never", s)
}
