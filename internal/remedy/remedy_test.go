package remedy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// must returns a function that fails t when a constructor refuses.
func must(t *testing.T) func(Remedy, error) Remedy {
	return func(r Remedy, err error) Remedy {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

func TestConstructorsRefuseBadValues(t *testing.T) {
	for name, err := range map[string]error{
		"sysctl name with a command": func() error { _, err := Sysctl("net.core.rmem_max; rm -rf /", "1"); return err }(),
		"sysctl value with newline":  func() error { _, err := Sysctl("net.core.rmem_max", "1\ntouch /x"); return err }(),
		"sysctl value with =":        func() error { _, err := Sysctl("net.core.rmem_max", "1=2"); return err }(),
		"interface starting with -":  func() error { _, err := WGMTU("-oProxy", 1420, Linux, ""); return err }(),
		"interface too long":         func() error { _, err := WGMTU("wg0123456789abcdef", 1420, Linux, ""); return err }(),
		"mtu below IPv6 minimum":     func() error { _, err := WGMTU("wg0", 1000, Linux, ""); return err }(),
		"uci section with a space":   func() error { _, err := WGMTU("wg0", 1420, OpenWrt, "wg 0"); return err }(),
		"mss out of range":           func() error { _, err := MSSClamp("wg0", 100000, Linux); return err }(),
		"port 0":                     func() error { _, err := Notrack("wg0", 0, Linux); return err }(),
		"endpoint a hostname": func() error {
			_, err := RouteDel("vpn.example.com", Route{Dst: "1.2.3.4", Via: "192.0.2.1", Dev: "eth0"})
			return err
		}(),
		"gateway not an address": func() error {
			_, err := RouteDel("1.2.3.4", Route{Dst: "1.2.3.4", Via: "$(reboot)", Dev: "eth0"})
			return err
		}(),
		"nft table with a space":  func() error { _, err := NftReplaceRule(NftRule{"inet", "a b", "c", 1, "x"}, 250); return err }(),
		"nft rule with a newline": func() error { _, err := NftReplaceRule(NftRule{"inet", "t", "c", 1, "drop\naccept"}, 250); return err }(),
		"nft rule with a second one": func() error {
			_, err := NftReplaceRule(NftRule{"inet", "t", "c", 1, "drop; flush ruleset"}, 250)
			return err
		}(),
		"icmp rate 0":                func() error { _, err := BanIPLimit(0); return err }(),
		"rps mask not hex":           func() error { _, err := RPS("eth0", "xyz", Linux); return err }(),
		"bond policy unknown":        func() error { _, err := BondHash("bond0", "layer9", Linux, ""); return err }(),
		"tbf rate NaN":               func() error { _, err := TBF("wg0", "NaNmbit"); return err }(),
		"tbf rate absurd":            func() error { _, err := TBF("wg0", "1e20mbit"); return err }(),
		"tbf rate too small":         func() error { _, err := TBF("wg0", "10kbit"); return err }(),
		"uci key without option":     func() error { _, err := UCISet("network.wg", "1", ""); return err }(),
		"uci value with newline":     func() error { _, err := UCISet("network.wg.mtu", "1\nreboot", ""); return err }(),
		"uci value with control":     func() error { _, err := UCISet("network.wg.mtu", "1\x1b[2J", ""); return err }(),
		"uci restart with a command": func() error { _, err := UCISet("network.wg.mtu", "1", "ifup:wg; reboot"); return err }(),
		"uci restart with a glob":    func() error { _, err := UCISet("network.wg.mtu", "1", "ifup:wg[0]"); return err }(),
		"uci interface with a glob":  func() error { _, err := NoHostRoute("192.0.2.1", "wg[0]"); return err }(),
		"uci restart of any program": func() error { _, err := UCISet("network.wg.mtu", "1", "/tmp/evil"); return err }(),
		"uci restart out of init.d":  func() error { _, err := UCISet("network.wg.mtu", "1", "/etc/init.d/../../tmp/evil"); return err }(),
		"congestion with a space":    func() error { _, err := Congestion("bbr x", true, ""); return err }(),
		"offload feature unknown":    func() error { _, err := Offload("eth0", []Feature{{Name: "rx-checksumming"}}); return err }(),
		"offload feature twice": func() error {
			_, err := Offload("eth0", []Feature{{Name: "rx-gro-list"}, {Name: "rx-gro-list", On: true}})
			return err
		}(),
		"offload device with a command": func() error { _, err := Offload("eth0;reboot", []Feature{{Name: "rx-gro-list"}}); return err }(),
		"pmtud icmp unknown": func() error {
			_, err := NftAllowPMTUD(NftRule{"inet", "filter", "input", 3, ""}, []string{"echo-reply"})
			return err
		}(),
		"pmtud icmpv6 in family ip": func() error {
			_, err := NftAllowPMTUD(NftRule{"ip", "filter", "input", 3, ""}, []string{PacketTooBig})
			return err
		}(),
		"pmtud chain with a space": func() error {
			_, err := NftAllowPMTUD(NftRule{"inet", "filter", "in put", 3, ""}, []string{FragNeeded})
			return err
		}(),
		"pmtud handle 0": func() error {
			_, err := NftAllowPMTUD(NftRule{"inet", "filter", "input", 0, ""}, []string{FragNeeded})
			return err
		}(),
		"pmtud iptables rule of another chain": func() error {
			_, err := IptablesAllowPMTUD(IptablesRule{"ip", "filter", "INPUT", 1, "-A OUTPUT -p icmp -j DROP"})
			return err
		}(),
		"pmtud iptables rule with a newline": func() error {
			_, err := IptablesAllowPMTUD(IptablesRule{"ip", "filter", "INPUT", 1, "-A INPUT -p icmp -j DROP\nreboot"})
			return err
		}(),
	} {
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseRoundTrips(t *testing.T) {
	m := must(t)
	for _, r := range []Remedy{
		m(Sysctl("net.ipv4.tcp_rmem", "4096\t131072  6291456")),
		m(Congestion("bbr", false, "6.1.0")),
		m(WGMTU("wg0", 1380, OpenWrt, "wgsite")),
		m(MSSClamp("wg0", 0, OpenWrt)),
		m(MSSClamp("wg0", 1300, Unknown)),
		m(Notrack("wg0", 51820, Linux)),
		m(RouteDel("46.38.233.77", Route{Dst: "46.38.233.77", Via: "192.168.253.254", Dev: "br-lan.253"})),
		m(RouteRepoint("2001:db8::1", Route{Via: "fe80::1", Dev: "eth1"})),
		m(NoHostRoute("46.38.233.77", "wg")),
		m(BanIPLimit(250)),
		m(NftReplaceRule(NftRule{"inet", "banIP", "pre-routing", 4, "limit rate over 25/second burst 5 packets drop"}, 250)),
		m(RPS("eth1", "3", OpenWrt)),
		m(BondHash("bond0", "layer3+4", Linux, "")),
		m(TBF("eth1", "150Mbit")),
		m(UCISet("mwan3.wan.reliability", "1", "mwan3")),
		m(NftAllowPMTUD(NftRule{"inet", "filter", "forward", 3, "meta l4proto { icmp, ipv6-icmp } drop"}, []string{PacketTooBig, FragNeeded})),
		m(IptablesAllowPMTUD(IptablesRule{"ip6", "filter", "FORWARD", 1, "-A FORWARD -p ipv6-icmp -m icmp6 --icmpv6-type 2 -j DROP"})),
		m(Offload("eth0", []Feature{{Name: "rx-udp-gro-forwarding", On: true}, {Name: "rx-gro-list"}})),
		m(IRQAffinity("38", "virtio2-input.0", "0-1")),
		m(ConntrackBuckets(65536)),
	} {
		p, err := Parse(finding.Action{Kind: r.Kind(), Params: r.Params()})
		if err != nil {
			t.Errorf("%s %v: %v", r.Kind(), r.Params(), err)
			continue
		}
		if diff := cmp.Diff(r.Params(), p.Params()); diff != "" || p.Kind() != r.Kind() || p.Describe() != r.Describe() {
			t.Errorf("%s does not round-trip (-built +parsed):\n%s", r.Kind(), diff)
		}
	}
	if got := m(Sysctl("net.ipv4.tcp_rmem", "4096\t131072  6291456")).Params()["value"]; got != "4096 131072 6291456" {
		t.Errorf("sysctl value %q: want tabs folded", got)
	}
}

func TestParseRefusesUnknownAndMissing(t *testing.T) {
	if _, err := Parse(finding.Action{Kind: "reboot"}); err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("unknown kind: %v", err)
	}
	for _, k := range Kinds() {
		if _, err := Parse(finding.Action{Kind: k}); err == nil || !strings.Contains(err.Error(), "missing param") {
			t.Errorf("kind %s without params: %v", k, err)
		}
	}
}

// The display shows what the plan does, wherever the remedy was built.
func TestDisplay(t *testing.T) {
	m := must(t)
	mssFile := []string{
		"# Written by wgperf fix; delete this file and run: nft delete chain inet wgperf mss_wg0",
		"table inet wgperf {",
		"\tchain mss_wg0 {",
		"\t\ttype filter hook postrouting priority mangle; policy accept;",
		"\t\toifname \"wg0\" tcp flags syn / syn,rst tcp option maxseg size set 1300 comment \"wgperf mss-clamp wg0 1300\"",
		"\t}",
		"}",
	}
	for _, tc := range []struct {
		name   string
		r      Remedy
		cmds   []string
		config []finding.ConfigSnippet
	}{
		{"BBR on an old kernel, module missing", m(Congestion("bbr", true, "4.19.0-27-amd64")),
			[]string{"modprobe tcp_bbr", "sysctl -w net.ipv4.tcp_congestion_control=bbr", "sysctl -w net.core.default_qdisc=fq"},
			[]finding.ConfigSnippet{{Path: SysctlConf, Lines: []string{"net.ipv4.tcp_congestion_control = bbr", "net.core.default_qdisc = fq"}},
				{Path: ModulesConf, Lines: []string{"tcp_bbr"}}}},
		{"BBR on a new kernel", m(Congestion("bbr", false, "6.1.0-18-amd64")),
			[]string{"sysctl -w net.ipv4.tcp_congestion_control=bbr"},
			[]finding.ConfigSnippet{{Path: SysctlConf, Lines: []string{"net.ipv4.tcp_congestion_control = bbr"}}}},
		{"BBR, kernel unknown (bench)", m(Congestion("bbr", true, "")),
			[]string{"modprobe tcp_bbr", "sysctl -w net.ipv4.tcp_congestion_control=bbr", "# on kernels before 4.20 also: sysctl -w net.core.default_qdisc=fq"},
			[]finding.ConfigSnippet{{Path: SysctlConf, Lines: []string{"net.ipv4.tcp_congestion_control = bbr", "# on kernels before 4.20 also: net.core.default_qdisc = fq"}},
				{Path: ModulesConf, Lines: []string{"tcp_bbr"}}}},
		{"MTU on OpenWrt", m(WGMTU("wg", 1412, OpenWrt, "wgsite")),
			[]string{"ip link set dev wg mtu 1412", "uci set network.wgsite.mtu=1412", "uci commit network"},
			[]finding.ConfigSnippet{{Path: "/etc/config/network (interface wgsite)", Lines: []string{"option mtu '1412'"}}}},
		{"MTU, platform unknown (mtu probe)", m(WGMTU("wg0", 1340, Unknown, "")),
			[]string{"ip link set dev wg0 mtu 1340", "# on OpenWrt also: uci set network.wg0.mtu=1340 && uci commit network"},
			[]finding.ConfigSnippet{{Path: "/etc/wireguard/wg0.conf [Interface]", Lines: []string{"MTU = 1340"}},
				{Path: "/etc/config/network (interface wg0)", Lines: []string{"option mtu '1340'"}}}},
		{"MSS clamp to a number, platform unknown (mtu probe)", m(MSSClamp("wg0", 1300, Unknown)),
			[]string{"nft add table inet wgperf",
				"nft 'add chain inet wgperf mss_wg0 { type filter hook postrouting priority mangle; policy accept; }'",
				`nft 'add rule inet wgperf mss_wg0 oifname "wg0" tcp flags syn / syn,rst tcp option maxseg size set 1300 comment "wgperf mss-clamp wg0 1300"'`,
				"# or, with iptables: iptables -t mangle -A POSTROUTING -o wg0 -p tcp --tcp-flags SYN,RST SYN -m comment --comment wgperf -j TCPMSS --set-mss 1300"},
			[]finding.ConfigSnippet{
				{Path: "/etc/wgperf/nft/mss_wg0.nft", Lines: mssFile},
				{Path: "/usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg0.nft", Lines: append(mssFile[:1:1], append(
					[]string{"# fw4 includes /usr/share/nftables.d/ruleset-post/*.nft after its own table at every firewall",
						"# start (auto_includes in /etc/config/firewall); /etc/sysupgrade.conf lists this file for sysupgrade."},
					mssFile[1:]...)...)},
				{Path: "/etc/nftables.conf", Lines: []string{"# wgperf fix: its own table", `include "/etc/wgperf/nft/*.nft"`}},
				{Path: "/etc/sysupgrade.conf", Lines: []string{"/usr/share/nftables.d/ruleset-post/90-wgperf-mss_wg0.nft"}}}},
		{"tbf with the burst the plan applies", m(TBF("wg0", "150mbit")),
			[]string{"tc qdisc replace dev wg0 root tbf rate 150mbit burst 184kb latency 400ms"},
			[]finding.ConfigSnippet{{Path: "/etc/wireguard/wg0.conf [Interface]", Lines: []string{"PostUp = tc qdisc replace dev %i root tbf rate 150mbit burst 184kb latency 400ms"}}}},
		{"nft limit without the rule text (icmp-burst)", m(NftReplaceRule(NftRule{"inet", "banIP", "pre-routing", 4, ""}, 250)),
			[]string{"nft -a list chain inet banIP pre-routing"}, nil},
		{"nft limit per minute becomes per second", m(NftReplaceRule(NftRule{"ip", "filter", "input", 7, "icmp type echo-reply limit rate 60/minute accept"}, 250)),
			[]string{"nft 'replace rule ip filter input handle 7 icmp type echo-reply limit rate 250/second burst 25 packets accept'"},
			[]finding.ConfigSnippet{{Path: "/etc/nftables.conf (table ip filter, chain input)", Lines: []string{"icmp type echo-reply limit rate 250/second burst 25 packets accept"}}}},
	} {
		if diff := cmp.Diff(tc.cmds, tc.r.Commands()); diff != "" {
			t.Errorf("%s: commands (-want +got):\n%s", tc.name, diff)
		}
		if diff := cmp.Diff(tc.config, tc.r.Config()); diff != "" {
			t.Errorf("%s: config (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestFixesDropsARefusedRemedy(t *testing.T) {
	r, err := WGMTU("wg0", 1000, Linux, "")
	if fs := Fixes("lower it", r, err); fs != nil {
		t.Errorf("refused remedy became fixes %+v", fs)
	}
	r, err = WGMTU("wg0", 1420, Linux, "")
	fs := Fixes("lower it", r, err)
	if len(fs) != 1 || fs[0].Action == nil || fs[0].Action.Kind != KindWGMTU || fs[0].Description != "lower it" {
		t.Errorf("fixes %+v", fs)
	}
}

// On OpenWrt the NOTRACK chains persist where fw4 includes a table of our
// own (ruleset-post, after "table inet fw4"; /etc/nftables.d is read inside
// that table), each file says so, and sysupgrade is told to keep them.
func TestNotrackPersistsForFw4(t *testing.T) {
	r, err := Notrack("wg0", 51820, OpenWrt)
	if err != nil {
		t.Fatal(err)
	}
	cfg := r.Config()
	var paths []string
	for _, c := range cfg {
		paths = append(paths, c.Path)
	}
	want := []string{"/usr/share/nftables.d/ruleset-post/90-wgperf-notrack_wg0_in.nft",
		"/usr/share/nftables.d/ruleset-post/90-wgperf-notrack_wg0_out.nft", "/etc/sysupgrade.conf"}
	if d := cmp.Diff(want, paths); d != "" {
		t.Fatalf("persisted in (-want +got):\n%s", d)
	}
	if got := strings.Join(cfg[0].Lines, "\n"); !strings.Contains(got, "# fw4 includes /usr/share/nftables.d/ruleset-post/*.nft after its own table") ||
		!strings.Contains(got, "table inet wgperf {") || strings.Contains(got, "/etc/nftables.d") {
		t.Errorf("chain file:\n%s", got)
	}
	if d := cmp.Diff(want[:2], cfg[2].Lines); d != "" {
		t.Errorf("sysupgrade.conf lines (-want +got):\n%s", d)
	}
}

// TestUCIKeyGrammarIsShells is issue 30 item 11: a uci-set action (from a
// findings file, through Parse) accepts exactly the keys shell.UCIKey does —
// a leading "-" that uci would read as an option above all — and a section
// for wg-mtu or endpoint-route is a section that grammar allows.
func TestUCIKeyGrammarIsShells(t *testing.T) {
	for _, key := range []string{
		"network.wg0.mtu", "firewall.@defaults[0].flow_offloading", "network.@interface[-1].mtu", "banip.global.ban_icmplimit",
		"-network.wg0.mtu", "-c.x.y", "network.-wg0.mtu", "network.wg0.-mtu", "network.wg-0.mtu", "network.wg0.mt-u",
		"network.@[0].mtu", "network.wg0", "network..mtu", "network.wg0.mtu.x", "net-work.wg0.mtu",
	} {
		_, err := Parse(finding.Action{Kind: KindUCISet, Params: map[string]string{"key": key, "value": "1"}})
		want := shell.UCIKey(key)
		if (err == nil) != (want == nil) {
			t.Errorf("uci-set key %q: Parse says %v, shell.UCIKey says %v", key, err, want)
		}
	}
	for _, a := range []finding.Action{
		{Kind: KindWGMTU, Params: map[string]string{"interface": "wg0", "mtu": "1420", "uci_section": "-wg0"}},
		{Kind: KindWGMTU, Params: map[string]string{"interface": "wg0", "mtu": "1420", "uci_section": "wg-0"}},
		{Kind: KindEndpointRoute, Params: map[string]string{"endpoint": "192.0.2.7", "uci_interface": "wg-0"}},
	} {
		if _, err := Parse(a); err == nil {
			t.Errorf("%s %v: accepted a uci section outside uci's grammar", a.Kind, a.Params)
		}
	}
	// A device whose name is no uci section is persisted by wg-quick only.
	r, err := WGMTU("wg-site", 1420, OpenWrt, "")
	if err != nil || strings.Contains(strings.Join(r.Commands(), "\n"), "uci") || r.Params()["uci_section"] != "" {
		t.Errorf("WGMTU(wg-site) = %v, %v: want no uci command", r, err)
	}
}

// TestHeredocHoldsNoRawControls: a file with carriage returns or escape
// sequences (a wg-quick config edited on Windows) is written by a line that
// shows them escaped, and the shell still writes it byte for byte.
func TestHeredocHoldsNoRawControls(t *testing.T) {
	for _, data := range []string{"[Interface]\r\nMTU = 1420\r\n", "a\x1b]52;c;eA==\x07\n", "plain\n", "no newline", "\xff\xfe latin\n"} {
		path := filepath.Join(t.TempDir(), "f")
		line := Heredoc(path, []byte(data))
		if shell.Terminal(line) != line {
			t.Errorf("raw control characters in %q", line)
		}
		if out, err := exec.Command("sh", "-c", line).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", line, err, out)
		}
		if got, _ := os.ReadFile(path); string(got) != data {
			t.Errorf("%s wrote %q, want %q", line, got, data)
		}
	}
}

// A sweep's cap is shaped as the fix shapes it: the same tc command.
func TestTBFCommandIsTheFixs(t *testing.T) {
	for _, rate := range []string{"8mbit", "150mbit"} {
		argv, err := TBFCommand("wg0", rate)
		if err != nil {
			t.Fatal(err)
		}
		r, err := TBF("wg0", rate)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := shell.Join(argv[0], argv[1:]...), r.Commands()[0]; got != want {
			t.Errorf("%s: sweep %q, fix %q", rate, got, want)
		}
	}
	if _, err := TBFCommand("wg0", "10kbit"); err == nil {
		t.Error("a rate below 100kbit was taken")
	}
}
