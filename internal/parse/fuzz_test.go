package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addCorpus seeds a fuzz test with every recorded file matching the globs.
func addCorpus(f *testing.F, globs ...string) {
	f.Helper()
	for _, g := range globs {
		files, err := filepath.Glob(testdata(g))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			b, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
}

func FuzzParseSNMP(f *testing.F) {
	addCorpus(f, "proc/snmp*", "proc/netstat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseSNMP(bytes.NewReader(b))
		if err == nil && len(m) == 0 {
			t.Error("no error but no counters")
		}
	})
}

func FuzzParseSoftnet(f *testing.F) {
	addCorpus(f, "proc/softnet_stat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := ParseSoftnet(bytes.NewReader(b))
		if err == nil && len(rows) == 0 {
			t.Error("no error but no rows")
		}
	})
}

// FuzzParseNetDev holds the parser to its contract: an error, or named
// interfaces each listed once.
func FuzzParseNetDev(f *testing.F) {
	addCorpus(f, "proc/net_dev*")
	f.Fuzz(func(t *testing.T, b []byte) {
		devs, err := ParseNetDev(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if len(devs) == 0 {
			t.Fatal("no error but no interfaces")
		}
		seen := map[string]bool{}
		for _, d := range devs {
			if d.Name == "" || strings.ContainsAny(d.Name, ": \t\n") || seen[d.Name] {
				t.Fatalf("interface name %q (empty, with a separator or listed twice)", d.Name)
			}
			seen[d.Name] = true
		}
	})
}

// FuzzParseProcNetUDP holds the parser to its contract: an error in one
// line, or sockets with a port that fits 16 bits.
func FuzzParseProcNetUDP(f *testing.F) {
	addCorpus(f, "proc/udp*")
	addCorpus(f, "kernelwg/proc-net-udp*")
	f.Fuzz(func(t *testing.T, b []byte) {
		socks, err := ParseProcNetUDP(bytes.NewReader(b), "inet")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for _, s := range socks {
			if s.LocalPort < 0 || s.LocalPort > 65535 || s.Family != "inet" {
				t.Fatalf("socket %+v", s)
			}
		}
	})
}

// FuzzParseProcNetTCP holds the parser to its contract: an error in one
// line, or sockets in the state asked for with ports that fit 16 bits.
func FuzzParseProcNetTCP(f *testing.F) {
	addCorpus(f, "proc/tcp/*")
	f.Fuzz(func(t *testing.T, b []byte) {
		socks, err := ParseProcNetTCP(bytes.NewReader(b), TCPEstablished)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for _, s := range socks {
			if s.LocalPort < 0 || s.LocalPort > 65535 || s.RemotePort < 0 || s.RemotePort > 65535 || s.State != TCPEstablished {
				t.Fatalf("socket %+v", s)
			}
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	addCorpus(f, "proc/stat*")
	f.Fuzz(func(t *testing.T, b []byte) {
		cpus, err := ParseProcStat(bytes.NewReader(b))
		if err == nil && len(cpus) == 0 {
			t.Error("no error but no cpus")
		}
	})
}

func FuzzParseWGDump(f *testing.F) {
	addCorpus(f, "wg/dump*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ifaces, err := ParseWGDump(bytes.NewReader(b))
		if err != nil {
			return
		}
		if lines := bytes.Count(b, []byte("\n")) + 1; len(ifaces) > lines {
			t.Errorf("%d interfaces from %d lines", len(ifaces), lines)
		}
	})
}

func FuzzParseIPLink(f *testing.F) {
	addCorpus(f, "ip/link*.json", "ip/transcribed/*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := ParseIPLink(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, l := range links {
			if l.Name == "" {
				t.Error("link without a name")
			}
		}
	})
}

func FuzzParseIPRoute(f *testing.F) {
	addCorpus(f, "ip/route*-all.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		routes, err := ParseIPRoute(bytes.NewReader(b), "inet")
		if err != nil {
			return
		}
		for _, r := range routes {
			if r.Dst == "" || r.Table == "" {
				t.Errorf("route without dst or table: %+v", r)
			}
		}
	})
}

func FuzzParseIPRule(f *testing.F) {
	addCorpus(f, "ip/rule*.json")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseIPRule(bytes.NewReader(b), "inet") })
}

func FuzzParseRouteGet(f *testing.F) {
	addCorpus(f, "ip/route-get-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		dev, _, _, err := ParseRouteGet(bytes.NewReader(b))
		if err == nil && dev == "" {
			t.Error("no error but no device")
		}
	})
}

func FuzzParseEthtoolFeatures(f *testing.F) {
	addCorpus(f, "ethtool/*")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseEthtoolFeatures(bytes.NewReader(b)) })
}

func FuzzParseNftRuleset(f *testing.F) {
	addCorpus(f, "nft/*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		rules, _, err := ParseNftRuleset(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Backend != "nft" {
				t.Errorf("backend %q", r.Backend)
			}
		}
	})
}

func FuzzParseNftText(f *testing.F) {
	addCorpus(f, "nft/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseNftText(bytes.NewReader(b)) })
}

func FuzzParseIptablesSave(f *testing.F) {
	addCorpus(f, "iptables/*")
	f.Fuzz(func(t *testing.T, b []byte) {
		rules, _, _, err := ParseIptablesSave(bytes.NewReader(b), "ip")
		if err != nil {
			return
		}
		for _, r := range rules {
			if r.Chain == "" || r.Table == "" {
				t.Errorf("rule without chain or table: %+v", r)
			}
		}
	})
}

func FuzzParseInterrupts(f *testing.F) {
	addCorpus(f, "proc/interrupts")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseInterrupts(bytes.NewReader(b), []string{"eth0"}) })
}

func FuzzParseConntrackStat(f *testing.F) {
	addCorpus(f, "conntrack/stat-*")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseConntrackStat(bytes.NewReader(b)) })
}

func FuzzParseConntrackS(f *testing.F) {
	addCorpus(f, "conntrack/conntrack-S*")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseConntrackS(bytes.NewReader(b)) })
}

// FuzzParseIPAddr: "ip -j addr" comes from the far end; it parses or fails,
// never panics.
func FuzzParseIPAddr(f *testing.F) {
	addCorpus(f, "busybox/ip-addr.json", "../probe/discover/ip-addr-*.json")
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := ParseIPAddr(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, l := range links {
			if l.Name == "" {
				t.Error("link without a name")
			}
		}
	})
}

func FuzzParseUCI(f *testing.F) {
	addCorpus(f, "openwrt/uci-show-*")
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseUCI(bytes.NewReader(b))
		if err != nil {
			return
		}
		for k, v := range m {
			if !uciKeptKey(k, v) || strings.HasSuffix(k, ".private_key") || strings.HasSuffix(k, ".preshared_key") {
				t.Errorf("%s=%q kept: not on the allow-list", k, v)
			}
		}
	})
}

func FuzzParseMwan3Checks(f *testing.F) {
	addCorpus(f, "openwrt/logread-*")
	f.Fuzz(func(t *testing.T, b []byte) {
		checks, err := ParseMwan3Checks(bytes.NewReader(b))
		for _, c := range checks {
			if err == nil && (c.Failed < 1 || len(c.Targets) == 0 || c.Last.Before(c.First)) {
				t.Errorf("inconsistent sums %+v", c)
			}
		}
	})
}

func FuzzParseMwan3Events(f *testing.F) {
	addCorpus(f, "openwrt/logread-*")
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseMwan3Events(bytes.NewReader(b)) })
}

func FuzzParseMwan3Status(f *testing.F) {
	addCorpus(f, "openwrt/mwan3-status*")
	f.Fuzz(func(t *testing.T, b []byte) {
		uplinks, policies, _ := ParseMwan3Status(bytes.NewReader(b))
		for _, u := range uplinks {
			if u.Interface == "" || u.Status == "" || u.Online < 0 || u.Uptime < 0 {
				t.Errorf("uplink %+v", u)
			}
		}
		for _, p := range policies {
			for _, s := range p.Shares {
				if s.Percent < 0 || s.Percent > 100 {
					t.Errorf("share %+v", s)
				}
			}
		}
	})
}

func FuzzParseXfrm(f *testing.F) {
	addCorpus(f, "xfrm/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		policies, _ := ParseXfrmPolicy(bytes.NewReader(b))
		for _, p := range policies {
			if p.Src == "" || p.Dst == "" || p.Dir == "" || p.Templates == nil {
				t.Errorf("policy %+v", p)
			}
		}
		states, _ := ParseXfrmState(bytes.NewReader(b))
		for _, s := range states {
			if s.Src == "" || s.Dst == "" || s.Proto == "" {
				t.Errorf("state %+v", s)
			}
		}
	})
}

func FuzzParseNetifdDump(f *testing.F) {
	addCorpus(f, "openwrt/ubus-*")
	f.Fuzz(func(t *testing.T, b []byte) {
		ifaces, err := ParseNetifdDump(bytes.NewReader(b))
		for _, i := range ifaces {
			if err == nil && (i.Name == "" || i.Uptime < 0 || !i.Up && i.Uptime != 0) {
				t.Errorf("interface %+v", i)
			}
		}
	})
}
