package mtu

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The PMTUD case's workaround on the case's own uplink name and path MTU:
// the physical MTU by hand, then the offloads as an automatic fix; nothing
// for an uplink not known or not a device name.
func TestPMTUDWorkarounds(t *testing.T) {
	fixes := pmtudWorkarounds("ens3", 1400)
	if len(fixes) != 2 {
		t.Fatalf("fixes %+v", fixes)
	}
	if fixes[0].Action != nil || strings.Join(fixes[0].Commands, "; ") != "ip link set dev ens3 mtu 1400" {
		t.Errorf("physical MTU fix %+v", fixes[0])
	}
	a := fixes[1].Action
	if a == nil || a.Kind != remedy.KindOffload || a.Params["device"] != "ens3" ||
		a.Params["features"] != "tcp-segmentation-offload=off,generic-segmentation-offload=off,generic-receive-offload=off" {
		t.Errorf("offload fix %+v", fixes[1])
	}
	if !strings.Contains(fixes[1].Description, "costs CPU") {
		t.Errorf("the offload fix does not say its CPU cost: %q", fixes[1].Description)
	}
	if got := pmtudWorkarounds("ens3", 0); len(got) != 1 || got[0].Action == nil {
		t.Errorf("no path MTU measured: want the offloads alone, got %+v", got)
	}
	for _, dev := range []string{"", "ens3;reboot", "-oProxyCommand=x"} {
		if got := pmtudWorkarounds(dev, 1400); got != nil {
			t.Errorf("uplink %q: %+v", dev, got)
		}
	}
}

// uplinkTo reads the device from ip's JSON (iproute2) or, where ip has no
// -j, its text (BusyBox), both recorded; a route it cannot read names none.
func TestUplinkTo(t *testing.T) {
	const addr = "203.0.113.2"
	for _, tt := range []struct{ name, json, text, want string }{
		{name: "iproute2 JSON", json: string(testutil.ReadTestdata(t, "collect", "ip", "route-get-default.json")), want: "wgc-r0"},
		{name: "BusyBox text", text: string(testutil.ReadTestdata(t, "collect", "busybox", "ip-route-get.txt")), want: "eth1"},
		{name: "no route", json: "[]\n"},
		{name: "a name no command may carry", json: `[{"dst":"203.0.113.2","dev":"eth0;reboot"}]`},
	} {
		h := targettest.New("ssh:gw")
		if tt.json != "" {
			h.On("ip -j route get "+addr, tt.json)
		}
		if tt.text != "" {
			h.On("ip route get "+addr, tt.text)
		}
		if got := uplinkTo(context.Background(), h, addr); got != tt.want {
			t.Errorf("%s: uplink %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A black hole found with the client's uplink known: the WireGuard MTU stays
// the first automatic fix (the one wgperf fix applies), the case's workaround
// comes last; without the uplink it is left out.
func TestBlackHoleOffersWorkaroundsLast(t *testing.T) {
	r := &Result{Client: targettest.Spec("ssh:site-b"), Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1412, SearchMax: 1500, BlackHole: true,
		WGMTU: 1340, MSSClamp: 1300, ClientIface: "wg0", ClientUplink: "ens3"}
	fs := Findings(r)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	fixes := fs[0].Fixes
	first := slices.IndexFunc(fixes, func(f finding.Fix) bool { return f.Action != nil })
	if first < 0 || fixes[first].Action.Kind != remedy.KindWGMTU {
		t.Errorf("first automatic fix %+v, want the WireGuard MTU", fixes)
	}
	n := len(fixes)
	if n < 2 || fixes[n-2].Commands[0] != "ip link set dev ens3 mtu 1400" || fixes[n-1].Action == nil || fixes[n-1].Action.Kind != remedy.KindOffload {
		t.Errorf("last fixes %+v, want the physical MTU, then the offloads", fixes)
	}
	r.ClientUplink = ""
	for _, f := range Findings(r)[0].Fixes {
		if f.Action != nil && f.Action.Kind == remedy.KindOffload {
			t.Errorf("uplink unknown, yet %+v", f)
		}
	}
}
