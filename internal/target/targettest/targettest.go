// Package targettest is the one fake target.Target of wgperf's tests: a host
// whose commands and file reads are answered from a script (recorded real
// outputs, mostly), whose files live in memory, which records every command
// that ran and which refuses to be changed, so a test that plans or samples
// through it proves it only read.
package targettest

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Answer is a scripted command's result: its standard output, and with a
// non-zero Code a failure carrying Stderr.
type Answer struct {
	Out    string
	Stderr string
	Code   int
}

// Host is a scripted target. Commands are looked up by their shell line
// (shell.Join(name, args...)), then handed to Fallback; one neither knows
// fails as a program that is not installed. "sh -c 'test -e PATH'" and
// "stat -c %a PATH" are answered from Files (Mode gives the mode, "644" when
// nil).
type Host struct {
	Spec     string
	Answers  map[string]Answer
	Files    map[string]string
	Fallback func(line string) (Answer, bool) // also asked for "read PATH" of a file not in Files
	Mode     func(path string) string

	mu  sync.Mutex
	ran []string
}

var _ target.Target = (*Host)(nil)

// New is an empty Host named spec ("ssh:root@linux").
func New(spec string) *Host {
	return &Host{Spec: spec, Answers: map[string]Answer{}, Files: map[string]string{}}
}

// On scripts a command's output.
func (h *Host) On(line, out string) { h.Answers[line] = Answer{Out: out} }

// Fail scripts a command that exits with code.
func (h *Host) Fail(line string, code int) { h.Answers[line] = Answer{Code: code} }

// Ran is every command line that ran, in order.
func (h *Host) Ran() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ran...)
}

func (h *Host) String() string { return h.Spec }

func (h *Host) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return h.RunInput(ctx, nil, name, args...)
}

func (h *Host) RunInput(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	line := shell.Join(name, args...)
	h.ran = append(h.ran, line)
	if name == "sh" && len(args) == 2 && args[0] == "-c" {
		if p, ok := strings.CutPrefix(args[1], "test -e "); ok {
			if _, ok := h.Files[p]; ok {
				return nil, nil
			}
			return nil, &target.Error{Target: h.Spec, Command: line, ExitCode: 1}
		}
	}
	if name == "stat" && len(args) == 3 {
		if _, ok := h.Files[args[2]]; ok {
			mode := "644"
			if h.Mode != nil {
				mode = h.Mode(args[2])
			}
			return []byte(mode + "\n"), nil
		}
	}
	a, ok := h.Answers[line]
	if !ok && h.Fallback != nil {
		a, ok = h.Fallback(line)
	}
	if !ok {
		return nil, &target.Error{Target: h.Spec, Command: line, ExitCode: 127,
			Stderr: "fake host: no answer scripted for: " + line, Err: target.ErrNotFound}
	}
	if a.Code != 0 {
		return []byte(a.Out), &target.Error{Target: h.Spec, Command: line, ExitCode: a.Code, Stderr: a.Stderr}
	}
	return []byte(a.Out), nil
}

func (h *Host) ReadFile(_ context.Context, path string) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.Files[path]
	if !ok && h.Fallback != nil {
		var a Answer
		a, ok = h.Fallback("read " + path)
		s = a.Out
	}
	if !ok {
		return nil, &target.Error{Target: h.Spec, Command: "read " + path, ExitCode: -1, Err: os.ErrNotExist}
	}
	return []byte(s), nil
}

func (h *Host) WriteFile(_ context.Context, path string, _ []byte, _ os.FileMode) error {
	return fmt.Errorf("fake host %s is read-only: a test wrote %s", h.Spec, path)
}

func (h *Host) Stream(context.Context, io.Reader, io.Writer, io.Writer, string, ...string) error {
	return fmt.Errorf("fake host %s: a test streamed a program", h.Spec)
}

func (h *Host) Start(context.Context, string, ...string) (*target.Process, error) {
	return nil, fmt.Errorf("fake host %s: a test started a program", h.Spec)
}

// Spec is the target.Spec a finding, snapshot or report of a test carries
// for the host named text: the parsed spec, for "" no host (the zero
// Spec), and for a name that is no spec ("a", "the other end") a
// stand-in's (target.Of), which is Same only as itself and does not read
// back from JSON.
func Spec(text string) target.Spec {
	if text == "" {
		return target.Spec{}
	}
	if s, err := target.ParseSpec(text); err == nil {
		return s
	}
	return target.Of(New(text))
}
