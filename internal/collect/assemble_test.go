package collect

import (
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/testutil"
)

// newTestCollector assembles a snapshot from canned source outputs, as if the
// batch scripts had printed them.
func newTestCollector(res map[string]cmdResult) *collector {
	return &collector{res: res, snap: &facts.Snapshot{Sysctls: map[string]string{},
		Firewall: facts.Firewall{Rules: []facts.FirewallRule{}}}}
}

func TestWireGuardKeepsOnlyThisNamespace(t *testing.T) {
	c := newTestCollector(map[string]cmdResult{
		"wg":     {Out: string(testutil.ReadTestdata(t, "collect", "wg", "dump-lab-shared-socket-dir"))},
		"wgsock": {Out: "wg-lt1-a\nwg-wgc1-a\nwg-wgc1-b\nwgc-wga\n"},
	})
	c.snap.Links = []facts.Link{{Name: "lo", MTU: 65536}, {Name: "eth0", MTU: 1500, Kind: "veth"}, {Name: "wg-wgc1-a", MTU: 1420, Kind: "tun"}}
	c.wireguard(nil)
	if len(c.snap.WireGuard) != 1 {
		t.Fatalf("kept %d interfaces, want only wg-wgc1-a: %+v", len(c.snap.WireGuard), c.snap.WireGuard)
	}
	w := c.snap.WireGuard[0]
	if w.Name != "wg-wgc1-a" || w.MTU != 1420 || w.Implementation != "userspace" || len(w.Peers) != 1 || w.Peers[0].Endpoint != "203.0.113.2:51820" {
		t.Errorf("wg-wgc1-a = %+v", w)
	}

	c = newTestCollector(map[string]cmdResult{"wg": {Out: "wg0\tPRIV\tPUB\t51820\toff\n"}, "wgsock": {}})
	c.snap.Links = []facts.Link{{Name: "wg0", MTU: 1420, Kind: "wireguard"}}
	c.wireguard(nil)
	if len(c.snap.WireGuard) != 1 || c.snap.WireGuard[0].Implementation != "kernel" {
		t.Errorf("kernel wg0 = %+v", c.snap.WireGuard)
	}
}

func TestFirewallDropsIptablesNftDuplicates(t *testing.T) {
	c := newTestCollector(map[string]cmdResult{
		"nft-json":  {Out: string(testutil.ReadTestdata(t, "collect", "nft", "ruleset-banip-iptables-nft.json"))},
		"nft-text":  {Out: string(testutil.ReadTestdata(t, "collect", "nft", "ruleset-banip-iptables-nft.txt"))},
		"iptables":  {Out: string(testutil.ReadTestdata(t, "collect", "iptables", "iptables-save-c.txt"))},
		"ip6tables": {Out: string(testutil.ReadTestdata(t, "collect", "iptables", "ip6tables-save-c.txt"))},
	})
	c.firewall(nil)
	fw := c.snap.Firewall
	if !fw.Nftables || !fw.Iptables || len(fw.Counters) != 1 {
		t.Errorf("nftables=%v iptables=%v counters=%v", fw.Nftables, fw.Iptables, fw.Counters)
	}
	count := map[string]int{}
	for _, r := range fw.Rules {
		count[r.Backend]++
		if r.Backend == "nft" && r.Table != "banip" {
			t.Errorf("iptables-nft rule kept twice: %+v", r)
		}
		if r.Text == "" {
			t.Errorf("rule without text: %+v", r)
		}
	}
	if count["nft"] != 9 || count["iptables"] != 9 {
		t.Errorf("rules per backend = %v, want 9 nft (banip) and 9 iptables", count)
	}
	if len(c.snap.Notes) != 0 {
		t.Errorf("notes = %v", c.snap.Notes)
	}
}

func TestMissingToolsBecomeNotes(t *testing.T) {
	c := newTestCollector(map[string]cmdResult{
		"nft-json":  {Code: 127, Stderr: "nft: not found"},
		"iptables":  {Code: 127},
		"ip6tables": {Code: 1, Stderr: "ip6tables-save v1.8.9: can't initialize\nPermission denied (you must be root)"},
	})
	c.firewall(nil)
	want := map[string]string{"nft": "nft not installed", "iptables-save": "iptables-save not installed",
		"ip6tables-save": "Permission denied (you must be root)"}
	got := map[string]string{}
	for _, n := range c.snap.Notes {
		got[n.Source] = n.Message
	}
	for src, msg := range want {
		if got[src] != msg {
			t.Errorf("note %s = %q, want %q", src, got[src], msg)
		}
	}
	if c.snap.Firewall.Nftables || c.snap.Firewall.Iptables {
		t.Error("firewall marked as answered")
	}
}

// The shapers tc printed in a namespace with tbf on wg0 and htb on eth0
// (testdata/collect/tc): each device's rate on its link, htb's from its root
// class; a device tc names that ip did not list is left alone.
func TestShapersJoinTheirLinks(t *testing.T) {
	c := newTestCollector(map[string]cmdResult{
		"qdisc": {Out: string(testutil.ReadTestdata(t, "collect", "tc", "qdisc-tbf-htb.json"))},
		"htb":   {Out: string(testutil.ReadTestdata(t, "collect", "tc", "class-htb.txt"))},
	})
	byName := map[string]*facts.Link{"wg0": {Name: "wg0"}, "eth0": {Name: "eth0"}, "wg0p": {Name: "wg0p"}}
	c.shapers(byName)
	want := map[string]*facts.Shaper{"wg0": {Qdisc: "tbf", RateMbit: 150}, "eth0": {Qdisc: "htb", RateMbit: 450, Class: "1:1"}, "wg0p": nil}
	for dev, sh := range want {
		if got := byName[dev].Shaper; (got == nil) != (sh == nil) || (got != nil && *got != *sh) {
			t.Errorf("%s: shaper %+v, want %+v", dev, got, sh)
		}
	}
	// Without tc (skipped): nothing, and no note.
	c = newTestCollector(map[string]cmdResult{"qdisc": {Code: codeSkipped}, "htb": {Code: codeSkipped}})
	c.shapers(byName)
	if len(c.snap.Notes) != 0 {
		t.Errorf("notes %v", c.snap.Notes)
	}
}
