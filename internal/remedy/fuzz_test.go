package remedy

import (
	"strings"
	"testing"
	"unicode"

	fx "github.com/wgperf/wgperf/internal/finding"
)

// FuzzConstructors feeds foreign text to every constructor's string
// parameters: a remedy a constructor accepts never carries a control
// character (a newline would end a comment in a printed script) in its
// commands, config, description or params.
func FuzzConstructors(f *testing.F) {
	for _, s := range []string{"wg0", "eth0\nreboot", "-oProxyCommand=x", "a;b", "$(reboot)", "`id`", "x'y", "net.core.rmem_max",
		"network.wg.mtu", "1\x1b[2J", "46.38.233.77", "::1", "150mbit", "NaNmbit", "ifup:wg", "/tmp/x", "\xff\xfe", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var rs []Remedy
		keep := func(r Remedy, err error) {
			if err == nil {
				rs = append(rs, r)
			}
		}
		keep(Sysctl(s, "1"))
		keep(Sysctl("net.core.rmem_max", s))
		keep(Congestion(s, true, s))
		keep(WGMTU(s, 1420, Unknown, ""))
		keep(WGMTU("wg0", 1420, OpenWrt, s))
		keep(MSSClamp(s, 0, Unknown))
		keep(Notrack(s, 51820, Unknown))
		keep(RouteDel(s, Route{Dst: s, Via: s, Dev: s}))
		keep(RouteRepoint("192.0.2.1", Route{Via: s, Dev: "eth0"}))
		keep(NoHostRoute("192.0.2.1", s))
		keep(NftReplaceRule(NftRule{Family: s, Table: "t", Chain: "c", Handle: 1, Text: "limit rate 5/second"}, 250))
		keep(NftReplaceRule(NftRule{Family: "inet", Table: "t", Chain: "c", Handle: 1, Text: s}, 250))
		keep(IptablesLimit(IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: s}, 250))
		keep(RPS(s, "3", OpenWrt))
		keep(RPS("eth0", s, Linux))
		keep(BondHash("bond0", s, OpenWrt, s))
		keep(TBF(s, "150mbit"))
		keep(TBF("wg0", s))
		keep(SQM(s, "18mbit"))
		keep(SQM("eth0", s))
		keep(UCISet(s, "1", ""))
		keep(UCISet("network.wg.mtu", s, ""))
		keep(UCISet("network.wg.mtu", "1", s))
		keep(NftAllowPMTUD(NftRule{Family: "inet", Table: s, Chain: "c", Handle: 1}, []string{FragNeeded}))
		keep(NftAllowPMTUD(NftRule{Family: "inet", Table: "t", Chain: "c", Handle: 1}, strings.Split(s, ",")))
		keep(IptablesAllowPMTUD(IptablesRule{Family: "ip", Table: "filter", Chain: "INPUT", Position: 1, Text: s}))
		keep(Offload(s, []Feature{{Name: "tx-udp-segmentation"}}))
		keep(Offload("eth0", []Feature{{Name: s, On: true}}))
		keep(IRQAffinity(s, "eth0-rx-0", "1"))
		keep(IRQAffinity("38", s, "1"))
		keep(IRQAffinity("38", "eth0-rx-0", s))
		keep(WGPeerKeepalive(s, "deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is=", 25, Unknown))
		keep(WGPeerKeepalive("wg0", s, 25, OpenWrt))
		keep(ECMP(s, 2, []string{"deOAUQJsI0IrLN6AfBAuAednsG2d+2NNtZA78s+v3is="}))
		keep(ECMP("wg0", 3, strings.Split(s, ",")))
		keep(Parse(fx.Action{Kind: KindConntrackBuckets, Params: map[string]string{"buckets": s}}))
		for _, r := range rs {
			texts := append(r.Commands(), r.Describe())
			for _, c := range r.Config() {
				texts = append(texts, c.Path)
				texts = append(texts, c.Lines...)
			}
			for k, v := range r.Params() {
				texts = append(texts, k, v)
			}
			for _, x := range texts {
				if strings.IndexFunc(x, func(c rune) bool { return unicode.IsControl(c) && c != '\t' }) >= 0 {
					t.Errorf("%s accepted %q and carries a control character: %q", r.Kind(), s, x)
				}
			}
			if _, err := Parse(fx.Action{Kind: r.Kind(), Params: r.Params()}); err != nil {
				t.Errorf("%s accepted %q, but its params do not parse back: %v", r.Kind(), s, err)
			}
		}
	})
}
