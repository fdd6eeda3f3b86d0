package target

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sshHome is a user's home with an ssh config (Includes among them) and a
// known_hosts file written by ssh itself, with hostile entries beside.
const sshHome = "../../testdata/ssh/home"

func TestSSHCompletions(t *testing.T) {
	want := []string{
		// ~/.ssh/config, in file order, Includes where they stand
		"ssh:golem", "ssh:m42", "ssh:router", "ssh:nas", "ssh:gw-berlin",
		"ssh:lab-gw", "ssh:lab-gw2", "ssh:build.example.net", // conf.d/*.conf
		"ssh:extra", // ~/.ssh/extra.conf
		"ssh:192.0.2.44", "ssh:[fd00::5]",
		"ssh:looped", // once, though included 16 times
		// ~/.ssh/known_hosts
		"ssh:127.0.0.1:22022", "ssh:localhost:22022", "ssh:[::1]:22022",
		"ssh:golem.example.net", "ssh:192.0.2.10",
		"ssh:gw-lisbon.example.net:2222", "ssh:203.0.113.7:2222",
		"ssh:good.example.org",
	}
	got := sshCompletions(sshHome)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("completions (-want +got):\n%s", diff)
	}
	for _, spec := range got {
		if _, err := ParseSpec(spec); err != nil {
			t.Errorf("offered %q, which does not parse: %v", spec, err)
		}
	}
	if got := sshCompletions(t.TempDir()); len(got) != 0 {
		t.Errorf("a home without ~/.ssh: %q", got)
	}
}

func TestSSHConfigLine(t *testing.T) {
	for _, tc := range []struct {
		line, keyword string
		args          []string
	}{
		{"Host golem m42", "Host", []string{"golem", "m42"}},
		{"  host=router", "host", []string{"router"}},
		{"Host = \"nas box\" nas", "Host", []string{"nas box", "nas"}},
		{"Host\tgw-berlin # the Berlin router", "Host", []string{"gw-berlin"}},
		{"Include conf.d/*.conf ~/.ssh/extra.conf", "Include", []string{"conf.d/*.conf", "~/.ssh/extra.conf"}},
		{"Host \"unclosed", "Host", nil},
		{"# Host commented", "", nil},
		{"", "", nil},
		{"Host", "Host", nil},
	} {
		keyword, args := sshConfigLine(tc.line)
		if keyword != tc.keyword || !slices.Equal(args, tc.args) {
			t.Errorf("sshConfigLine(%q) = %q %q, want %q %q", tc.line, keyword, args, tc.keyword, tc.args)
		}
	}
}

func TestKnownHostEntry(t *testing.T) {
	for _, tc := range []struct {
		entry string
		want  SSHAddress
		ok    bool
	}{
		{"golem.example.net", SSHAddress{Host: "golem.example.net"}, true},
		{"192.0.2.10", SSHAddress{Host: "192.0.2.10"}, true},
		{"fd00::5", SSHAddress{Host: "fd00::5"}, true},
		{"[gw.example.net]:2222", SSHAddress{Host: "gw.example.net", Port: 2222}, true},
		{"[::1]:22022", SSHAddress{Host: "::1", Port: 22022}, true},
		{"[m42]:22", SSHAddress{Host: "m42"}, true},
		{"*.example.org", SSHAddress{}, false},
		{"!bad.example.org", SSHAddress{}, false},
		{"web?.example.org", SSHAddress{}, false},
		{"[porty]:99999", SSHAddress{}, false},
		{"[porty]:x", SSHAddress{}, false},
		{"[unclosed:2222", SSHAddress{}, false},
		{"-oProxyCommand=touch", SSHAddress{}, false},
		{"evil$(reboot)", SSHAddress{}, false},
		{"bad;host", SSHAddress{}, false},
		{"fe80::1%eth0", SSHAddress{}, false},
		{"é.example", SSHAddress{}, false},
		{"", SSHAddress{}, false},
	} {
		got, ok := knownHost(tc.entry)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("knownHost(%q) = %+v, %v; want %+v, %v", tc.entry, got, ok, tc.want, tc.ok)
		}
	}
}

// Reading stays bounded: a config including itself stops at ssh's depth,
// a FIFO is not opened (it would block the shell's completion), and past
// sshMaxFileBytes a file is not read.
func TestSSHConfigReadingIsBounded(t *testing.T) {
	looped := 0
	for _, h := range sshConfigHostsIn(filepath.Join(sshHome, ".ssh", "config"), sshHome) {
		if h == "looped" {
			looped++
		}
	}
	if looped != sshIncludeDepth {
		t.Errorf("a config including itself was read %d times, want %d", looped, sshIncludeDepth)
	}

	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := "Host early\n" + strings.Repeat("# padding\n", sshMaxFileBytes/10) + "Host late\n"
	if err := os.WriteFile(filepath.Join(dir, "big"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config")
	if err := os.WriteFile(cfg, []byte("Include fifo big\nHost after\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(sshConfigHostsIn(cfg, dir), " "); got != "early after" {
		t.Errorf("hosts %q, want \"early after\" (the FIFO skipped, the big file read up to its bound)", got)
	}
}
