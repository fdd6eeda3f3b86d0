package fix

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/labtest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// The ECMP-over-bonding case in the multi-wan lab: both uplinks at 100 Mbit/s, one tunnel uses
// only the primary. "fix ecmp --tunnels 2 --apply --verify" adds a tunnel
// pinned to the backup uplink and a multipath route; parallel streams to site
// B's network must then carry at least 1.7 times as much.
func TestFixECMPApplyScalesInMultiWANLab(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireTools(t, "iperf3")
	l := labtest.Up(t, lab.Config{Name: "wgvecmp", Topology: lab.MultiWAN, Underlay: lab.Shape{RateMbit: 100}, Backup: lab.Shape{RateMbit: 100}})
	out, code := runWgperf(t, "fix", "ecmp", "--host", "netns:"+l.Netns("a"), "--tunnels", "2", "--apply", "--verify", "--time", "3", "--json")
	var res struct {
		Tunnels []lab.Tunnel `json:"tunnels"`
		Verify  *struct {
			TunnelsBefore int     `json:"tunnels_before"`
			BeforeMbit    float64 `json:"before_mbit"`
			AfterMbit     float64 `json:"after_mbit"`
			Scaling       float64 `json:"scaling"`
		} `json:"verify"`
	}
	if err := json.Unmarshal(out, &res); err != nil || code != 0 || res.Verify == nil {
		t.Fatalf("exit %d, output %q: %v", code, out, err)
	}
	v := res.Verify
	t.Logf("before %.1f Mbit/s (%d tunnel), after %.1f Mbit/s (%d tunnels): %.2fx", v.BeforeMbit, v.TunnelsBefore, v.AfterMbit, len(res.Tunnels), v.Scaling)
	if len(res.Tunnels) != 2 || v.TunnelsBefore != 1 {
		t.Errorf("tunnels before %d, after %d; want 1 and 2", v.TunnelsBefore, len(res.Tunnels))
	}
	if v.Scaling < 1.7 {
		t.Errorf("aggregate scaling %.2fx, want >= 1.7x", v.Scaling)
	}
	route, err := l.Target("a").Run(t.Context(), "ip", "route", "show", lab.SiteBNet)
	if err != nil || strings.Count(string(route), "nexthop") != 2 {
		t.Errorf("route to %s on A: %s %v; want two next hops", lab.SiteBNet, route, err)
	}
}

// Outside a lab, --apply refuses in one line with exit 3: both ends need the configs.
func TestFixECMPApplyOutsideLabExplains(t *testing.T) {
	out, code := runWgperf(t, "fix", "ecmp", "--host", "ssh:root@site-a.example", "--apply")
	if code != 3 || len(out) != 0 {
		t.Errorf("exit %d, stdout %q; want 3 and nothing on stdout", code, out)
	}
}
