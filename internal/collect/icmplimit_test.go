package collect

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/testutil"
)

// loadICMPForm reads one recorded ICMP-limit form the way the collector does:
// nft -j and nft -a, iptables-save -c and ip6tables-save -c where recorded.
func loadICMPForm(t *testing.T, form string) facts.Firewall {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "collect", "icmplimit")
	fw, err := parse.ParseNftFirewall(testutil.OpenTestdata(t, "collect", "icmplimit", form+".nft.json"))
	if err != nil {
		t.Fatal(err)
	}
	texts, err := parse.ParseNftText(testutil.OpenTestdata(t, "collect", "icmplimit", form+".nft.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range fw.Rules {
		fw.Rules[i].Text = texts[parse.NftRuleKey(r.Family, r.Table, r.Chain, fmt.Sprint(r.Handle))]
	}
	var ipt IptablesView
	for _, fam := range []struct{ file, family string }{{".iptables-save.txt", "ip"}, {".ip6tables-save.txt", "ip6"}} {
		f, err := os.Open(filepath.Join(dir, form+fam.file))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		rules, chains, nf, err := parse.ParseIptablesSave(f, fam.family)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		ipt.Rules, ipt.Chains, ipt.NfBackend = append(ipt.Rules, rules...), append(ipt.Chains, chains...), ipt.NfBackend || nf
	}
	return MergeFirewall(&fw, ipt)
}

// describeRules prints each rule as the ICMP-limit check sees it, in order.
func describeRules(fw facts.Firewall) []string {
	var out []string
	for _, r := range fw.Rules {
		id := fmt.Sprintf("#%d", r.Position)
		if r.Backend == "nft" {
			id = fmt.Sprintf("handle %d", r.Handle)
		}
		s := fmt.Sprintf("%s %s %s %s %s %s:", r.Backend, r.Family, r.Table, r.Chain, r.Hook, id)
		if r.IIf != "" {
			s += " iif=" + r.IIf
		}
		if r.Protocol != "" {
			s += " proto=" + r.Protocol
		}
		if l := r.Limit; l != nil {
			s += fmt.Sprintf(" limit over=%v %d/%s burst %d %s", l.Over, l.Rate, l.Per, l.Burst, l.Unit)
		}
		if r.Meter != "" {
			s += " meter=" + r.Meter
		}
		if r.HasCounter {
			s += fmt.Sprintf(" counter=%d", r.Packets)
		}
		if r.CounterName != "" {
			s += " name=" + r.CounterName
		}
		if r.Verdict != "" {
			s += " " + r.Verdict
		}
		out = append(out, s)
	}
	return out
}

func describeChains(fw facts.Firewall) []string {
	var out []string
	for _, c := range fw.Chains {
		s := fmt.Sprintf("%s %s %s %s hook=%s policy=%s", c.Backend, c.Family, c.Table, c.Name, c.Hook, c.Policy)
		if c.HasCounter {
			s += fmt.Sprintf(" counter=%d", c.Packets)
		}
		out = append(out, s)
	}
	return out
}

// TestParseICMPLimitForms reads every recorded form of an ICMP rate limit:
// the limit (over or under, per source in meters and dynamic sets), what
// follows it in chain order, and the chain policies with iptables' counters.
func TestParseICMPLimitForms(t *testing.T) {
	tests := []struct {
		form          string
		rules, chains []string
	}{
		{"nft-accept-then-drop", []string{
			"nft inet filter input input handle 2: proto=icmp limit over=false 10/second burst 5 packets counter=10 accept",
			"nft inet filter input input handle 3: proto=icmp counter=50 drop",
		}, []string{
			"nft inet filter input hook=input policy=accept",
		}},
		{"nft-accept-policy-drop", []string{
			"nft ip filter4 input input handle 2: iif=lo accept",
			"nft ip filter4 input input handle 3: proto=icmp limit over=false 10/second burst 5 packets accept",
		}, []string{
			"nft ip filter4 input hook=input policy=drop",
		}},
		{"nft-ip6-accept-reject-nocounter", []string{
			"nft ip6 filter6 input input handle 2: proto=icmpv6 limit over=false 10/second burst 5 packets accept",
			"nft ip6 filter6 input input handle 3: proto=icmpv6 reject",
		}, []string{
			"nft ip6 filter6 input hook=input policy=accept",
		}},
		{"nft-forward-accept-then-drop", []string{
			"nft inet fwdguard forward forward handle 2: iif=veth-ac proto=icmp limit over=false 10/second burst 5 packets accept",
			"nft inet fwdguard forward forward handle 3: iif=veth-ac proto=icmp counter=50 drop",
		}, []string{
			"nft inet fwdguard forward hook=forward policy=accept",
		}},
		{"nft-dynset-over", []string{
			"nft inet flood prerouting prerouting handle 3: proto=icmp limit over=true 10/second burst 5 packets meter=icmp_src counter=50 drop",
		}, []string{
			"nft inet flood prerouting hook=prerouting policy=accept",
		}},
		{"nft-meter-over", []string{
			"nft ip flood input input handle 3: proto=icmp limit over=true 10/second burst 5 packets meter=icmpflood counter=104 drop",
		}, []string{
			"nft ip flood input hook=input policy=accept",
		}},
		{"fw4-limit-accept", []string{
			"nft inet fw4 input input handle 5: iif=lo accept",
			"nft inet fw4 input input handle 6: accept",
			"nft inet fw4 input input handle 7: iif=veth-a jump input_wan",
			"nft inet fw4 input_wan  handle 8: proto=icmp limit over=false 10/second burst 5 packets counter=23 accept",
			"nft inet fw4 input_wan  handle 9: jump reject_from_wan",
			"nft inet fw4 handle_reject  handle 10: proto=tcp reject",
			"nft inet fw4 handle_reject  handle 11: reject",
			"nft inet fw4 reject_from_wan  handle 12: iif=veth-a counter=20 jump handle_reject",
		}, []string{
			"nft inet fw4 input hook=input policy=drop",
			"nft inet fw4 input_wan hook= policy=",
			"nft inet fw4 handle_reject hook= policy=",
			"nft inet fw4 reject_from_wan hook= policy=",
		}},
		{"banip-over", []string{
			"nft inet banIP pre-routing prerouting handle 5: iif=!lo,br-lan proto=icmp,ipv6-icmp limit over=true 10/second burst 5 packets counter=160 name=cnt_icmpflood drop",
		}, []string{
			"nft inet banIP pre-routing hook=prerouting policy=accept",
		}},
		{"ipt-limit-accept-drop", []string{
			"iptables ip filter INPUT input #1: proto=icmp limit over=false 10/second burst 5 packets counter=10 accept",
			"iptables ip filter INPUT input #2: proto=icmp counter=50 drop",
		}, []string{
			"iptables ip filter INPUT hook=input policy=accept counter=0",
			"iptables ip filter FORWARD hook=forward policy=accept counter=0",
			"iptables ip filter OUTPUT hook=output policy=accept counter=0",
		}},
		{"ipt-mangle-prerouting-limit-drop", []string{
			"iptables ip mangle PREROUTING prerouting #1: iif=veth-a proto=icmp limit over=false 10/second burst 5 packets counter=16 accept",
			"iptables ip mangle PREROUTING prerouting #2: iif=veth-a proto=icmp counter=104 drop",
		}, []string{
			"iptables ip mangle PREROUTING hook=prerouting policy=accept counter=0",
			"iptables ip mangle INPUT hook=input policy=accept counter=0",
			"iptables ip mangle FORWARD hook=forward policy=accept counter=0",
			"iptables ip mangle OUTPUT hook=output policy=accept counter=0",
			"iptables ip mangle POSTROUTING hook=postrouting policy=accept counter=0",
		}},
		{"ipt-limit-accept-policy", []string{
			"iptables ip filter INPUT input #1: iif=lo counter=0 accept",
			"iptables ip filter INPUT input #2: proto=icmp limit over=false 10/second burst 5 packets counter=16 accept",
		}, []string{
			"iptables ip filter INPUT hook=input policy=drop counter=104",
			"iptables ip filter FORWARD hook=forward policy=accept counter=0",
			"iptables ip filter OUTPUT hook=output policy=accept counter=0",
		}},
		{"ipt-hashlimit-accept-reject", []string{
			"iptables ip filter INPUT input #1: proto=icmp limit over=false 10/second burst 5 packets counter=16 accept",
			"iptables ip filter INPUT input #2: proto=icmp counter=104 reject",
		}, []string{
			"iptables ip filter INPUT hook=input policy=accept counter=0",
			"iptables ip filter FORWARD hook=forward policy=accept counter=0",
			"iptables ip filter OUTPUT hook=output policy=accept counter=0",
		}},
		{"ipt-hashlimit-above-drop", []string{
			"iptables ip filter INPUT input #1: proto=icmp limit over=true 10/second burst 5 packets counter=104 drop",
		}, []string{
			"iptables ip filter INPUT hook=input policy=accept counter=0",
			"iptables ip filter FORWARD hook=forward policy=accept counter=0",
			"iptables ip filter OUTPUT hook=output policy=accept counter=0",
		}},
		{"ip6t-limit-accept-drop", []string{
			"iptables ip6 filter INPUT input #1: proto=icmpv6 limit over=false 10/second burst 5 packets counter=10 accept",
			"iptables ip6 filter INPUT input #2: proto=icmpv6 counter=50 drop",
		}, []string{
			"iptables ip6 filter INPUT hook=input policy=accept counter=0",
			"iptables ip6 filter FORWARD hook=forward policy=accept counter=0",
			"iptables ip6 filter OUTPUT hook=output policy=accept counter=0",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.form, func(t *testing.T) {
			fw := loadICMPForm(t, tc.form)
			if d := cmp.Diff(tc.rules, describeRules(fw)); d != "" {
				t.Errorf("rules (-want +got)\n%s", d)
			}
			if d := cmp.Diff(tc.chains, describeChains(fw)); d != "" {
				t.Errorf("chains (-want +got)\n%s", d)
			}
		})
	}
}
