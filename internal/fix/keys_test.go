package fix

import (
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"

	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

const (
	testPrivKey = "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk="
	testPSK1    = "FpCyhws9cxwWoV4xELtfJvjJN+zQVRPISllRWgeopVE="
	testPSK2    = "0dJtUWnHhlf3EZv3DRIwlyM2k8SLu2vjZHpNMlfoFPU="
)

const keyedOld = "[Interface]\nprivatekey=" + testPrivKey + "\nListenPort = 51820\nMTU = 1500\n\n" +
	"[Peer]\nPublicKey = cGVlcjE=\nPresharedKey = " + testPSK1 + "\nAllowedIPs = 10.8.0.2/32\n\n" +
	"[Peer]\nPublicKey = cGVlcjI=\n  PresharedKey=" + testPSK2 + "\nAllowedIPs = 10.8.0.3/32\n"

var keyedNew = strings.Replace(keyedOld, "MTU = 1500", "MTU = 1420", 1)

func noKeys(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, k := range []string{testPrivKey, testPSK1, testPSK2} {
		if strings.Contains(string(data), k) {
			t.Errorf("%s holds key %s...", what, k[:8])
		}
	}
}

func TestFileChangeJSONHasNoKeys(t *testing.T) {
	b, err := json.Marshal(FileChange{Path: "/etc/wireguard/wg0.conf", Existed: true, Old: []byte(keyedOld), New: []byte(keyedNew), Mode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	noKeys(t, "fix --json", b)
	var back FileChange
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if got, err := remedy.RestoreKeys(back.Old, []byte(keyedNew)); err != nil || string(got) != keyedOld {
		t.Errorf("restoreKeys = %q, %v; want the old file with its keys", got, err)
	}
	if _, err := remedy.RestoreKeys(back.Old, []byte("[Interface]\nMTU = 1420\n")); err == nil {
		t.Error("restoring from a live file without keys: want an error")
	}
	uci := "config interface 'wg0'\n\toption proto 'wireguard'\n\toption private_key 'c2VjcmV0'\n"
	if r := remedy.RedactKeys([]byte(uci)); strings.Contains(string(r), "c2VjcmV0") {
		t.Errorf("uci private_key kept: %q", r)
	}
}

// TestJournalAndRevertScriptHoldNoKeys is hole 5 (journal side) and hole 2
// for revert.sh: the journal and the watchdog's script carry no key, a
// description with a newline stays a comment (a host cannot hold one: it
// is a target spec, refused on reading otherwise), and both the script
// and "wgperf fix rollback" restore the file exactly, keys from the live file.
func TestJournalAndRevertScriptHoldNoKeys(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	conf := filepath.Join(root, "etc/wireguard/wg0.conf")
	must(t, os.MkdirAll(filepath.Dir(conf), 0o700))
	pwned := filepath.Join(root, "PWNED")
	env := &Env{Env: remedy.Env{T: target.Local(), Root: root, Platform: remedy.Linux}}
	j := &Journal{ID: newJournalID(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)), Host: target.Of(target.Local()), State: StateConfirming,
		Entries: []Entry{{Findings: []finding.ID{"mtu.tunnel-too-large"}, Status: EntryApplied,
			Description: "set MTU\ntouch " + pwned + " #\r\x1b[2K",
			Step: Step{Kind: "wg-mtu", Undo: []string{"true"},
				Files: []FileChange{{Path: conf, Existed: true, Old: []byte(keyedOld), New: []byte(keyedNew), Mode: 0o600}}}}}}
	for _, run := range []string{"revert.sh", "rollback"} {
		t.Run(run, func(t *testing.T) {
			must(t, os.WriteFile(conf, []byte(keyedNew), 0o600))
			j.State = StateConfirming
			j.Entries[0].Status = EntryApplied
			must(t, env.saveJournal(ctx, j))
			saved, err := os.ReadFile(env.journalPath(j.ID, ".json"))
			must(t, err)
			noKeys(t, "journal", saved)
			script, err := os.ReadFile(env.journalPath(j.ID, ".revert.sh"))
			must(t, err)
			noKeys(t, "revert.sh", script)
			if out, err := exec.Command("sh", "-n", env.journalPath(j.ID, ".revert.sh")).CombinedOutput(); err != nil {
				t.Fatalf("sh -n revert.sh: %v: %s", err, out)
			}
			for _, l := range strings.Split(string(script), "\n") {
				if strings.HasPrefix(l, "touch") || strings.ContainsAny(l, "\r\x1b") {
					t.Errorf("revert.sh line outside a comment: %q", l)
				}
			}
			if run == "revert.sh" {
				out, err := exec.Command("sh", env.journalPath(j.ID, ".revert.sh")).CombinedOutput()
				if err != nil || len(out) != 0 {
					t.Fatalf("revert.sh: %v: %s", err, out)
				}
			} else if _, err := Rollback(ctx, env); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(conf)
			must(t, err)
			if string(got) != keyedOld {
				t.Errorf("%s restored:\n%s\nwant:\n%s", run, got, keyedOld)
			}
			if fi, _ := os.Stat(conf); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v", run, fi.Mode())
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatal("a newline in the journal ran a command")
			}
			rest, _ := filepath.Glob(conf + ".wgperf-*")
			if len(rest) > 0 {
				t.Errorf("left behind: %v", rest)
			}
			must(t, os.Remove(env.journalPath(j.ID, ".reverted")))
		})
	}
}

// TestPlanJSONHasNoKeys is hole 5 for "fix --json": a plan that edits a
// wg-quick config serializes without its PrivateKey.
func TestPlanJSONHasNoKeys(t *testing.T) {
	ctx := context.Background()
	env, err := Detect(ctx, wgQuickHost(t), "/")
	if err != nil {
		t.Fatal(err)
	}
	items, manual, err := Select(wgQuickFindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(ctx, env, items, manual)
	if err != nil {
		t.Fatal(err)
	}
	edits := 0
	for _, it := range p.Items {
		for _, f := range it.Step.Files {
			if strings.Contains(string(f.Old), "SECRETprivatekeySECRET") {
				edits++
			}
		}
	}
	if edits == 0 {
		t.Fatal("the plan edits no keyed file: the test proves nothing")
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if jsonHolds(t, b, "SECRETprivatekeySECRET") {
		t.Error("fix --json carries the private key")
	}
}

// jsonHolds reports whether any string in the JSON document, as it is or
// base64-decoded (file contents), contains secret.
func jsonHolds(t *testing.T, doc []byte, secret string) bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			d, _ := base64.StdEncoding.DecodeString(x)
			return strings.Contains(x, secret) || strings.Contains(string(d), secret)
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// TestRevertScriptRunsOnlyItsUndo is the property test for revert.sh: with
// hostile text in the host, the descriptions and the undo arguments, the
// script passes sh -n and, run with a PATH of logging stubs, runs exactly the
// undo commands with exactly their arguments and nothing else.
func TestRevertScriptRunsOnlyItsUndo(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	must(t, os.MkdirAll(bin, 0o755))
	log := filepath.Join(dir, "log")
	stub := func(name, body string) {
		must(t, os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	}
	stub("undo-stub", `for a in "$@"; do printf '%s\0' "$a" >> `+shell.Quote(log)+`; done; printf 'END\0' >> `+shell.Quote(log))
	stub("date", "echo 2026")
	for _, trap := range []string{"touch", "id", "reboot", "rm", "sh", "curl", "wget", "cat", "ls", "x"} {
		stub(trap, "echo UNINTENDED "+trap+" >&2")
	}
	pieces := []string{"\n", "\r", "'", `"`, "$(", ")", "`", ";", "&", "|", "-", "#", "\\", " ", "\t", "\x1b[2J", "\xff",
		"\u2028", "touch x", "id", "reboot", "}", "{", "WGPERF_EOF", "\n}\n"}
	r := rand.New(rand.NewPCG(7, 8))
	hostile := func() string {
		var b strings.Builder
		for range 1 + r.IntN(6) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	env := &Env{Env: remedy.Env{Root: dir}}
	for i := range 100 {
		arg := strings.ReplaceAll(hostile(), "\x00", "")
		j := &Journal{ID: "20260101T000000.000000000Z", Host: targettest.Spec(hostile()), Entries: []Entry{
			{Status: EntryApplied, Description: hostile(), Step: Step{Undo: []string{shell.Join("undo-stub", arg)}}},
			{Status: EntryPlanned, Description: hostile(), Step: Step{Undo: []string{shell.Join("undo-stub", "never")}}},
		}}
		script := filepath.Join(dir, "revert.sh")
		must(t, os.WriteFile(script, []byte(revertScript(env, j)), 0o700))
		must(t, os.MkdirAll(env.journalDir(), 0o700))
		if out, err := exec.Command("/bin/sh", "-n", script).CombinedOutput(); err != nil {
			t.Fatalf("case %d: sh -n: %v: %s\n%s", i, err, out, revertScript(env, j))
		}
		_ = os.Remove(log)
		cmd := exec.Command("/bin/sh", script)
		cmd.Env = []string{"PATH=" + bin}
		out, err := cmd.CombinedOutput()
		if err != nil || len(out) > 0 {
			t.Fatalf("case %d: revert.sh: %v: %s\n%s", i, err, out, revertScript(env, j))
		}
		got, _ := os.ReadFile(log)
		if want := arg + "\x00END\x00"; string(got) != want {
			t.Fatalf("case %d: undo ran with %q, want %q", i, got, want)
		}
	}
}
