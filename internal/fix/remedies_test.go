package fix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestEveryProducedRemedyPlans feeds every fix the checks produce on
// testdata/snapshots, and every fix the probes produce on their recorded
// fixtures, through the apply engine's Select and MakePlan, on a Linux and an
// OpenWrt host that answer every read. A remedy a check or probe suggests but
// "wgperf fix" cannot plan fails here, and so does a finding its catalog
// entry does not describe: a severity outside its range, an action it does
// not allow.
func TestEveryProducedRemedyPlans(t *testing.T) {
	sources := map[string][]finding.Finding{}
	snaps, err := filepath.Glob("../../testdata/snapshots/*.json")
	if err != nil || len(snaps) == 0 {
		t.Fatalf("no snapshots: %v", err)
	}
	var all []*facts.Snapshot
	for _, p := range snaps {
		s := readSnapshot(t, p)
		all = append(all, s)
		sources["check "+filepath.Base(p)] = check.Run([]*facts.Snapshot{s}, check.Options{}).Findings
	}
	sources["cross-host checks"] = check.Run(all, check.Options{}).Findings
	for name, fs := range probeFindings(t) {
		sources[name] = fs
	}

	kinds := map[string]bool{}
	for name, fs := range sources {
		for _, f := range fs {
			e, ok := check.Lookup(f.ID)
			if !ok {
				t.Errorf("%s: finding ID %q is not in the catalog", name, f.ID)
			} else if !slices.Contains(e.Severities, f.Severity) {
				t.Errorf("%s: %s is %s, outside its catalog range %v", name, f.ID, f.Severity, e.Severities)
			}
			for _, fx := range f.Fixes {
				if fx.Action == nil {
					continue
				}
				kinds[fx.Action.Kind] = true
				if err := check.Allows(f.ID, *fx.Action); err != nil {
					t.Errorf("%s: the catalog does not allow what wgperf proposed: %v", name, err)
				}
				// The constructor's params are canonical: parsing them back
				// gives the same value, so what JSON carries is what fix plans.
				r, err := remedy.Parse(*fx.Action)
				if err != nil {
					t.Errorf("%s: %s: %v", name, f.ID, err)
					continue
				}
				if diff := cmp.Diff(fx.Action.Params, r.Params()); diff != "" {
					t.Errorf("%s: %s: params do not round-trip (-fix +parsed):\n%s", name, f.ID, diff)
				}
			}
		}
		// Select plans the first fix with an action of each finding; give
		// every fix a finding of its own so none goes unplanned.
		var each []finding.Finding
		for _, f := range fs {
			for _, fx := range f.Fixes {
				g := f
				g.Fixes = []finding.Fix{fx}
				each = append(each, g)
			}
		}
		items, manual, err := Select(each, nil)
		if err != nil {
			t.Errorf("%s: select: %v", name, err)
			continue
		}
		for _, host := range []func() *targettest.Host{anyLinuxHost, anyOpenWrtHost} {
			h := host()
			env, err := Detect(context.Background(), h, "/")
			if err != nil {
				t.Fatal(err)
			}
			p, err := MakePlan(context.Background(), env, items, manual)
			if err != nil {
				t.Errorf("%s on %s: %v", name, h.Spec, err)
				continue
			}
			checkDisplayedFiles(t, name+" on "+h.Spec, each, p)
			var buf bytes.Buffer
			if err := p.WriteScript(&buf); err != nil {
				t.Errorf("%s on %s: script: %v", name, h.Spec, err)
			}
			for _, c := range h.Ran() {
				if isWrite(c) {
					t.Errorf("%s on %s: planning ran a command that changes the host: %s", name, h.Spec, c)
				}
			}
		}
	}
	// The fixtures must keep exercising most kinds, or this test proves little.
	for _, k := range []string{remedy.KindSysctl, remedy.KindCongestion, remedy.KindWGMTU, remedy.KindMSSClamp,
		remedy.KindEndpointRoute, remedy.KindICMPLimit, remedy.KindTBFCap} {
		if !kinds[k] {
			t.Errorf("no check or probe fixture produced a %s fix", k)
		}
	}
}

func readSnapshot(t *testing.T, path string) *facts.Snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s facts.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &s
}

// probeFindings runs each probe's pure analysis on its recorded fixtures.
func probeFindings(t *testing.T) map[string][]finding.Finding {
	t.Helper()
	probe := func(parts ...string) string {
		return filepath.Join(append([]string{"..", "..", "testdata", "probe"}, parts...)...)
	}
	open := func(parts ...string) *os.File {
		f, err := os.Open(probe(parts...))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	out := map[string][]finding.Finding{}

	// bench: a lossy CUBIC tunnel, UDP buffer errors and an oscillating rate.
	iperfRun := func(name string) *iperf.Result {
		r, err := iperf.Parse(open("iperf", name))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	osc := &iperf.Result{Protocol: "tcp", Streams: 1, Congestion: "bbr"}
	for i, m := range []float64{180, 40, 170, 30, 175, 35, 180, 40, 170, 30} {
		osc.Intervals = append(osc.Intervals, iperf.Interval{Start: float64(i), End: float64(i + 1), Mbit: m, Cwnd: []int64{200000}})
	}
	osc.SentMbit, osc.ReceivedMbit = 105, 105
	rep := &bench.Report{Client: targettest.Spec("netns:a"), Server: targettest.Spec("netns:b"), ClientInterface: "wg-a", ServerInterface: "wg-b", Hops: 1, Runs: []bench.Run{
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Upload, Streams: 1}, Result: iperfRun("tcp-lossy-cubic.json"),
			Client: bench.HostDelta{Host: targettest.Spec("netns:a")}, Server: bench.HostDelta{Host: targettest.Spec("netns:b"), UDPRcvbufErrors: 9312}},
		{Spec: bench.Spec{Path: bench.PathUnderlay, Direction: bench.Upload, Streams: 1}, Result: iperfRun("tcp-upload.json")},
		{Spec: bench.Spec{Path: bench.PathTunnel, Direction: bench.Download, Streams: 1}, Result: osc},
	}}
	bench.Analyze(rep)
	out["bench"] = rep.Findings

	// mtu: a black hole with an MSS cliff, and a router's MSS clamp seen in SYNs.
	out["mtu"] = mtu.Findings(&mtu.Result{Client: targettest.Spec("netns:a"), ClientIface: "wg-a", Addr: "203.0.113.2", PathMTU: 1400, FirstFailed: 1401,
		BlackHole: true, SearchMax: 1500, WGMTU: 1340, MSSClamp: 1300, ReferenceMbit: 178, MSSGood: 1288, MSSBad: 1296,
		MSSRuns: []mtu.MSSRun{{MSS: 1288, Mbit: 176, Healthy: true}, {MSS: 1296, Mbit: 0.05}}})
	syns := func(name string) []mtu.SYN {
		s, err := mtu.ParseTcpdump(open("capture", name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	capRes := &mtu.CaptureResult{Client: targettest.Spec("c"), Server: targettest.Spec("s"), Port: 5299, ClientDevice: "eth0", ServerDevice: "eth0", ClientInterface: "wg0", ClientWGMTU: 1420}
	if err := mtu.AnalyzeCapture(capRes, syns("clamp1360-client.txt"), syns("clamp1360-server.txt")); err != nil {
		t.Fatal(err)
	}
	out["mtu capture"] = capRes.Findings

	// icmp-burst: the recorded banIP limit rule grew while one-shot pings failed.
	rules, _, err := parse.ParseNftRuleset(open("icmpburst", "nft-after.json"))
	if err != nil {
		t.Fatal(err)
	}
	burst := &icmpburst.Result{Host: targettest.Spec("netns:a"), OneShot: icmpburst.Mode{Sent: 30, Failed: 5}, Persistent: icmpburst.Mode{Sent: 15}}
	for i, r := range rules {
		if r.Limit != nil {
			burst.Grew = append(burst.Grew, icmpburst.CounterGrowth{FirewallGrowth: firewall.FirewallGrowth{Rule: &rules[i], Packets: 5}})
		}
	}
	if len(burst.Grew) == 0 {
		t.Fatal("icmpburst fixture has no limit rule")
	}
	out["icmp-burst"] = icmpburst.Findings(burst)

	// shape-sweep: a cap at 200 Mbit/s is steadier than none and faster than
	// its mean (the remote users case's table).
	sweep := &shaping.Result{Client: targettest.Spec("netns:a"), Device: "wg-a", Steps: []shaping.Step{
		{CapMbit: 0, Stats: bench.Stats{Mbit: 165, CV: 0.35, Collapses: 3}},
		{CapMbit: 200, Stats: bench.Stats{Mbit: 200, CV: 0.06}},
	}}
	sweep.Recommended = shaping.Recommend(sweep.Steps, shaping.PreferSteady)
	out["shape-sweep"] = shaping.Findings(sweep)

	for name, fs := range out {
		if len(fs) == 0 {
			t.Errorf("probe fixture %s produced no findings", name)
		}
	}
	return out
}

var (
	handleRE   = regexp.MustCompile(`^nft -a list chain (\S+) (\S+) (\S+)$`)
	routeRE    = regexp.MustCompile(`^ip route show table \S+ exact (\S+)$`)
	sysctlRead = regexp.MustCompile(`^sysctl -n (\S+)$`)
)

// anyHost answers every read a plan makes with a plausible value: links
// exist with MTU 1500, sysctls are 0 (CUBIC on a 4.19 kernel), a host route
// to every endpoint, an ICMP limit rule at every handle, no wgperf table.
func anyHost(spec string) *targettest.Host {
	h := newFakeHost(spec)
	h.On("uname -r", "4.19.0-27-amd64\n")
	h.On("sh -c 'command -v nft'", "/usr/sbin/nft\n")
	h.Answers["nft list table inet wgperf"] = targettest.Answer{Code: 1, Stderr: "Error: No such file or directory\n"}
	h.On("sysctl -n net.ipv4.tcp_available_congestion_control", "reno cubic\n")
	h.Fallback = func(line string) (targettest.Answer, bool) {
		switch {
		case sysctlRead.MatchString(line):
			return targettest.Answer{Out: "0\n"}, true
		case routeRE.MatchString(line):
			return targettest.Answer{Out: routeRE.FindStringSubmatch(line)[1] + " via 192.0.2.1 dev eth0 proto static \n"}, true
		case handleRE.MatchString(line):
			var b strings.Builder
			m := handleRE.FindStringSubmatch(line)
			fmt.Fprintf(&b, "table %s %s {\n\tchain %s {\n", m[1], m[2], m[3])
			for i := 0; i < 1000; i++ {
				fmt.Fprintf(&b, "\t\tmeta l4proto icmp limit rate over 25/second burst 5 packets drop # handle %d\n", i)
			}
			return targettest.Answer{Out: b.String() + "\t}\n}\n"}, true
		case strings.HasPrefix(line, "ls /sys/class/net/"):
			return targettest.Answer{Out: "rx-0\ntx-0\n"}, true
		case strings.HasPrefix(line, "tc qdisc show dev "):
			return targettest.Answer{Out: "qdisc noqueue 0: root refcnt 2 \n"}, true
		case strings.HasPrefix(line, "uci -q get "):
			return targettest.Answer{Code: 1}, true
		case strings.HasPrefix(line, "sh -c 'iptables "):
			return targettest.Answer{Code: 1}, true
		case strings.HasPrefix(line, "ethtool -k "):
			b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "collect", "ethtool", "k-veth.txt"))
			return targettest.Answer{Out: string(b)}, err == nil
		case line == "iptables-save -t filter":
			// the gateway of the recorded LAN lab, whose OUTPUT drops frag-needed
			b, err := os.ReadFile(filepath.Join("testdata", "recorded", "iptables-save-filter-output-drop.txt"))
			return targettest.Answer{Out: string(b)}, err == nil
		case strings.HasPrefix(line, "read /sys/class/net/") && strings.HasSuffix(line, "/mtu"):
			return targettest.Answer{Out: "1500\n"}, true
		case strings.HasSuffix(line, "/rps_cpus"):
			return targettest.Answer{Out: "0\n"}, true
		case strings.HasPrefix(line, "wg show ") && strings.HasSuffix(line, " persistent-keepalive"):
			// A of the recorded NAT lab (testdata/snapshots/lab-nat-a.json), B's one peer
			return targettest.Answer{Out: "faT2Lypr9HTpc/PMcFu/zWkeFtHI9GukzmAleyU6Rx4=\toff\n"}, true
		case strings.HasSuffix(line, "/xmit_hash_policy"):
			return targettest.Answer{Out: "layer2 0\n"}, true
		}
		return targettest.Answer{}, false
	}
	return h
}

func anyLinuxHost() *targettest.Host {
	h := anyHost("ssh:root@linux")
	h.Files["/etc/nftables.conf"] = "#!/usr/sbin/nft -f\n\nflush ruleset\n"
	return h
}

func anyOpenWrtHost() *targettest.Host {
	h := anyHost("ssh:root@openwrt")
	h.Files["/etc/openwrt_release"] = "DISTRIB_ID='OpenWrt'\n"
	return h
}

// A WireGuard device whose OpenWrt section has another name gets its MTU
// persisted in that section, as the check's displayed fix says.
func TestWGMTUPersistsInTheUCISection(t *testing.T) {
	r, err := remedy.WGMTU("wg0", 1412, remedy.OpenWrt, "wgsite")
	if err != nil {
		t.Fatal(err)
	}
	h := openWrtHost(t)
	h.Files["/sys/class/net/wg0/mtu"] = "1420\n"
	h.On("uci -q get network.wgsite", "interface\n")
	h.On("uci -q get network.wgsite.mtu", "1420\n")
	env, err := Detect(context.Background(), h, "/")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFindings(context.Background(), env, []finding.Finding{{ID: catalog.MTUTunnelTooLarge,
		Fixes: []finding.Fix{remedy.Fix("lower it", r)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.Items[0].Step.Commands, "\n")
	if !strings.Contains(got, "uci set network.wgsite.mtu=1412") || !strings.Contains(strings.Join(r.Commands(), "\n"), "network.wgsite.mtu=1412") {
		t.Errorf("plan commands:\n%s\ndisplay: %q", got, r.Commands())
	}
}

// checkDisplayedFiles holds the persistent config a fix displays to what the
// plan writes: every displayed line (but comments) of a file the plan writes
// is in it.
func checkDisplayedFiles(t *testing.T, where string, fs []finding.Finding, p *Plan) {
	t.Helper()
	shown := map[string][]finding.ConfigSnippet{}
	for _, f := range fs {
		for _, fx := range f.Fixes {
			if fx.Action != nil {
				shown[actionKey(*fx.Action)] = append(shown[actionKey(*fx.Action)], fx.Config...)
			}
		}
	}
	for _, it := range p.Items {
		for _, fc := range it.Step.Files {
			for _, c := range shown[actionKey(it.Action)] {
				if c.Path != fc.Path {
					continue
				}
				for _, l := range c.Lines {
					if strings.HasPrefix(l, "#") {
						continue // a comment, such as a condition the plan decides itself
					}
					if !strings.Contains(string(fc.New), l) {
						t.Errorf("%s: %s shows %q in %s, the plan writes:\n%s", where, it.Action.Kind, l, fc.Path, fc.New)
					}
				}
			}
		}
	}
}

// A full tunnel needs its endpoint's host route: the check shows re-pointing
// it at the preferred uplink, and the plan does that instead of deleting it.
func TestRouteRepointPlan(t *testing.T) {
	r, err := remedy.RouteRepoint("46.38.233.77", remedy.Route{Via: "192.168.254.254", Dev: "eth1"})
	if err != nil {
		t.Fatal(err)
	}
	h := linuxHost(t)
	env, err := Detect(context.Background(), h, "/")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFindings(context.Background(), env, []finding.Finding{{ID: "route.stale-endpoint",
		Fixes: []finding.Fix{remedy.Fix("re-point it", r)}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Items[0].Step
	want := Step{Kind: "endpoint-route",
		Summary:  "host route to 46.38.233.77 in table main: 46.38.233.77 via 192.168.253.254 dev eth1 proto static metric 20 -> via 192.168.254.254 dev eth1",
		Commands: []string{"ip route replace table main 46.38.233.77 via 192.168.254.254 dev eth1 proto static"},
		Undo: []string{"ip route del table main 46.38.233.77 via 192.168.254.254 dev eth1 proto static",
			"ip route replace table main 46.38.233.77 via 192.168.253.254 dev eth1 proto static metric 20"},
		Notes: st.Notes}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
	if !strings.Contains(strings.Join(r.Commands(), "\n"), "ip route replace 46.38.233.77 via 192.168.254.254 dev eth1 proto static") {
		t.Errorf("display %q", r.Commands())
	}
	if len(st.Notes) == 0 || !strings.HasPrefix(st.Notes[0], "runtime only") {
		t.Errorf("notes %q: off OpenWrt the route is runtime only", st.Notes)
	}

	// On OpenWrt the plan installs the hotplug script that re-points the
	// route at every uplink change, kept by sysupgrade: no longer runtime only.
	o := openWrtHost(t)
	if env, err = Detect(context.Background(), o, "/"); err != nil {
		t.Fatal(err)
	}
	if p, err = PlanFindings(context.Background(), env, []finding.Finding{{ID: "route.stale-endpoint",
		Fixes: []finding.Fix{remedy.Fix("re-point it", r)}}}, nil); err != nil {
		t.Fatal(err)
	}
	st = p.Items[0].Step
	const script = "/etc/hotplug.d/iface/95-wgperf-endpoint-46-38-233-77"
	if len(st.Files) != 2 || st.Files[0].Path != script || st.Files[0].Existed || st.Files[1].Path != "/etc/sysupgrade.conf" ||
		!strings.HasSuffix(string(st.Files[1].New), "\n"+script+"\n") || len(st.Notes) != 0 {
		t.Fatalf("OpenWrt step: files %+v, notes %q", st.Files, st.Notes)
	}
	for _, want := range []string{"ifup | ifdown | connected | disconnected", "ip -4 route show default", "ip route replace 46.38.233.77 via \"$2\" dev \"$3\" proto static"} {
		if !strings.Contains(string(st.Files[0].New), want) {
			t.Errorf("hotplug script lacks %q:\n%s", want, st.Files[0].New)
		}
	}
	// An IPv6 endpoint follows IPv6's default routes.
	r6, err := remedy.RouteRepoint("2001:db8::77", remedy.Route{Via: "fe80::1", Dev: "eth1"})
	if err != nil {
		t.Fatal(err)
	}
	o.On("ip route show table main exact 2001:db8::77", "")
	if p, err = PlanFindings(context.Background(), env, []finding.Finding{{ID: "route.stale-endpoint",
		Fixes: []finding.Fix{remedy.Fix("re-point it", r6)}}}, nil); err != nil {
		t.Fatal(err)
	}
	if fs := p.Items[0].Step.Files; len(fs) == 0 || fs[0].Path != "/etc/hotplug.d/iface/95-wgperf-endpoint-2001-db8--77" ||
		!strings.Contains(string(fs[0].New), "ip -6 route show default") || strings.Contains(string(fs[0].New), "ip -4") {
		t.Errorf("IPv6 endpoint: files %+v", fs)
	}
}
