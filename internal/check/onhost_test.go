package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// AllowsOn holds an action to the host it would change, on recorded
// snapshots: golem (OpenWrt, the multi-WAN case: the endpoint 46.38.233.77
// pinned via br-lan.253 while eth1 is preferred, banIP's ICMP limit), a lab
// gateway with a LAN, a tunnel of MTU 1480 and an nft ICMP limit (handle 4),
// and a lab host whose endpoint route is stale. Each refusal is issue 30's
// attack or one like it; each allowed action is what the checks propose.
func TestAllowsOn(t *testing.T) {
	golem, lan, stale := loadSnapshot(t, "seed000-golem.json"), loadSnapshot(t, "lab-mtu1480-icmplimit-lan-a.json"), loadSnapshot(t, "lab-multiwan-stale-a.json")
	act := func(kind string, kv ...string) finding.Action {
		a := finding.Action{Kind: kind, Params: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			a.Params[kv[i]] = kv[i+1]
		}
		return a
	}
	sysctl := func(k, v string) finding.Action { return act(remedy.KindSysctl, "key", k, "value", v) }
	for _, tc := range []struct {
		host *facts.Snapshot
		id   finding.ID
		a    finding.Action
		want string // "" allowed, else a part of the one-line error
	}{
		// sysctls: only the finding's keys, only raised (golem's rmem_max is 212992, its tcp_rmem "4096 131072 6291456")
		{golem, catalog.UDPRcvbufErrors, sysctl("net.core.rmem_max", "26214400"), ""},
		{golem, catalog.UDPRcvbufErrors, sysctl("kernel.randomize_va_space", "0"), `key="kernel.randomize_va_space"`},
		{golem, catalog.TCPBuffersSmall, sysctl("net.ipv4.tcp_rmem", "4096 131072 33554432"), ""},
		{golem, catalog.TCPBuffersSmall, sysctl("net.ipv4.tcp_rmem", "4096 131072 4194304"), `would lower net.ipv4.tcp_rmem's max from 6291456 on ssh:root@golem`},
		{golem, catalog.TCPBuffersSmall, sysctl("net.ipv4.tcp_rmem", "1 1 33554432"), `changes net.ipv4.tcp_rmem's min or default`},
		{golem, catalog.TCPBuffersSmall, sysctl("net.ipv4.tcp_rmem", "4096 131072 33554433"), `max a multiple of 1048576`},
		{golem, catalog.NetBacklogDrops, sysctl("net.core.netdev_max_backlog", "7777"), `want 5000, or an even number in [10000, 2147483647]`},
		{golem, catalog.NetBacklogDrops, sysctl("net.core.netdev_max_backlog", "+5000"), `want 5000`},
		// a host route: only to a peer's endpoint, in the form the host needs, via its preferred gateway
		{golem, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "table", "main", "uci_interface", "wg"), ""},
		{golem, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "table", "main", "uci_interface", "lan"), `uci_interface="lan" is not the network section of wg ("wg")`},
		{golem, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "46.38.233.77", "table", "main"), `is pinned by netifd on OpenWrt`},
		{golem, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "8.8.8.8", "table", "main", "uci_interface", "wg"), `endpoint="8.8.8.8" is not the endpoint of a peer on ssh:root@golem`},
		{stale, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "203.0.113.2", "table", "main"), ""},
		{stale, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "203.0.113.2", "table", "main", "via", "10.66.0.1", "dev", "eth0"), `needs no host route`},
		{stale, catalog.RouteStaleEndpoint, act(remedy.KindEndpointRoute, "endpoint", "203.0.113.2", "table", "220"), `table="220": want one of main`},
		// the tunnel's own interface, MTU only lowered, its own uci section
		{lan, catalog.MTUTunnelTooLarge, act(remedy.KindWGMTU, "interface", "wg-wgd4-a", "mtu", "1440"), ""},
		{lan, catalog.MTUTunnelTooLarge, act(remedy.KindWGMTU, "interface", "eth0", "mtu", "1280"), `interface="eth0" is not a WireGuard interface`},
		{lan, catalog.MTUTunnelTooLarge, act(remedy.KindWGMTU, "interface", "wg-wgd4-a", "mtu", "9000"), `would raise wg-wgd4-a's MTU from 1480`},
		{lan, catalog.MTUTunnelTooLarge, act(remedy.KindWGMTU, "interface", "wg-wgd4-a", "mtu", "1440", "uci_section", "wg"), `is a uci section, and the host is not OpenWrt`},
		{golem, catalog.MTUTunnelTooLarge, act(remedy.KindWGMTU, "interface", "wg", "mtu", "1400", "uci_section", "lan"), `is not the network section of wg`},
		{lan, catalog.MTUPMTUDBlackhole, act(remedy.KindMSSClamp, "oif", "wg-wgd4-a", "mss", "1441"), `does not fit wg-wgd4-a's MTU (1480) less 40 bytes`},
		{lan, catalog.MTUMSSClampMissing, act(remedy.KindMSSClamp, "oif", "wg-wgd4-a", "mss", "pmtu"), ""},
		{stale, catalog.MTUMSSClampMissing, act(remedy.KindMSSClamp, "oif", "wg-wgd3-a", "mss", "pmtu"), `no LAN link forwards into it`},
		// notrack: the tunnel's own listen port
		{lan, catalog.ConntrackTunnelTracked, act(remedy.KindNoTrack, "interface", "wg-wgd4-a", "port", "51820"), ""},
		{lan, catalog.ConntrackTunnelTracked, act(remedy.KindNoTrack, "interface", "wg-wgd4-a", "port", "22"), `port="22" is not the listen port of wg-wgd4-a`},
		// ICMP limits: the host's own ICMP limit rule; banIP only where it limits ICMP
		{lan, catalog.ICMPRatelimitDrops, act(remedy.KindICMPLimit, "rate", "250", "family", "inet", "table", "banIP", "chain", "pre-routing", "handle", "4"), ""},
		{lan, catalog.ICMPRatelimitDrops, act(remedy.KindICMPLimit, "rate", "250", "family", "inet", "table", "banIP", "chain", "pre-routing", "handle", "5"), `handle="5" is not a rule with an ICMP rate limit`},
		{lan, catalog.ICMPRatelimitDrops, act(remedy.KindICMPLimit, "rate", "250", "banip", "1"), `host has no banIP rule`},
		{golem, catalog.ICMPRatelimitDrops, act(remedy.KindICMPLimit, "rate", "250", "banip", "1"), ""},
		{golem, catalog.ICMPRatelimitDrops, act(remedy.KindICMPLimit, "rate", "250", "banip", "1", "family", "inet"), `wgperf writes this fix as banip="1" rate="250"`},
		// RPS on an uplink over every CPU; no tbf but on a tunnel; nothing a finding has no remedy for
		{golem, catalog.CPUSoftirqImbalance, act(remedy.KindRPS, "device", "eth1", "mask", "f"), ""},
		{golem, catalog.CPUSoftirqImbalance, act(remedy.KindRPS, "device", "eth1", "mask", "1"), `mask="1" is not the mask of the host's 4 CPUs (f)`},
		{golem, catalog.CPUSoftirqImbalance, act(remedy.KindRPS, "device", "wg", "mask", "f"), `device="wg" is not an uplink`},
		{golem, catalog.CPUSaturated, act(remedy.KindRPS, "device", "eth1", "mask", "f"), `cpu.saturated has no automatic fix`},
		{golem, catalog.ThroughputCollapseKnee, act(remedy.KindTBFCap, "device", "eth1", "rate", "150mbit"), `device="eth1" is not a WireGuard interface`},
		{golem, catalog.ThroughputCollapseKnee, act(remedy.KindTBFCap, "device", "wg", "rate", "150mbit"), ""},
		{golem, catalog.BondHashPolicy, act(remedy.KindBondHash, "bond", "eth1", "policy", "layer3+4"), `bond="eth1" is not an 802.3ad bond`},
		// what the catalog never lets a finding carry: a uci key, a module other than tcp_bbr
		{golem, catalog.RouteStaleEndpoint, act(remedy.KindUCISet, "key", "dropbear.main.RootPasswordAuth", "value", "on", "restart", "dropbear"), `is fixed by endpoint-route, not "uci-set"`},
		{golem, catalog.TCPCongestionControl, act(remedy.KindCongestion, "algorithm", "evil"), `algorithm="evil": want one of bbr`},
	} {
		err := AllowsOn(tc.id, tc.a, tc.host)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s on %s %v: refused: %v", tc.id, tc.host.Host, tc.a, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s on %s %v: err %v, want one line with %q", tc.id, tc.host.Host, tc.a, err, tc.want)
		}
	}
}
