package fix

import (
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"

	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func FuzzReadFindings(f *testing.F) {
	f.Add([]byte(`{"findings": [{"id": "route.stale-endpoint", "severity": "critical", "host": "local", "title": "t",
	  "fixes": [{"description": "d", "action": {"kind": "endpoint-route", "params": {"endpoint": "46.38.233.77"}}}]}]}`))
	f.Add([]byte(`[{"id": "udp.rcvbuf-errors\ntouch /tmp/x #", "severity": "warning"}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := ReadFindings(bytes.NewReader(b))
		if err != nil {
			return
		}
		// Whatever the file says, Select either refuses it or yields actions
		// that passed their constructors' validation.
		_, _, _ = Select(fs, nil)
	})
}

func FuzzParseWGQuick(f *testing.F) {
	if b, err := os.ReadFile("../../testdata/fix/wg0-site-a.conf"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(keyedOld))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseWGQuick(bytes.NewReader(b))
		if err != nil {
			return
		}
		out, _ := json.Marshal(c)
		// A key value may also stand on another line (say, as a peer's public
		// key); what must not happen is the key line itself reaching the output.
		lines := strings.Split(string(b), "\n")
		elsewhere := func(v string, skip int) bool {
			for i, l := range lines {
				if kind, _ := remedy.KeyKind(l); i != skip && kind == "" && strings.Contains(l, v) {
					return true
				}
			}
			return false
		}
		for i, l := range lines {
			if kind, at := remedy.KeyKind(l); kind != "" {
				v := strings.TrimSpace(l[at:])
				if len(v) >= 16 && !strings.Contains(v, "#") && bytes.Contains(out, []byte(v)) && !elsewhere(v, i) {
					t.Fatalf("key value of %q kept in the parsed config", l)
				}
			}
		}
	})
}

// FuzzRedactRestoreKeys: redaction leaves no key value behind, and restoring
// from the live file gives the file back exactly.
func FuzzRedactRestoreKeys(f *testing.F) {
	f.Add([]byte(keyedOld))
	f.Add([]byte("config interface 'wg0'\n\toption private_key 'c2VjcmV0'\n\tlist preshared_key 'x'\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Contains(b, []byte(remedy.KeyMark)) {
			return
		}
		r := remedy.RedactKeys(b)
		for _, l := range strings.Split(string(r), "\n") {
			if kind, at := remedy.KeyKind(l); kind != "" && strings.TrimSpace(l[at:]) != remedy.KeyMark {
				t.Fatalf("key line %q survived redaction", l)
			}
		}
		back, err := remedy.RestoreKeys(r, b)
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("restore(redact(x), x) = %q, %v; want %q", back, err, b)
		}
	})
}

// FuzzRevertScriptComments: whatever a journal's host and descriptions say,
// revert.sh holds them in comments only. (IDs are checked against their
// grammar before a journal is loaded.)
func FuzzRevertScriptComments(f *testing.F) {
	f.Add("local", "set MTU\ntouch /tmp/x #")
	f.Add("ssh:a\u2028b", "\x1b[2J$(reboot)`id`;\r")
	f.Fuzz(func(t *testing.T, host, desc string) {
		j := &Journal{ID: "20260101T000000.000000000Z", Host: targettest.Spec(host), Entries: []Entry{{Status: EntryApplied, Description: desc}}}
		script := revertScript(&Env{Env: remedy.Env{Root: "/"}}, j)
		for _, l := range strings.Split(script, "\n") {
			switch {
			case l == "", l == "#!/bin/sh", l == "umask 077", strings.HasPrefix(l, "# "):
			case strings.HasPrefix(l, `echo "$(date) by the confirm watchdog" > `):
			default:
				t.Fatalf("line outside a comment: %q\n%s", l, script)
			}
			if strings.ContainsAny(l, "\r\x1b") {
				t.Fatalf("raw control character in %q", l)
			}
		}
	})
}
