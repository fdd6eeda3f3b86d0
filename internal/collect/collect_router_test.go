package collect_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/collect"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/target"
)

// TestCollectOpenWrtRouter collects the lab's OpenWrt-like router (multi-WAN,
// banIP ICMP limit, endpoint route stuck on the backup uplink) over ssh to its
// dropbear, where only BusyBox, nft, wg, uci and logread exist. Routes, rules,
// links and the endpoint's route come from BusyBox ip's text and match what
// iproute2 sees in the namespace; uci and logread are read; what is missing is
// one note each, naming the OpenWrt package.
func TestCollectOpenWrtRouter(t *testing.T) {
	l := labtest.Up(t, lab.Config{Name: "rtow", Topology: lab.MultiWAN, ICMPLimit: 25, Router: true})
	spec := labtest.Router(t, l)
	t.Cleanup(target.CloseAll)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	endpoint := l.Node("b").UnderlayAddr
	// Multi-WAN router: the endpoint's host route was made while the backup was the way out.
	if _, err := l.Target("a").Run(ctx, "ip", "route", "add", endpoint, "via", "192.0.2.1", "dev", "eth1", "proto", "static", "metric", "20"); err != nil {
		t.Fatal(err)
	}
	remote, err := target.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The session really is the router's userland.
	for _, prog := range []string{"ethtool", "conntrack", "iperf3", "tcpdump"} {
		if _, err := remote.Run(ctx, prog, "--version"); !target.IsNotFound(err) {
			t.Errorf("%s on the router: %v, want not found", prog, err)
		}
	}
	if _, err := remote.Run(ctx, "logger", "-t", "mwan3track[4321]", "Interface wan (eth0) is offline"); err != nil {
		t.Fatal(err)
	}

	snap, err := collect.Collect(ctx, remote, collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(snap.System.Distro, "OpenWrt") || snap.OpenWrt == nil {
		t.Fatalf("distro %q, openwrt %+v", snap.System.Distro, snap.OpenWrt)
	}
	if got := snap.OpenWrt.Network["network.wg_rtow_a.proto"]; got != "wireguard" {
		t.Errorf("uci network.wg_rtow_a.proto = %q", got)
	}
	if got := snap.OpenWrt.Banip["banip.global.ban_icmplimit"]; got != "25" {
		t.Errorf("uci banip.global.ban_icmplimit = %q", got)
	}
	if len(snap.OpenWrt.Events) != 1 || snap.OpenWrt.Events[0].Interface != "wan" || snap.OpenWrt.Events[0].State != "offline" {
		t.Errorf("logread events %+v", snap.OpenWrt.Events)
	}
	want := []facts.Note{
		{Source: "ethtool -k", Message: "ethtool not installed (apk add ethtool (opkg install ethtool before OpenWrt 25))"},
		{Source: "ip", Message: "BusyBox ip (no JSON): read its text, which lacks route protocols (an endpoint's host route is judged by its gateway alone), multipath hops, link kinds and bonds: apk add ip-full (opkg install ip-full before OpenWrt 25)"},
	}
	if d := cmp.Diff(want, snap.Notes); d != "" || !snap.IPText {
		t.Errorf("notes (-want +got):\n%s; ip_text %v", d, snap.IPText)
	}
	if len(snap.Endpoints) != 1 || snap.Endpoints[0].Dev != "eth1" || snap.Endpoints[0].Gateway != "192.0.2.1" {
		t.Errorf("endpoint route %+v, want via the backup 192.0.2.1 dev eth1", snap.Endpoints)
	}
	if len(snap.Firewall.Counters) == 0 {
		t.Errorf("no nft counters (banIP's cnt_icmpflood) read")
	}

	// The same host through its namespace, with iproute2's JSON.
	full, err := collect.Collect(ctx, l.Target("a"), collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(mainRoutes(full.Routes, false), mainRoutes(snap.Routes, false)); d != "" {
		t.Errorf("IPv4 main-table routes (-iproute2 +busybox):\n%s", d)
	}
	if d := cmp.Diff(full.Rules, snap.Rules); d != "" {
		t.Errorf("rules (-iproute2 +busybox):\n%s", d)
	}
	type link struct {
		Name  string
		MTU   int
		Qdisc string
	}
	links := func(ls []facts.Link) (out []link) {
		for _, l := range ls {
			out = append(out, link{l.Name, l.MTU, l.Qdisc})
		}
		return out
	}
	if d := cmp.Diff(links(full.Links), links(snap.Links)); d != "" {
		t.Errorf("links (-iproute2 +busybox):\n%s", d)
	}
	// Addresses, as bench and shape-sweep look for the tunnel.
	addrs, err := discover.Addresses(ctx, remote)
	if err != nil {
		t.Fatal(err)
	}
	fullAddrs, err := discover.Addresses(ctx, l.Target("a"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(fullAddrs, addrs); d != "" {
		t.Errorf("addresses (-iproute2 +busybox):\n%s", d)
	}

	// With ip-full installed the router gives iproute2's JSON: the route
	// protocols are there and the note is gone.
	if err := l.RouterInstall("ip-full"); err != nil {
		t.Fatal(err)
	}
	snap, err = collect.Collect(ctx, remote, collect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want[:1], snap.Notes); d != "" || snap.IPText {
		t.Errorf("notes with ip-full (-want +got):\n%s; ip_text %v", d, snap.IPText)
	}
	if d := cmp.Diff(mainRoutes(full.Routes, true), mainRoutes(snap.Routes, true)); d != "" {
		t.Errorf("IPv4 main-table routes with ip-full (-netns +ssh):\n%s", d)
	}
}

// mainRoutes keeps the IPv4 routes of the main table, the ones wgperf's checks
// read; without withProto, also without the protocol BusyBox does not print.
func mainRoutes(rs []facts.Route, withProto bool) []facts.Route {
	var out []facts.Route
	for _, r := range rs {
		if r.Family != "inet" || r.Table != "main" {
			continue
		}
		if !withProto {
			r.Protocol = ""
		}
		r.Flags = nil
		out = append(out, r)
	}
	return out
}
