package fix

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

// fakeHost is a scripted target for plan tests: command lines map to recorded
// answers, files live in memory, and it records what would have run.
type fakeHost struct {
	mu      sync.Mutex
	spec    string
	answers map[string]answer // shell.Join(name, args...) -> answer
	files   map[string]string
	ran     []string
	// fallback, when set, answers commands and file reads nothing scripted.
	fallback func(line string) (answer, bool)
}

type answer struct {
	out  string
	code int // non-zero: fail with this exit status
}

func newFakeHost(spec string) *fakeHost {
	return &fakeHost{spec: spec, answers: map[string]answer{}, files: map[string]string{}}
}

func (f *fakeHost) on(cmd, out string)        { f.answers[cmd] = answer{out: out} }
func (f *fakeHost) fail(cmd string, code int) { f.answers[cmd] = answer{code: code} }

func (f *fakeHost) String() string { return f.spec }

func (f *fakeHost) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	return f.RunInput(ctx, nil, name, args...)
}

func (f *fakeHost) RunInput(_ context.Context, _ []byte, name string, args ...string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	line := shell.Join(name, args...)
	f.ran = append(f.ran, line)
	if name == "sh" && len(args) == 2 && args[0] == "-c" {
		if p, ok := strings.CutPrefix(args[1], "test -e "); ok {
			if _, ok := f.files[p]; ok {
				return nil, nil
			}
			return nil, &target.Error{Target: f.spec, Command: line, ExitCode: 1}
		}
	}
	if name == "stat" && len(args) == 3 {
		if _, ok := f.files[args[2]]; ok {
			if strings.HasPrefix(args[2], "/etc/wireguard/") {
				return []byte("600\n"), nil
			}
			return []byte("644\n"), nil
		}
	}
	a, ok := f.answers[line]
	if !ok && f.fallback != nil {
		a, ok = f.fallback(line)
	}
	if !ok {
		return nil, &target.Error{Target: f.spec, Command: line, ExitCode: 127, Stderr: "fake host: no answer scripted for: " + line}
	}
	if a.code != 0 {
		return nil, &target.Error{Target: f.spec, Command: line, ExitCode: a.code, Stderr: a.out}
	}
	return []byte(a.out), nil
}

func (f *fakeHost) ReadFile(_ context.Context, path string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[path]
	if !ok && f.fallback != nil {
		var a answer
		a, ok = f.fallback("read " + path)
		s = a.out
	}
	if !ok {
		return nil, &target.Error{Target: f.spec, Command: "read " + path, ExitCode: -1, Err: os.ErrNotExist}
	}
	return []byte(s), nil
}

func (f *fakeHost) WriteFile(_ context.Context, path string, data []byte, _ os.FileMode) error {
	return fmt.Errorf("fake host: plan tests must not write %s", path)
}

func (f *fakeHost) Stream(context.Context, io.Reader, io.Writer, io.Writer, string, ...string) error {
	return fmt.Errorf("fake host: plan tests must not stream programs")
}

func (f *fakeHost) Start(context.Context, string, ...string) (*target.Process, error) {
	return nil, fmt.Errorf("fake host: plan tests must not start programs")
}
