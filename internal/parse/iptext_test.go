package parse

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/facts"
)

// busybox opens a recording of BusyBox ip and iproute2's JSON of the same
// namespace (testdata/collect/busybox/README).
func busybox(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "collect", "busybox", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestIPTextMatchesJSON reads BusyBox ip's text and iproute2's JSON of the
// same routes, rules and links: they agree on everything the text carries.
func TestIPTextMatchesJSON(t *testing.T) {
	for _, fam := range []struct{ file, family string }{{"ip-4-route-all", "inet"}, {"ip-6-route-all", "inet6"}} {
		want, err := ParseIPRoute(busybox(t, fam.file+".json"), fam.family)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseIPRouteText(busybox(t, fam.file+".txt"), fam.family)
		if err != nil {
			t.Fatal(err)
		}
		// BusyBox prints neither protocols nor multipath hops (its note says so).
		for i := range want {
			want[i].Protocol, want[i].Nexthops, want[i].Flags = "", nil, nil
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-json +text):\n%s", fam.file, d)
		}
	}
	wantRules, err := ParseIPRule(busybox(t, "ip-4-rule.json"), "inet")
	if err != nil {
		t.Fatal(err)
	}
	gotRules, err := ParseIPRuleText(busybox(t, "ip-4-rule.txt"), "inet")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantRules, gotRules); d != "" {
		t.Errorf("rules (-json +text):\n%s", d)
	}
	wantLinks, err := ParseIPLink(busybox(t, "ip-link.json"))
	if err != nil {
		t.Fatal(err)
	}
	gotLinks, err := ParseIPLinkText(busybox(t, "ip-o-link.txt"))
	if err != nil {
		t.Fatal(err)
	}
	// Kinds need -d, which BusyBox lacks; it prints no operstate (UP is read
	// from the flags; iproute2 says UNKNOWN for lo and the TUN).
	for i := range wantLinks {
		wantLinks[i].Kind, wantLinks[i].State = "", ""
	}
	for i := range gotLinks {
		gotLinks[i].State = ""
	}
	if d := cmp.Diff(wantLinks, gotLinks); d != "" {
		t.Errorf("links (-json +text):\n%s", d)
	}
	wantAddrs, err := ParseIPAddr(busybox(t, "ip-addr.json"))
	if err != nil {
		t.Fatal(err)
	}
	gotAddrs, err := ParseIPAddrText(busybox(t, "ip-addr.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(wantAddrs, gotAddrs); d != "" {
		t.Errorf("addresses (-json +text):\n%s", d)
	}
	// -o prints one line per address, repeating the link.
	oneline := "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever\n" +
		"4: wg0    inet 10.0.0.1 peer 10.0.0.2/32 scope global wg0\\       valid_lft forever\n" +
		"4: wg0    inet6 fd00::1/64 scope global \\       valid_lft forever\n"
	gotAddrs, err = ParseIPAddrText(strings.NewReader(oneline))
	if d := cmp.Diff([]LinkAddrs{{Name: "lo", Addrs: []string{"127.0.0.1"}}, {Name: "wg0", Addrs: []string{"10.0.0.1", "fd00::1"}}}, gotAddrs); d != "" || err != nil {
		t.Errorf("ip -o addr (-want +got), %v:\n%s", err, d)
	}
	dev, gw, src, err := ParseRouteGetText(busybox(t, "ip-route-get.txt"))
	if err != nil || dev != "eth1" || gw != "192.0.2.1" || src != "192.0.2.2" {
		t.Errorf("route get = %q %q %q, %v", dev, gw, src, err)
	}
}

func TestIPTextErrors(t *testing.T) {
	if _, err := ParseIPLinkText(strings.NewReader("Usage: ip [OPTIONS] link\n")); err == nil {
		t.Error("link: usage text accepted")
	}
	if _, err := ParseIPRuleText(strings.NewReader("from all lookup main\n"), "inet"); err == nil {
		t.Error("rule without priority accepted")
	}
	if _, err := ParseIPRouteText(strings.NewReader("blackhole\n"), "inet"); err == nil {
		t.Error("route without destination accepted")
	}
	if _, err := ParseIPAddrText(strings.NewReader("    inet 192.0.2.1/24 scope global eth0\n")); err == nil {
		t.Error("address before any link accepted")
	}
	if _, err := ParseIPAddrText(strings.NewReader("x: eth0: <UP> mtu 1500\n")); err == nil {
		t.Error("link without index accepted")
	}
	if _, _, _, err := ParseRouteGetText(strings.NewReader("RTNETLINK answers: Network is unreachable\n")); err == nil {
		t.Error("route get without dev accepted")
	}
	got, _ := ParseIPLinkText(strings.NewReader("3: eth1@if7: <BROADCAST,MULTICAST,UP> mtu 1400 qdisc noqueue master br-lan\\    link/ether x\n"))
	want := []facts.Link{{Name: "eth1", Index: 3, MTU: 1400, Qdisc: "noqueue", Master: "br-lan", State: "DOWN"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("link without LOWER_UP (-want +got):\n%s", d)
	}
}

// FuzzParseIPText: BusyBox ip's text is foreign input; whatever it holds, the
// parsers return facts that name themselves (a link has a name, a route a
// destination) or an error, and never panic.
func FuzzParseIPText(f *testing.F) {
	addCorpus(f, "busybox/*.txt")
	f.Fuzz(func(t *testing.T, b []byte) {
		if links, err := ParseIPLinkText(bytes.NewReader(b)); err == nil {
			for _, l := range links {
				if l.Name == "" {
					t.Errorf("link without a name from %q", b)
				}
			}
		}
		if routes, err := ParseIPRouteText(bytes.NewReader(b), "inet"); err == nil {
			for _, r := range routes {
				if r.Dst == "" {
					t.Errorf("route without a destination from %q", b)
				}
			}
		}
		_, _ = ParseIPRuleText(bytes.NewReader(b), "inet")
		if links, err := ParseIPAddrText(bytes.NewReader(b)); err == nil {
			for _, l := range links {
				if l.Name == "" || strings.Contains(l.Name, "@") {
					t.Errorf("address link named %q from %q", l.Name, b)
				}
			}
		}
		if dev, _, _, err := ParseRouteGetText(bytes.NewReader(b)); err == nil && dev == "" {
			t.Errorf("route get without a device from %q", b)
		}
	})
}
