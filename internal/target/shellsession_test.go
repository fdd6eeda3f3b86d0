package target

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeRemote is an ssh-like target whose "connection" is a local program:
// wrap runs the remote command line through sh -c as ssh's server would,
// and counts the connections made.
func fakeRemote(connections *atomic.Int32) *argvTarget {
	return &argvTarget{
		spec:   "ssh:fake",
		remote: true,
		wrap: func(_ []string, name string, args []string) []string {
			connections.Add(1)
			return []string{"sh", "-c", commandLine(name, args)}
		},
		missing: func(code int, _ string) bool { return code == 127 },
	}
}

func TestShellRunsEveryCommandInOneProcess(t *testing.T) {
	var conns atomic.Int32
	s, closeShell := Shell(fakeRemote(&conns))
	defer closeShell()
	ctx := context.Background()
	cases := []struct {
		name    string
		args    []string
		out     string
		code    int
		stderr  string
		missing bool
	}{
		{name: "echo", args: []string{"two words", "it's"}, out: "two words it's\n"},
		{name: "printf", args: []string{"no newline"}, out: "no newline"},
		{name: "printf", args: []string{"\n\n"}, out: "\n\n"},
		{name: "true", out: ""},
		{name: "sh", args: []string{"-c", "echo out; echo why >&2; exit 3"}, out: "out\n", code: 3, stderr: "why"},
		{name: "wgperf-no-such-program", code: 127, missing: true},
		// A command reading its standard input gets nothing: it must not eat the shell's next commands.
		{name: "cat", out: ""},
		// Output that looks like the framing is output.
		{name: "printf", args: []string{"\nwgperf-0 0\n"}, out: "\nwgperf-0 0\n"},
	}
	for _, c := range cases {
		out, err := s.Run(ctx, c.name, c.args...)
		if string(out) != c.out {
			t.Errorf("%s %q: output %q, want %q", c.name, c.args, out, c.out)
		}
		var te *Error
		switch {
		case c.code == 0 && err != nil:
			t.Errorf("%s %q: %v", c.name, c.args, err)
		case c.code != 0 && (!errors.As(err, &te) || te.ExitCode != c.code):
			t.Errorf("%s %q: err %v, want exit status %d", c.name, c.args, err, c.code)
		case c.stderr != "" && strings.TrimSpace(te.Stderr) != c.stderr:
			t.Errorf("%s %q: stderr %q, want %q", c.name, c.args, te.Stderr, c.stderr)
		case IsNotFound(err) != c.missing:
			t.Errorf("%s %q: not found = %v, want %v (%v)", c.name, c.args, IsNotFound(err), c.missing, err)
		}
	}
	// Output larger than one read, across the reads' boundaries.
	out, err := s.Run(ctx, "sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line$i; i=$((i+1)); done")
	if err != nil || strings.Count(string(out), "\n") != 20000 || !strings.HasSuffix(string(out), "line19999\n") {
		t.Errorf("long output: %d lines, %v", strings.Count(string(out), "\n"), err)
	}
	if b, err := s.ReadFile(ctx, "/proc/self/status"); err != nil || !strings.Contains(string(b), "Name:\tcat") {
		t.Errorf("ReadFile: %.40q, %v", b, err)
	}
	// Commands from several goroutines take turns.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := strings.Repeat("x", i*1000)
			if out, err := s.Run(ctx, "printf", "%s", want); err != nil || string(out) != want {
				t.Errorf("concurrent run %d: %d bytes, %v", i, len(out), err)
			}
		}()
	}
	wg.Wait()
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestShellCutShortEndsIt(t *testing.T) {
	var conns atomic.Int32
	s, closeShell := Shell(fakeRemote(&conns))
	defer closeShell()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := s.Run(ctx, "sleep", "5"); err == nil {
		t.Fatal("sleep 5 within 200 ms: no error")
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("a command past its context took %s to fail", took)
	}
	// The shell is gone: the next command fails at once, naming itself.
	if _, err := s.Run(context.Background(), "true"); err == nil || !strings.Contains(err.Error(), "ssh:fake: true") {
		t.Errorf("after a command cut short: %v", err)
	}
	// An output over the read budget is cut and ends the shell too.
	s2, close2 := Shell(fakeRemote(&conns))
	defer close2()
	out, err := s2.Run(WithReadBudget(context.Background(), 1<<20), "sh", "-c", "while :; do echo 0123456789abcdef; done")
	if !errors.Is(err, ErrOutputTooLarge) || len(out) != 1<<20 {
		t.Errorf("endless output: %d bytes, %v", len(out), err)
	}
}

func TestShellOfAConnectionThatFails(t *testing.T) {
	failing := &argvTarget{spec: "ssh:down", remote: true,
		wrap: func(_ []string, _ string, _ []string) []string {
			return []string{"sh", "-c", "echo 'ssh: connect to host down port 22: Connection refused' >&2; exit 255"}
		}}
	s, closeShell := Shell(failing)
	defer closeShell()
	for range 2 {
		_, err := s.Run(context.Background(), "uname", "-r")
		var te *Error
		if !errors.As(err, &te) || te.ExitCode != 255 || err.Error() != "ssh:down: uname -r: ssh: connect to host down port 22: Connection refused" {
			t.Errorf("err = %v", err)
		}
	}
}

func TestShellLeavesOtherKindsAlone(t *testing.T) {
	for _, tg := range []Target{Local(), Netns("x")} {
		if s, _ := Shell(tg); s != tg {
			t.Errorf("Shell(%s) is another target", tg)
		}
	}
}
