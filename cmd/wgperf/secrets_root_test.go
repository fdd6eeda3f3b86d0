package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.zx2c4.com/wireguard/wgctrl/wgtypes"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
)

// wgperfOut runs the CLI like wgperf and returns the exit status, standard
// output and standard error.
func wgperfOut(t *testing.T, args ...string) (int, []byte, []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.Bytes(), stderr.Bytes()
}

// TestNoSecretInAnyOutput (issue 12, holes 5 and 6) builds a lab with known
// private and preshared keys and a wg-quick config holding them, runs every
// command that reads or changes that host — collect, diagnose (text, JSON,
// HTML), report, fix (plan, JSON, script, apply with a watchdog, rollback) and
// the exporter — and greps every output and every file they wrote for the
// keys, base64 and hex. The wg-quick config must still hold them afterwards.
func TestNoSecretInAnyOutput(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "wgsec"})
	ctx := context.Background()
	a, b := l.Target("a"), l.Target("b")
	ifA, ifB := l.WGInterface("a"), l.WGInterface("b")
	wg := func(tg interface {
		Run(context.Context, string, ...string) ([]byte, error)
	}, args ...string) string {
		out, err := tg.Run(ctx, "wg", args...)
		if err != nil {
			t.Fatalf("wg %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	privA, privB := wg(a, "show", ifA, "private-key"), wg(b, "show", ifB, "private-key")
	pubA, pubB := wg(a, "show", ifA, "public-key"), wg(b, "show", ifB, "public-key")
	pskKey, err := wgtypes.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	psk := pskKey.String()
	dir := t.TempDir()
	pskFile := filepath.Join(dir, "psk")
	if err := os.WriteFile(pskFile, []byte(psk+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wg(a, "set", ifA, "peer", pubB, "preshared-key", pskFile)
	wg(b, "set", ifB, "peer", pubA, "preshared-key", pskFile)
	if !strings.Contains(wg(a, "show", ifA, "preshared-keys"), psk) {
		t.Fatal("the preshared key is not set")
	}
	var secrets []string
	for _, k := range []string{privA, privB, psk} {
		raw, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, k, hex.EncodeToString(raw), strings.TrimRight(k, "="))
	}

	root := filepath.Join(dir, "root")
	conf := filepath.Join(root, "etc/wireguard", ifA+".conf")
	confText := fmt.Sprintf("[Interface]\nPrivateKey = %s\nListenPort = %d\nMTU = 1420\n\n[Peer]\nPublicKey = %s\nPresharedKey = %s\nAllowedIPs = 10.77.0.2/32\n",
		privA, lab.WGPort, pubB, psk)
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte(confText), 0o600); err != nil {
		t.Fatal(err)
	}
	host := "netns:" + l.Netns("a")
	findings := filepath.Join(dir, "wgmtu.json")
	fj := `{"findings": [{"id": "mtu.tunnel-too-large", "severity": "warning", "host": "` + host + `", "title": "t", "evidence": [],
	  "fixes": [{"description": "lower the MTU", "commands": [], "action": {"kind": "wg-mtu", "params": {"interface": "` + ifA + `", "mtu": "1380"}}}]}]}`
	if err := os.WriteFile(findings, []byte(fj), 0o600); err != nil {
		t.Fatal(err)
	}

	outputs := map[string][]byte{}
	cli := func(wantOK bool, args ...string) []byte {
		code, stdout, stderr := wgperfOut(t, args...)
		name := strings.Join(args, " ")
		outputs[name+" (stdout)"], outputs[name+" (stderr)"] = stdout, stderr
		if wantOK && code > 2 {
			t.Errorf("wgperf %s: exit %d: %s", name, code, stderr)
		}
		return stdout
	}
	snap := filepath.Join(dir, "snap.json")
	cli(true, "collect", "--host", host, "-o", snap)
	cli(true, "collect", "--host", host)
	cli(true, "diagnose", "--host", host)
	diag := cli(true, "diagnose", "--host", host, "--json", "--html", filepath.Join(dir, "diagnose.html"))
	if err := os.WriteFile(filepath.Join(dir, "diagnose.json"), diag, 0o600); err != nil {
		t.Fatal(err)
	}
	cli(true, "diagnose", "--from", snap, "--json")
	cli(true, "report", "--from", filepath.Join(dir, "diagnose.json"), "--html", filepath.Join(dir, "report.html"))
	fixArgs := []string{"fix", "--host", host, "--root", root, "--from", findings}
	cli(true, fixArgs...)
	cli(true, append(fixArgs, "--json")...)
	cli(true, append(fixArgs, "--print-script")...)
	cli(true, append(fixArgs, "--apply", "--confirm", "120s", "--json")...)
	if got, _ := os.ReadFile(conf); !strings.Contains(string(got), "MTU = 1380") {
		t.Fatalf("apply did not edit the config:\n%s", got)
	}
	journal, _ := filepath.Glob(filepath.Join(root, "var/lib/wgperf/journal/*"))
	// The watchdog runs from memory (its command line holds the revert
	// script's SHA-256, no file of its own).
	if len(journal) < 2 {
		t.Fatalf("journal files %v: want the journal and revert.sh", journal)
	}
	// The files of the applied state, before rollback rewrites them.
	for _, f := range journal {
		outputs[f], _ = os.ReadFile(f)
	}
	cli(true, "fix", "rollback", "--host", host, "--root", root, "--json")
	if got, _ := os.ReadFile(conf); string(got) != confText {
		t.Errorf("rollback did not restore the config with its keys:\n%s\nwant:\n%s", got, confText)
	}

	// The exporter, scraped once on loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	exp := exec.Command(os.Args[0], "exporter", "--host", host, "--listen", addr)
	exp.Env = append(os.Environ(), "WGPERF_TEST_MAIN=1")
	var expErr bytes.Buffer
	exp.Stderr = &expErr
	if err := exp.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = exp.Process.Kill(); _ = exp.Wait() }()
	var metrics []byte
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			continue
		}
		metrics, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		break
	}
	if !bytes.Contains(metrics, []byte("wgperf_")) {
		t.Fatalf("no metrics from the exporter: %q\n%s", metrics, expErr.String())
	}
	outputs["exporter /metrics"] = metrics

	// Every file the commands wrote, except the config that holds the keys.
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() && p != conf && p != pskFile {
			outputs[p], _ = os.ReadFile(p)
		}
		return nil
	})
	for name, out := range outputs {
		out = withDecodedJSON(out)
		for _, s := range secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("%s holds a key (%s...)", name, s[:6])
			}
		}
	}
	if len(outputs) < 20 {
		t.Errorf("only %d outputs checked", len(outputs))
	}
}

// withDecodedJSON appends to a JSON document every string in it decoded from
// base64, where file contents hide (FileChange.Old and New).
func withDecodedJSON(doc []byte) []byte {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return doc
	}
	out := append([]byte{}, doc...)
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if d, err := base64.StdEncoding.DecodeString(x); err == nil {
				out = append(append(out, '\n'), d...)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
