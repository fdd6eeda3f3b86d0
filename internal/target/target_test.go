package target

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		spec, want, err string
	}{
		{spec: "", want: "local"},
		{spec: "local", want: "local"},
		{spec: "netns:site-a", want: "netns:site-a"},
		{spec: "netns:", err: `target "netns:": netns name must be a plain name`},
		{spec: "netns:a/b", err: "netns name must be a plain name"},
		{spec: "ssh:golem", want: "ssh:golem"},
		{spec: "ssh:root@golem:2222", want: "ssh:root@golem:2222"},
		{spec: "ssh:root@[2001:db8::1]:22", want: "ssh:root@[2001:db8::1]:22"},
		{spec: "ssh:golem:99999", err: `target "ssh:golem:99999": bad port "99999"`},
		{spec: "ssh:@golem", err: "empty user before @"},
		{spec: "ssh:", err: "want ssh:[user@]host[:port]"},
		{spec: "ssh:fe80::1%eth0", want: "ssh:fe80::1%eth0"},
		{spec: "ssh:svc.wg@router-1.example.org", want: "ssh:svc.wg@router-1.example.org"},
		{spec: "netns:-x", err: "netns name must be a plain name"},
		{spec: "golem", err: `target "golem": want local, netns:NAME or ssh:[user@]host[:port]`},
	}
	for _, tt := range tests {
		got, err := Parse(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Parse(%q) error = %v, want it to contain %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if got.String() != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.spec, got, tt.want)
		}
	}
}

func TestSSHArgv(t *testing.T) {
	const remote = "/usr/bin/env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin cat /proc/net/snmp"
	tests := []struct {
		spec string
		want []string
	}{
		{"root@golem:2222", []string{"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-p", "2222", "-l", "root", "--", "golem", remote}},
		{"[2001:db8::1]", []string{"ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "--", "2001:db8::1", remote}},
	}
	for _, tt := range tests {
		s, err := parseSSHSpec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, s.argv(nil, "cat", []string{"/proc/net/snmp"})); diff != "" {
			t.Errorf("argv(%q) (-want +got):\n%s", tt.spec, diff)
		}
	}
}

// TestSSHRejectsOptionInjection is hole 3: a host or user that ssh would read
// as an option (or a shell as syntax) is refused before ssh runs, and "--"
// ends ssh's options before the destination in any case.
func TestSSHRejectsOptionInjection(t *testing.T) {
	for _, spec := range []string{
		"ssh:-oProxyCommand=touch /tmp/pwned",
		"ssh:-oProxyCommand=touch${IFS}/tmp/pwned",
		"ssh:root@-oProxyCommand=x",
		"ssh:-oProxyCommand=x@golem",
		"ssh:-l@golem",
		"ssh:golem;reboot",
		"ssh:$(reboot)",
		"ssh:gol\nem",
		"ssh:golem\n",
		"ssh:[-x]:22",
		"ssh:ro ot@golem",
	} {
		if _, err := Parse(spec); err == nil {
			t.Errorf("Parse(%q) accepted", spec)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q) error carries a raw newline: %q", spec, err)
		}
	}
	argv := sshSpec{Host: "-oProxyCommand=x"}.argv(nil, "true", nil)
	dash, host := -1, -1
	for i, a := range argv {
		if a == "--" && dash < 0 {
			dash = i
		}
		if a == "-oProxyCommand=x" {
			host = i
		}
	}
	if dash < 0 || host < dash {
		t.Errorf("argv %q: the destination is not after \"--\"", argv)
	}
}

func TestLocalRunErrors(t *testing.T) {
	ctx := context.Background()
	_, err := Local().Run(ctx, "wgperf-no-such-program")
	if !IsNotFound(err) {
		t.Fatalf("missing program: err = %v, want not found", err)
	}
	if want := "local: wgperf-no-such-program: wgperf-no-such-program: command not found"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	_, err = Local().Run(ctx, "sh", "-c", "echo first >&2; echo 'the reason' >&2; exit 3")
	var te *Error
	if !errors.As(err, &te) || te.ExitCode != 3 {
		t.Fatalf("err = %#v, want *Error with exit 3", err)
	}
	if !strings.HasPrefix(err.Error(), "local: sh -c ") || !strings.HasSuffix(err.Error(), ": the reason") {
		t.Errorf("error = %q, want target, command and last stderr line", err)
	}
}

func TestLocalFiles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.conf")
	if err := Local().WriteFile(ctx, path, []byte("MTU = 1380\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Local().ReadFile(ctx, path)
	if err != nil || string(got) != "MTU = 1380\n" {
		t.Fatalf("ReadFile = %q, %v", got, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	if _, err := Local().ReadFile(ctx, filepath.Join(t.TempDir(), "missing")); err == nil || !strings.HasPrefix(err.Error(), "local: read ") {
		t.Errorf("missing file error = %v", err)
	}
}

func TestStartAndStop(t *testing.T) {
	p, err := Local().Start(context.Background(), "sleep", "30")
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() {
		t.Fatal("sleep exited at once")
	}
	if err := p.Stop(0); err != nil {
		t.Fatal(err)
	}
	if !p.Exited() {
		t.Error("process still running after Stop")
	}
}

// TestSweepSocketDirs: the socket directory of a process that no longer
// exists goes; one of a live process stays.
func TestSweepSocketDirs(t *testing.T) {
	base := t.TempDir()
	t.Setenv("TMPDIR", base)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(base, fmt.Sprintf("wgperf-ssh-%d-1", dead.Process.Pid))
	live := filepath.Join(base, fmt.Sprintf("wgperf-ssh-%d-2", os.Getppid()))
	for _, d := range []string{gone, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	sweepSocketDirs()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("dead process's directory still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live process's directory removed: %v", err)
	}
}

// TestErrorIsOneLine is issue 30 item 11: a failed shell script on a target is
// one line naming the start of the command and the reason, never a dump of
// the script (non-root "fix --apply" printed 14 lines of sh -c source).
func TestErrorIsOneLine(t *testing.T) {
	script := "umask 077\nmkdir -p \"$1\" || exit 1\n" + strings.Repeat("echo padding\n", 20) + "echo 'the reason' >&2; exit 1"
	_, err := Local().Run(context.Background(), "sh", "-c", script, "sh", "/x")
	if err == nil || strings.Contains(err.Error(), "\n") || len(err.Error()) > 160 {
		t.Fatalf("err = %q, want one short line", err)
	}
	if want := "local: sh -c 'umask 077 …: the reason"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
	long := strings.Repeat("x", 300)
	_, err = Local().Run(context.Background(), "sh", "-c", "echo no >&2; exit 2", long)
	if err == nil || strings.Contains(err.Error(), long) || !strings.HasSuffix(err.Error(), " …: no") {
		t.Errorf("err = %q, want the command cut at 100 characters", err)
	}
}
