package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
)

const (
	netdevKey = "SECRETnetdevprivatekeySECRET="
	netdevPSK = "SECRETnetdevpresharedSECRET="
	// netdevKeyed is a systemd-networkd .netdev that holds its keys inline.
	netdevKeyed = "[NetDev]\nName=wg0\nKind=wireguard\nMTUBytes=1420\n\n[WireGuard]\nListenPort=51820\nPrivateKey=" + netdevKey +
		"\n\n[WireGuardPeer]\nPublicKey=" + peerKey + "\nPresharedKey=" + netdevPSK + "\nAllowedIPs=10.8.0.2/32\n"
)

// TestKeysRedactedInEveryForm: a plan that sets the MTU in a .netdev holding
// its private and preshared keys inline shows neither key in its text, its
// JSON or its printed script, and the script still writes the file whole,
// keys taken from the live file.
func TestKeysRedactedInEveryForm(t *testing.T) {
	ctx := context.Background()
	h := newFakeHost("local")
	h.On("uname -r", "6.1.0-18-amd64\n")
	h.Fail("sh -c 'command -v nft'", 1)
	h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
	h.Files["/etc/systemd/network/50-wg0.netdev"] = netdevKeyed
	h.On(shell.Join("sh", "-c", `for f in "$1"/*.netdev; do [ -f "$f" ] && printf '%s\n' "$f"; done; exit 0`, "sh", "/etc/systemd/network"),
		"/etc/systemd/network/50-wg0.netdev\n")
	env, err := Detect(ctx, h, "/")
	if err != nil {
		t.Fatal(err)
	}
	items, manual, err := Select([]finding.Finding{fx("mtu.tunnel-too-large", "lower the MTU", remedy.KindWGMTU, "interface", "wg0", "mtu", "1380")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(ctx, env, items, manual)
	if err != nil {
		t.Fatal(err)
	}
	var keyed *FileChange
	for _, it := range p.Items {
		for i, f := range it.Step.Files {
			if strings.Contains(string(f.New), netdevKey) {
				keyed = &it.Step.Files[i]
			}
		}
	}
	if keyed == nil {
		t.Fatalf("the plan writes no keyed .netdev: the test proves nothing\n%+v", p.Items)
	}
	var text, script bytes.Buffer
	if err := p.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteScript(&script); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []struct{ name, out string }{{"fix", text.String()}, {"fix --print-script", script.String()}} {
		for _, k := range []string{netdevKey, netdevPSK} {
			if strings.Contains(form.out, k) {
				t.Errorf("%s prints key %s:\n%s", form.name, k, form.out)
			}
		}
	}
	for _, k := range []string{netdevKey, netdevPSK} {
		if jsonHolds(t, doc, k) {
			t.Errorf("fix --json carries key %s", k)
		}
	}
	if !strings.Contains(script.String(), "MTUBytes=1380") {
		t.Errorf("the script does not write the new MTU:\n%s", script.String())
	}

	// The script's lines for the file, run where the live file has the keys,
	// write the new file exactly, keys included, mode 0600, and leave nothing beside it.
	dir := t.TempDir()
	path := filepath.Join(dir, "50-wg0.netdev")
	must(t, os.WriteFile(path, []byte(netdevKeyed), 0o600))
	line := writeLines(path, keyed.New, 0o600, "exit 1")
	if out, err := exec.Command("sh", "-c", line).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", line, err, out)
	}
	if got, _ := os.ReadFile(path); string(got) != string(keyed.New) {
		t.Errorf("the script wrote:\n%s\nwant:\n%s", got, keyed.New)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after the script: %v, %v; want 0600", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*wgperf*")); len(left) > 0 {
		t.Errorf("the script left %v", left)
	}
	// Without the keys in the live file it refuses and leaves it as it was.
	bare := strings.ReplaceAll(strings.ReplaceAll(netdevKeyed, "PrivateKey="+netdevKey+"\n", ""), "PresharedKey="+netdevPSK+"\n", "")
	must(t, os.WriteFile(path, []byte(bare), 0o600))
	if err := exec.Command("sh", "-c", line).Run(); err == nil {
		t.Error("writing a keyed file over a live file without keys: want a failure")
	}
	if got, _ := os.ReadFile(path); string(got) != bare {
		t.Errorf("a failed write changed the file:\n%s", got)
	}
}
