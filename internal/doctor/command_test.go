package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// The verdict's command: --verify only where a bench can see the gain,
// --from the saved report where only a probe proved the finding.
func TestCommand(t *testing.T) {
	withFix := func(id finding.ID, host string) finding.Finding {
		return finding.Finding{ID: id, Host: targettest.Spec(host), Fixes: []finding.Fix{{Action: &finding.Action{Kind: remedy.KindSysctl}}}}
	}
	route := withFix("route.stale-endpoint", "ssh:root@golem")
	icmp := withFix("icmp.ratelimit-drops", "ssh:root@golem")
	hole := withFix("mtu.pmtud-blackhole", "ssh:root@golem")
	bond := withFix("bond.hash-policy", "ssh:root@golem")
	r := &Report{Client: targettest.Spec("ssh:root@golem"), Server: targettest.Spec("ssh:m42"), passive: map[causeKey]bool{key(route): true, key(icmp): true, key(bond): true}}
	for _, tc := range []struct {
		f    finding.Finding
		want string
	}{
		{route, "wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --verify --server ssh:m42 --confirm 60s"},
		{icmp, "wgperf fix --host ssh:root@golem --only icmp.ratelimit-drops --apply --confirm 60s"},
		// One tunnel stays on one slave under either hash: a bench would roll the fix back.
		{bond, "wgperf fix --host ssh:root@golem --only bond.hash-policy --apply --verify --server ssh:m42 --confirm 60s"},
		{hole, "wgperf fix --host ssh:root@golem --from doctor.json --only mtu.pmtud-blackhole --apply --verify --server ssh:m42 --confirm 60s"},
		{finding.Finding{ID: "cpu.saturated", Host: targettest.Spec("ssh:m42"), Fixes: []finding.Fix{{Commands: []string{"top"}}}}, ""},
		// Either half of a port move alone cuts the tunnel: doctor --fix applies both.
		{withFix("path.port-throttled", "ssh:m42"), "wgperf doctor --client ssh:root@golem --server ssh:m42 --fix"},
	} {
		if got := r.command(tc.f); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.f.ID, got, tc.want)
		}
	}
	r.Server = targettest.Spec("")
	if got := r.command(route); got != "wgperf fix --host ssh:root@golem --only route.stale-endpoint --apply --confirm 60s" {
		t.Errorf("one end: %q", got)
	}
	if got := r.command(withFix("path.port-throttled", "ssh:root@golem")); got != "" {
		t.Errorf("a fix of both ends without the other end: %q", got)
	}
}

// --fix applies the verdict, and the same kind of remedy where it is critical
// on the other end too (both ends of a black-holed tunnel lower their MTU).
func TestFixSteps(t *testing.T) {
	act := func(kind string) []finding.Fix { return []finding.Fix{{Action: &finding.Action{Kind: kind}}} }
	cause := func(id finding.ID, host string, sev finding.Severity, kind string) Cause {
		return Cause{Finding: finding.Finding{ID: id, Host: targettest.Spec(host), Severity: sev, Fixes: act(kind)}, Command: "wgperf fix ..."}
	}
	hole := cause("mtu.pmtud-blackhole", "a", finding.Critical, remedy.KindWGMTU)
	big := cause("mtu.tunnel-too-large", "b", finding.Critical, remedy.KindWGMTU)
	bigA := cause("mtu.tunnel-too-large", "a", finding.Critical, remedy.KindWGMTU)
	route := cause("route.stale-endpoint", "a", finding.Critical, remedy.KindEndpointRoute)
	icmp := cause("icmp.ratelimit-drops", "a", finding.Warning, remedy.KindICMPLimit)
	warnMTU := cause("mtu.mss-clamp-missing", "b", finding.Warning, remedy.KindWGMTU)
	farPort := cause("path.port-throttled", "b", finding.Critical, remedy.KindWGListenPort)
	nearPort := cause("path.port-throttled", "a", finding.Critical, remedy.KindWGPeerEndpoint)
	for _, tc := range []struct {
		name   string
		causes []Cause
		want   string
	}{
		{"black hole: both ends' MTU", []Cause{hole, big, bigA}, "a:mtu.pmtud-blackhole,mtu.tunnel-too-large b:mtu.tunnel-too-large"},
		{"stale route: that route only", []Cause{route, icmp}, "a:route.stale-endpoint"},
		{"warnings of the same kind wait", []Cause{hole, warnMTU}, "a:mtu.pmtud-blackhole"},
		// Both halves of a port move, the far end's first, whichever ranked first.
		{"port move: the far end, then the near end", []Cause{nearPort, farPort, hole}, "b:path.port-throttled a:path.port-throttled"},
		{"port move with one half only", []Cause{nearPort}, "a:path.port-throttled"},
	} {
		var got []string
		for _, st := range fixSteps(tc.causes[0], tc.causes) {
			got = append(got, st.Host.String()+":"+finding.JoinIDs(st.IDs, ","))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: steps %q, want %q", tc.name, strings.Join(got, " "), tc.want)
		}
	}
}

// The exit status after --fix judges what remains: a kept, confirmed fix takes
// its findings out, and the slowness with them once the bench after it is healthy.
func TestRemaining(t *testing.T) {
	f := func(id finding.ID, host string) finding.Finding {
		return finding.Finding{ID: id, Host: targettest.Spec(host), Severity: finding.Critical}
	}
	findings := []finding.Finding{f("mtu.pmtud-blackhole", "a"), f("mtu.tunnel-too-large", "b"), f("throughput.tunnel-ratio", "a"), f("udp.rcvbuf-errors", "b")}
	healthy := &Measured{Benched: true, Expected: 0.9, Throughput: bench.Throughput{Up: bench.DirRate{Tunnel: 95, Underlay: 100}, Down: bench.DirRate{Tunnel: 94, Underlay: 100}}}
	slow := &Measured{Benched: true, Expected: 0.9, Throughput: bench.Throughput{Up: bench.DirRate{Tunnel: 95, Underlay: 100}, Down: bench.DirRate{Tunnel: 40, Underlay: 100}}}
	steps := []FixStep{{Host: targettest.Spec("a"), IDs: []finding.ID{"mtu.pmtud-blackhole"}}, {Host: targettest.Spec("b"), IDs: []finding.ID{"mtu.tunnel-too-large"}}}
	for _, tc := range []struct {
		name string
		fix  *FixOutcome
		want string
	}{
		{"no fix", nil, "mtu.pmtud-blackhole mtu.tunnel-too-large throughput.tunnel-ratio udp.rcvbuf-errors"},
		{"fixed and healthy after", &FixOutcome{Applied: true, Kept: true, Confirm: true, After: healthy, Steps: steps}, "udp.rcvbuf-errors"},
		{"fixed, still slow one way", &FixOutcome{Applied: true, Kept: true, Confirm: true, After: slow, Steps: steps}, "throughput.tunnel-ratio udp.rcvbuf-errors"},
		{"rolled back", &FixOutcome{Applied: true, Kept: false, Confirm: false, After: healthy, Steps: steps}, "mtu.pmtud-blackhole mtu.tunnel-too-large throughput.tunnel-ratio udp.rcvbuf-errors"},
		{"not confirmed", &FixOutcome{Applied: true, Kept: true, Confirm: false, After: healthy, Steps: steps}, "mtu.pmtud-blackhole mtu.tunnel-too-large throughput.tunnel-ratio udp.rcvbuf-errors"},
	} {
		r := &Report{Findings: findings, Fix: tc.fix}
		var got []string
		for _, x := range r.Remaining() {
			got = append(got, string(x.ID))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: remaining %q, want %q", tc.name, strings.Join(got, " "), tc.want)
		}
	}
}

// --fix verifies its first step against doctor's own bench (and, on the
// client, its path MTU search), seen from the step's host; a later step
// starts from what the previous verification measured.
func TestFixPrior(t *testing.T) {
	path := &mtu.Result{Addr: "203.0.113.2", PathMTU: 1400}
	r := &Report{Client: targettest.Spec("netns:a"), Server: targettest.Spec("netns:b")}
	r.SetResult(mtu.Def, path)
	bench := &tunnelNow{tunnel: tunnelMbit(0, 0.3), source: "doctor's bench"}
	if p := r.prior(bench, targettest.Spec("netns:a")); p == nil || p.Tunnel != tunnelMbit(0, 0.3) || p.MTU != path || p.Source != "from doctor's bench" {
		t.Errorf("client step: %+v", p)
	}
	if p := r.prior(bench, targettest.Spec("netns:b")); p == nil || p.Tunnel != tunnelMbit(0.3, 0) || p.MTU != nil {
		t.Errorf("server step: %+v (upload and download swap; the MTU search ran from the client)", p)
	}
	later := &tunnelNow{tunnel: tunnelMbit(181, 0.3), source: "the verification after mtu.pmtud-blackhole on netns:a"}
	if p := r.prior(later, targettest.Spec("netns:a")); p == nil || p.MTU != nil || p.Tunnel.Up.Tunnel != 181 {
		t.Errorf("later step: %+v", p)
	}
	if r.prior(nil, targettest.Spec("netns:a")) != nil {
		t.Error("nothing measured: a prior")
	}
}

// tunnelMbit is one stream through the tunnel each way.
func tunnelMbit(up, down float64) bench.Throughput {
	return bench.Throughput{Up: bench.DirRate{Tunnel: up}, Down: bench.DirRate{Tunnel: down}}
}
