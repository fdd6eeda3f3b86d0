package fix

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

func recorded(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fx(id finding.ID, desc, kind string, kv ...string) finding.Finding {
	p := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return finding.Finding{ID: id, Severity: finding.Warning, Title: desc,
		Fixes: []finding.Fix{{Description: desc, Action: &finding.Action{Kind: kind, Params: p}}}}
}

// linuxHost is a Debian-like host on kernel 4.19 with nft and /etc/nftables.conf.
func linuxHost(t *testing.T) *targettest.Host {
	h := newFakeHost("ssh:root@gw")
	h.On("uname -r", "4.19.0-27-amd64\n")
	h.On("sh -c 'command -v nft'", "/usr/sbin/nft\n")
	h.Files["/etc/nftables.conf"] = "#!/usr/sbin/nft -f\n\nflush ruleset\n"
	h.On("sysctl -n net.core.rmem_max", "212992\n")
	h.On("sysctl -n net.core.netdev_max_backlog", "5000\n")
	h.Files[remedy.SysctlConf] = "# Written by wgperf fix; remove a line (or this file) to undo at next boot.\nnet.core.netdev_max_backlog = 5000\n"
	// Debian's /etc/sysctl.conf, read at boot through 99-sysctl.conf, sets a
	// lower rmem_max than the fix: it would win over 90-wgperf.conf.
	h.Files["/etc/sysctl.conf"] = "# /etc/sysctl.conf - Configuration file for setting system variables\nnet.core.rmem_max = 212992\n"
	h.Files["/etc/sysctl.d/99-sysctl.conf"] = h.Files["/etc/sysctl.conf"]
	h.Files["/usr/lib/sysctl.d/50-pid-max.conf"] = "kernel.pid_max = 4194304\n"
	h.On(remedy.SysctlListLine(&remedy.Env{Root: "/"}), "file /etc/sysctl.d/90-wgperf.conf\nfile /etc/sysctl.d/99-sysctl.conf\nfile /usr/lib/sysctl.d/50-pid-max.conf\nfile /etc/sysctl.conf\nsystemd\n")
	h.On("sysctl -n net.ipv4.tcp_rmem", recorded(t, "sysctl-tcp_rmem.txt"))
	h.On("sysctl -n net.ipv4.tcp_available_congestion_control", "reno cubic\n")
	h.On("sysctl -n net.ipv4.tcp_congestion_control", "cubic\n")
	h.On("sysctl -n net.core.default_qdisc", "pfifo_fast\n")
	h.Fail("nft list table inet wgperf", 1)
	h.Answers["nft list table inet wgperf"] = targettest.Answer{Code: 1, Stderr: recorded(t, "nft-no-table.stderr")}
	h.On(shell.Join("sh", "-c", remedy.FirewallBootLine), "nftables enabled\nfirewalld  inactive\n") // nftables.service loads /etc/nftables.conf at boot
	h.On("ip route show table main exact 46.38.233.77", recorded(t, "ip-route-exact-stale.txt"))
	h.On("nft -a list chain inet banIP pre-routing", recorded(t, "nft-list-chain-banip.txt"))
	h.On("ls /sys/class/net/eth1/queues", recorded(t, "queues.txt"))
	h.Files["/sys/class/net/eth1/queues/rx-0/rps_cpus"] = recorded(t, "rps_cpus.txt")
	h.Files["/sys/class/net/bond0/bonding/xmit_hash_policy"] = "layer2 0\n"
	// The conntrack hash of a router's 4.19 kernel (recorded: golem's 16384);
	// netdev_max_backlog says this is the initial network namespace.
	h.Files[remedy.HashsizeParam] = "16384\n"
	h.Files["/proc/sys/net/core/netdev_max_backlog"] = "5000\n"
	h.On("tc qdisc show dev eth1 root", recorded(t, "tc-root-tbf.txt"))
	// eth0 keeps Debian's default qdisc; its kernel has cake as a module.
	h.On("tc qdisc show dev eth0 root", "qdisc fq_codel 0: root refcnt 2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 \n")
	h.On(shell.Join("sh", "-c", remedy.QdiscProbe), "kallsyms\nmoduletree\ncake module\nfq_codel kernel\nhtb module\n")
	h.On("nft -a list chain inet site out", recorded(t, "nft-list-chain-site-out.txt"))
	h.On("ethtool -k eth1", string(testutil.ReadTestdata(t, "collect", "ethtool", "k-host-nic.txt")))
	// A virtio NIC's transmit queue, as this project's VM has it (/proc/irq/39).
	h.On("ls /proc/irq/39", "affinity_hint\neffective_affinity\neffective_affinity_list\nnode\nsmp_affinity\nsmp_affinity_list\nspurious\nvirtio2-output.0\n")
	h.Files["/proc/irq/39/smp_affinity_list"] = "0-1\n"
	// wg0 is served by a userspace implementation whose socket holds the
	// default 208 KiB: a raised rmem_max reaches it only when it re-opens.
	h.Fallback = func(line string) (targettest.Answer, bool) {
		if strings.Contains(line, "/var/run/wireguard/") {
			return targettest.Answer{Out: "wg0 51820 425984 425984\n"}, true
		}
		return targettest.Answer{}, false
	}
	return h
}

func linuxFindings() []finding.Finding {
	manual := finding.Finding{ID: "cpu.saturated", Severity: finding.Warning, Fixes: []finding.Fix{{
		Description: "spread interrupts over more cores", Commands: []string{"systemctl enable --now irqbalance"}}}}
	return []finding.Finding{
		fx("udp.rcvbuf-errors", "raise the UDP receive buffer limit", remedy.KindSysctl, "key", "net.core.rmem_max", "value", "26214400"),
		fx("tcp.buffers-small", "raise TCP buffer limits to the path's BDP", remedy.KindSysctl, "key", "net.ipv4.tcp_rmem", "value", "4096 131072 67108864"),
		fx("net.backlog-drops", "keep netdev_max_backlog (already set)", remedy.KindSysctl, "key", "net.core.netdev_max_backlog", "value", "5000"),
		fx("tcp.congestion-control", "use BBR", remedy.KindCongestion, "algorithm", "bbr"),
		fx("mtu.mss-clamp-missing", "clamp MSS to the route MTU", remedy.KindMSSClamp, "oif", "wg0", "mss", "pmtu"),
		fx("conntrack.tunnel-tracked", "skip conntrack for the tunnel", remedy.KindNoTrack, "interface", "wg0", "port", "51820"),
		fx("route.stale-endpoint", "let the endpoint follow the default route", remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "table", "main"),
		fx("icmp.ratelimit-drops", "raise the ICMP flood limit", remedy.KindICMPLimit, "rate", "250", "family", "inet", "table", "banIP", "chain", "pre-routing", "handle", "4"),
		fx("cpu.softirq-imbalance", "spread receive processing", remedy.KindRPS, "device", "eth1", "mask", "3"),
		fx("bond.hash-policy", "hash the bond on layer 3+4", remedy.KindBondHash, "bond", "bond0", "policy", "layer3+4"),
		fx("throughput.collapse-knee", "cap below the knee", remedy.KindTBFCap, "device", "eth1", "rate", "150mbit"),
		fx("latency.bufferbloat", "shape the uplink below its modem", remedy.KindSQM, "device", "eth0", "bandwidth", "18mbit"),
		fx("icmp.frag-needed-dropped", "let frag-needed through", remedy.KindPMTUDAllow, "icmp", "frag-needed", "family", "inet", "table", "site", "chain", "out", "handle", "2"),
		fx("net.udp-offloads", "batch forwarded UDP", remedy.KindOffload, "device", "eth1", "features", "rx-udp-gro-forwarding=on,rx-gro-list=off"),
		fx("cpu.irq-imbalance", "move the transmit queue's interrupt", remedy.KindIRQAffinity, "irq", "39", "name", "virtio2-output.0", "cpus", "1"),
		fx("conntrack.table-pressure", "resize the conntrack hash", remedy.KindConntrackBuckets, "buckets", "65536"),
		manual,
	}
}

// wgQuickHost has /etc/wireguard/wg0.conf (with keys the plan must not print).
func wgQuickHost(t *testing.T) *targettest.Host {
	h := newFakeHost("local")
	h.On("uname -r", "6.1.0-18-amd64\n")
	h.Fail("sh -c 'command -v nft'", 1)
	h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
	h.Files["/etc/wireguard/wg0.conf"] = "[Interface]\nPrivateKey = SECRETprivatekeySECRET=\nAddress = 10.8.0.1/24\nListenPort = 51820\nMTU = 1420\n\n[Peer]\nPublicKey = " + peerKey + "\nEndpoint = 203.0.113.2:51820\nAllowedIPs = 10.8.0.2/32\n"
	// wg's own outputs, recorded in a lab (lab up --port-police 25
	// --client-port 51900): B's listen port, and A's endpoints, which name
	// B by its key (peerKey).
	h.On("wg show wg0 listen-port", recorded(t, "wg-show-listen-port.txt"))
	h.On("wg show wg0 endpoints", recorded(t, "wg-show-endpoints.txt"))
	h.On("wg show wg0 persistent-keepalive", peerKey+"\toff\n")
	h.On("tc qdisc show dev wg0 root", "qdisc fq_codel 0: root refcnt 2 limit 10240p flows 1024 quantum 1514 target 5ms interval 100ms memory_limit 32Mb ecn drop_batch 64 \n")
	h.Fail("iptables -t mangle -C POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu", 1)
	h.Answers["sh -c 'iptables -t mangle -C POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --clamp-mss-to-pmtu'"] = targettest.Answer{Code: 1}
	h.On("iptables-save -t filter", recorded(t, "iptables-save-filter-output-drop.txt"))
	// iptables-persistent restores /etc/iptables/rules.v4 at boot.
	h.On(shell.Join("sh", "-c", remedy.FirewallBootLine), "nftables \nnetfilter-persistent enabled\niptables \nfirewalld  \n")
	h.Files["/etc/iptables/rules.v4"] = "# Generated by iptables-save v1.8.9\n*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\nCOMMIT\n"
	// Beside wg0, site A of the multi-wan lab (wg-e37-a) as recorded: what
	// the ECMP fix's half reads.
	h.On("wg show all dump", string(testutil.ReadTestdata(t, "collect", "wg", "dump-lab-ecmp")))
	h.On("ip -j route", string(testutil.ReadTestdata(t, "collect", "ip", "route-lab-ecmp-a.json")))
	h.Files["/sys/class/net/wg-e37-a/mtu"] = "1420\n"
	h.Files["/proc/sys/net/ipv4/fib_multipath_hash_policy"] = "0\n"
	return h
}

// peerKey is the wg-quick host's peer, as wg-show-endpoints.txt names it
// (the recording lab's B).
const peerKey = "sLF3lPhAs0DgMlWuSVyC1w1RX34MXrKtjPsmnLPEqhs="

func wgQuickFindings() []finding.Finding {
	return []finding.Finding{
		fx("path.port-throttled", "move off the throttled port", remedy.KindWGListenPort, "interface", "wg0", "port", "51821"),
		fx("path.port-throttled", "follow the far end's new port", remedy.KindWGPeerEndpoint, "interface", "wg0", "peer", peerKey, "endpoint", "203.0.113.2:51821"),
		fx("mtu.tunnel-too-large", "lower the tunnel MTU below the underlay", remedy.KindWGMTU, "interface", "wg0", "mtu", "1380"),
		fx("path.port-throttled", "move both ends off the throttled port", remedy.KindWGPortMove, "interface", "wg0", "port", "51821", "peer", peerKey, "endpoint", "203.0.113.2:51821"),
		fx("wg.nat-no-keepalive", "keep the NAT's mapping open", remedy.KindWGPeerKeepalive, "interface", "wg0", "peer", peerKey, "seconds", "25"),
		fx("throughput.collapse-knee", "cap below the knee", remedy.KindTBFCap, "device", "wg0", "rate", "150mbit"),
		fx("mtu.mss-clamp-missing", "clamp MSS to the route MTU", remedy.KindMSSClamp, "oif", "wg0", "mss", "pmtu"),
		fx("icmp.frag-needed-dropped", "let frag-needed through", remedy.KindPMTUDAllow, "icmp", "frag-needed", "backend", "iptables",
			"family", "ip", "table", "filter", "chain", "OUTPUT", "rule", "-A OUTPUT -p icmp -m icmp --icmp-type 3/4 -j DROP"),
		fx("route.ecmp-suggested", "one half of 2 tunnels between the lab's sites", remedy.KindECMP, "interface", "wg-e37-a", "tunnels", "2",
			"peer_keys", "3VmR7PSHrDkAhmTMaC7TLTAYh9sZMcmjDXcUK8OWDHA="),
	}
}

// openWrtHost is a router like golem in the multi-WAN stale endpoint route case.
func openWrtHost(t *testing.T) *targettest.Host {
	h := newFakeHost("ssh:root@golem")
	h.On("uname -r", "5.15.150\n")
	h.On("sh -c 'command -v nft'", "/usr/sbin/nft\n")
	h.Files["/etc/openwrt_release"] = "DISTRIB_ID='OpenWrt'\n"
	h.Files["/etc/sysupgrade.conf"] = "## Files and folders a sysupgrade keeps, one a line.\n\n# /etc/example.conf\n"
	h.On("ip route show table main exact 46.38.233.77", "46.38.233.77 via 192.168.253.254 dev br-lan.253 proto static metric 20 \n")
	h.Fail("uci -q get network.wg.nohostroute", 1)
	h.On("uci -q get banip.global.ban_icmplimit", "25\n")
	h.On("uci -q get network.wg", "interface\n")
	h.On("uci -q get network.wg.mtu", "1420\n")
	h.Files["/sys/class/net/wg/mtu"] = "1420\n"
	h.Answers["nft list table inet wgperf"] = targettest.Answer{Code: 1, Stderr: recorded(t, "nft-no-table.stderr")}
	h.On("uci -q get mwan3.wan.reliability", "2\n")
	h.On("wg show wg listen-port", recorded(t, "wg-show-listen-port.txt"))
	h.On("wg show wg endpoints", recorded(t, "wg-show-endpoints.txt"))
	h.On("uci -q get network.wg.listen_port", "51820\n")
	h.On("uci -q show network", "network.wg=interface\nnetwork.wg.proto='wireguard'\nnetwork.wg.listen_port='51820'\n"+
		"network.@wireguard_wg[0]=wireguard_wg\nnetwork.@wireguard_wg[0].public_key='"+peerKey+"'\n"+
		"network.@wireguard_wg[0].endpoint_host='203.0.113.2'\nnetwork.@wireguard_wg[0].endpoint_port='51820'\n")
	h.On("uci -q get 'network.@wireguard_wg[0].endpoint_host'", "203.0.113.2\n")
	h.On("uci -q get 'network.@wireguard_wg[0].endpoint_port'", "51820\n")
	h.On("wg show wg persistent-keepalive", peerKey+"\toff\n")
	h.Fail("uci -q get 'network.@wireguard_wg[0].persistent_keepalive'", 1)
	return h
}

func openWrtFindings() []finding.Finding {
	return []finding.Finding{
		fx("route.stale-endpoint", "stop netifd pinning the endpoint route", remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "uci_interface", "wg"),
		fx("icmp.ratelimit-drops", "raise banIP's ICMP limit", remedy.KindICMPLimit, "rate", "250", "banip", "1"),
		fx("mtu.tunnel-too-large", "lower the tunnel MTU", remedy.KindWGMTU, "interface", "wg", "mtu", "1412"),
		fx("mtu.mss-clamp-missing", "clamp MSS", remedy.KindMSSClamp, "oif", "wg"),
		fx("route.stale-endpoint", "keep mwan3 from flapping", remedy.KindUCISet, "key", "mwan3.wan.reliability", "value", "1", "restart", "mwan3"),
		fx("path.port-throttled", "move off the throttled port", remedy.KindWGListenPort, "interface", "wg", "port", "51821"),
		fx("path.port-throttled", "follow the far end's new port", remedy.KindWGPeerEndpoint, "interface", "wg", "peer", peerKey, "endpoint", "203.0.113.2:51821"),
		fx("wg.nat-no-keepalive", "keep the NAT's mapping open", remedy.KindWGPeerKeepalive, "interface", "wg", "peer", peerKey, "seconds", "25"),
	}
}

func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name     string
		host     func(*testing.T) *targettest.Host
		findings []finding.Finding
	}{
		{"linux", linuxHost, linuxFindings()},
		{"wgquick", wgQuickHost, wgQuickFindings()},
		{"openwrt", openWrtHost, openWrtFindings()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			h := tc.host(t)
			env, err := Detect(ctx, h, "/")
			if err != nil {
				t.Fatal(err)
			}
			items, manual, err := Select(tc.findings, nil)
			if err != nil {
				t.Fatal(err)
			}
			p, err := MakePlan(ctx, env, items, manual)
			if err != nil {
				t.Fatal(err)
			}
			var text, script bytes.Buffer
			if err := p.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := p.WriteScript(&script); err != nil {
				t.Fatal(err)
			}
			golden(t, "plan-"+tc.name+".txt", text.String())
			golden(t, "script-"+tc.name+".sh", script.String())
			for _, out := range []string{text.String(), script.String()} {
				if strings.Contains(out, "SECRET") {
					t.Errorf("plan prints a private key:\n%s", out)
				}
			}
			// Planning only reads: every command run must be a read.
			for _, c := range h.Ran() {
				if isWrite(c) {
					t.Errorf("planning ran a command that changes the host: %s", c)
				}
			}
		})
	}
}

// isWrite spots commands that would change a host.
func isWrite(c string) bool {
	for _, w := range []string{"sysctl -w", "ip link set", "ip route del", "ip route replace", "nft -f", "nft replace", "nft delete",
		"tc qdisc replace", "tc qdisc del", "uci set", "uci commit", "uci delete", " > ", "iptables -t mangle -A", "modprobe ", "ifup"} {
		if strings.Contains(c, w) {
			return true
		}
	}
	return false
}

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("testdata", name), []byte(got))
}

func TestSelect(t *testing.T) {
	fs := linuxFindings()
	fs = append(fs, fx("udp.rcvbuf-errors", "same action again", remedy.KindSysctl, "key", "net.core.rmem_max", "value", "26214400"))
	items, manual, err := Select(fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Every finding of the host has an action but one; the one added again is merged.
	if want := len(linuxFindings()) - 1; len(items) != want || len(manual) != 1 {
		t.Errorf("got %d items and %d manual fixes, want %d and 1 (duplicate action merged)", len(items), len(manual), want)
	}
	items, _, err = Select(fs, []finding.ID{"route.stale-endpoint"})
	if err != nil || len(items) != 1 || items[0].Action.Kind != remedy.KindEndpointRoute {
		t.Errorf("--only route.stale-endpoint: got %+v, %v", items, err)
	}
	if _, _, err := Select(fs, []finding.ID{"route.stale-endpiont"}); err == nil || !strings.Contains(err.Error(), "no such finding") {
		t.Errorf("--only with a typo: got %v, want a no-such-finding error", err)
	}
}

func TestNewRejectsBadParams(t *testing.T) {
	for _, a := range []finding.Action{
		{Kind: "reboot"},
		{Kind: remedy.KindSysctl, Params: map[string]string{"key": "net.core.rmem_max; rm -rf /", "value": "1"}},
		{Kind: remedy.KindSysctl, Params: map[string]string{"key": "net.core.rmem_max"}},
		{Kind: remedy.KindWGMTU, Params: map[string]string{"interface": "wg0", "mtu": "1000"}},
		{Kind: remedy.KindMSSClamp, Params: map[string]string{"oif": "wg0", "mss": "big"}},
		{Kind: remedy.KindEndpointRoute, Params: map[string]string{"endpoint": "vpn.example.com"}},
		{Kind: remedy.KindICMPLimit, Params: map[string]string{"rate": "250"}},
		{Kind: remedy.KindTBFCap, Params: map[string]string{"device": "wg0", "rate": "fast"}},
		{Kind: remedy.KindUCISet, Params: map[string]string{"key": "network.wg.nohostroute", "value": "1", "restart": "ifup:wg; reboot"}},
		{Kind: remedy.KindRPS, Params: map[string]string{"device": "eth0", "mask": "xyz"}},
	} {
		if _, err := remedy.Parse(a); err == nil {
			t.Errorf("Parse(%v) accepted bad params", a)
		}
	}
	for _, k := range remedy.Kinds() {
		if _, err := remedy.Parse(finding.Action{Kind: k}); err == nil || strings.Contains(err.Error(), "unknown") {
			t.Errorf("kind %s: want a missing-param error, got %v", k, err)
		}
	}
}

func TestKernelAtLeast(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		want   bool
	}{{"4.19.0-27-amd64", false}, {"4.20.0", true}, {"6.1.0-18-amd64", true}, {"5.15.150", true}, {"3.10.0-1160.el7.x86_64", false}, {"weird", true}} {
		if got := (&Env{Env: remedy.Env{Kernel: tc.kernel}}).KernelAtLeast(4, 20); got != tc.want {
			t.Errorf("KernelAtLeast(4,20) on %q = %v, want %v", tc.kernel, got, tc.want)
		}
	}
}

// TestScriptCommentsHoldRemoteText: what a host answers (here a uci value
// with a newline and a command after it) is shown on the script's "now:"
// comment line and must stay a comment; sh -n and a grep for the injected
// line prove it.
func TestScriptCommentsHoldRemoteText(t *testing.T) {
	ctx := context.Background()
	h := openWrtHost(t)
	h.On("uci -q get mwan3.wan.reliability", "2\ntouch /tmp/wgperf-injected #\n")
	env, err := Detect(ctx, h, "/")
	if err != nil {
		t.Fatal(err)
	}
	items, manual, err := Select(openWrtFindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(ctx, env, items, manual)
	if err != nil {
		t.Fatal(err)
	}
	var script bytes.Buffer
	if err := p.WriteScript(&script); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(script.String(), "\n") {
		if strings.Contains(line, "touch /tmp/wgperf-injected") && !strings.HasPrefix(strings.TrimSpace(line), "#") {
			t.Errorf("remote text became a script line: %q", line)
		}
	}
	if !strings.Contains(script.String(), "touch /tmp/wgperf-injected") {
		t.Errorf("the remote value is not shown at all:\n%s", script.String())
	}
}
