package fix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The ECMP-over-bonding case in the multi-wan lab: both uplinks at 100
// Mbit/s, one tunnel uses only the primary. "fix ecmp --tunnels 2 --apply
// --verify" plans both ends, applies B's half then A's through the fix flow
// (a tunnel on the next port, which the lab's uplinks carry over the backup,
// and a multipath route); parallel streams to site B's network must then
// carry at least 1.7 times as much, no private key may show in what wgperf
// printed or journaled, and "fix rollback" on A then B must leave both
// sites exactly as they were.
func TestFixECMPApplyScalesInMultiWANLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3", "sha256sum", "base64")
	l := labtest.Up(t, lab.Config{Name: "wgvecmp", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 100}, Backup: lab.Shape{RateMbit: 100}})
	root := t.TempDir()
	before := ecmpState(t, l)
	hostA, hostB := "netns:"+l.Netns("a"), "netns:"+l.Netns("b")

	out, code := runWgperf(t, "fix", "ecmp", "--host", hostA, "--tunnels", "2", "--root", root, "--json")
	if code != 0 || !strings.Contains(string(out), `"kind": "ecmp-tunnels"`) {
		t.Fatalf("plan: exit %d, output %s", code, out)
	}
	if now := ecmpState(t, l); !slices.Equal(now, before) {
		t.Fatalf("planning changed the lab:\n%s\nwas:\n%s", strings.Join(now, "\n"), strings.Join(before, "\n"))
	}

	out, code = runWgperf(t, "fix", "ecmp", "--host", hostA, "--tunnels", "2", "--apply", "--verify", "--time", "3", "--root", root, "--json")
	var res ECMPResult
	if err := json.Unmarshal(out, &res); err != nil || code != 0 || res.Near.Journal == nil || res.Far.Journal == nil || res.Near.Journal.Verify == nil {
		t.Fatalf("exit %d, output %s: %v", code, out, err)
	}
	v := res.Near.Journal.Verify
	t.Logf("before %s (%s), after %s (%s)", v.Before, v.Before.Detail, v.After, v.After.Detail)
	if v.Before.Value <= 0 || v.After.Value/v.Before.Value < 1.7 || !v.Kept {
		t.Errorf("aggregate %s -> %s (kept %v), want at least 1.7x", v.Before, v.After, v.Kept)
	}
	if !strings.Contains(v.After.Detail, "retransmits") {
		t.Errorf("the after figure says nothing of its cost: %q", v.After.Detail)
	}
	route, err := l.Target("a").Run(t.Context(), "ip", "route", "show", lab.SiteBNet)
	if err != nil || strings.Count(string(route), "nexthop") != 2 {
		t.Errorf("route to %s on A: %s %v; want two next hops", lab.SiteBNet, route, err)
	}
	// No key of either site's tunnels in the output or the journals.
	var keys []string
	for _, node := range []string{"a", "b"} {
		for _, dev := range remedy.ECMPDevices(l.WGInterface(node), 2) {
			k, err := l.Target(node).Run(t.Context(), "wg", "show", dev, "private-key")
			if err != nil || len(strings.TrimSpace(string(k))) != 44 {
				t.Fatalf("%s: wg show %s private-key: %q %v", node, dev, k, err)
			}
			keys = append(keys, strings.TrimSpace(string(k)))
		}
	}
	if keys[0] == keys[1] || keys[2] == keys[3] {
		t.Error("a new tunnel has its site's old key")
	}
	texts := map[string][]byte{"the output": out}
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			texts[p], _ = os.ReadFile(p)
		}
		return nil
	})
	if len(texts) < 3 {
		t.Errorf("journals under %s: %d files, want both ends'", root, len(texts)-1)
	}
	for where, b := range texts {
		for _, k := range keys {
			if strings.Contains(string(b), k) {
				t.Errorf("%s holds a private key", where)
			}
		}
	}

	// The near end's half went last, so it is rolled back first.
	for _, host := range []string{hostA, hostB} {
		if out, code := runWgperf(t, "fix", "rollback", "--host", host, "--root", root); code != 0 {
			t.Fatalf("rollback on %s: exit %d: %s", host, code, out)
		}
	}
	// A userspace node ends (and removes its socket) just after its interface goes.
	var now []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if now = ecmpState(t, l); slices.Equal(now, before) {
			return
		}
	}
	t.Errorf("after rollback:\n%s\nbefore:\n%s", strings.Join(now, "\n"), strings.Join(before, "\n"))
}

// ecmpState is what the ECMP fix changes on the lab's two sites: the links,
// routes, WireGuard interfaces and peers (without counters and handshakes),
// the multipath hash policy, and the lab's WireGuard sockets.
func ecmpState(t *testing.T, l *lab.Lab) []string {
	t.Helper()
	var out []string
	for _, node := range []string{"a", "b"} {
		tg := l.Target(node)
		for _, argv := range [][]string{{"ip", "-o", "link", "show"}, {"ip", "route", "show", "table", "main"}, {"wg", "show", "all", "dump"},
			{"cat", "/proc/sys/net/ipv4/fib_multipath_hash_policy"}} {
			b, err := tg.Run(t.Context(), argv[0], argv[1:]...)
			if err != nil {
				t.Fatalf("%s: %v: %v", node, argv, err)
			}
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				f := strings.Split(line, "\t")
				switch {
				case argv[0] == "wg" && !strings.HasPrefix(line, "wg-"+l.Config.Name+"-"):
					continue // another lab's, through the shared socket folder
				case argv[0] == "wg" && len(f) == 9:
					line = strings.Join([]string{f[0], f[1], f[4], f[8]}, " ") // the peer, its allowed IPs, keepalive
				case argv[0] == "wg" && len(f) == 5:
					line = strings.Join([]string{f[0], f[2], f[3]}, " ") // the interface, its public key and port
				case argv[0] == "ip" && argv[1] == "-o":
					line = strings.Join(strings.Fields(line)[:2], " ") // index and name
				}
				out = append(out, node+": "+line)
			}
		}
	}
	socks, _ := filepath.Glob("/var/run/wireguard/wg-" + l.Config.Name + "-*")
	for _, s := range socks {
		out = append(out, "socket "+s)
	}
	return out
}
