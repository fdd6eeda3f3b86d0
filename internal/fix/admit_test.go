package fix

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/firewall"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// TestFindingsFileAsksOnlyWhatWgperfProposes is issue 30's property test: a
// random action under a random finding ID, read from a findings file and
// held to a recorded host's facts, is refused unless wgperf's own checks or
// probes emit exactly that action under that ID for that host — as it is,
// or as it was before the fix (emits says what may differ: the counters,
// sysctl values, MTUs, masks and policies a fix changes; never the host's
// tunnels, peers, routes or firewall rules). Every action wgperf emits on a
// host is admitted there.
func TestFindingsFileAsksOnlyWhatWgperfProposes(t *testing.T) {
	hosts := corpus(t)
	r := rand.New(rand.NewPCG(30, 1))
	pool := valuePool(hosts)
	byID := map[finding.ID][]emitted{}
	known := map[*facts.Snapshot]map[string]bool{}
	for _, h := range hosts {
		for _, f := range check.Run([]*facts.Snapshot{h}, check.Options{}).Findings {
			for _, fx := range f.Fixes {
				if fx.Action != nil {
					if err := check.AllowsOn(f.ID, *fx.Action, h); err != nil {
						t.Errorf("%s's check emits on %s what it does not admit there: %v", f.ID, h.Host, err)
					}
				}
			}
		}
		// What wgperf emits on the host as it is and before its fixes:
		// the seeds of the mutations below (accepted or not on the host
		// as it is), and what emits looks up first.
		known[h] = map[string]bool{}
		for _, e := range append(emittedOn(h, h), emittedOn(h, before(h, nil))...) {
			if k := e.key(); !known[h][k] {
				known[h][k] = true
				byID[e.id] = append(byID[e.id], e)
			}
		}
	}
	seedIDs := slices.Sorted(maps.Keys(byID))
	accepted := map[finding.ID]int{}
	refused := 0
	for i := range 6000 {
		var h *facts.Snapshot
		var id finding.ID
		var a finding.Action
		if i%3 == 0 {
			h = hosts[r.IntN(len(hosts))]
			id, a = randomAction(r, pool)
		} else {
			seeds := byID[seedIDs[r.IntN(len(seedIDs))]]
			s := seeds[r.IntN(len(seeds))]
			h, id, a = s.h, s.id, mutate(r, clone(s.a), pool)
			if r.IntN(4) == 0 {
				ids := catalog.IDs()
				id = ids[r.IntN(len(ids))]
			}
		}
		if !admitted(t, h, id, a) {
			refused++
			continue
		}
		accepted[id]++
		if !known[h][emitted{id: id, a: a}.key()] && !emits(h, id, a) {
			t.Errorf("case %d: admitted on %s, but nothing wgperf runs emits it: %s %s %v", i, h.Host, id, a.Kind, a.Params)
		}
	}
	t.Logf("refused %d, accepted %v", refused, accepted)
	for _, e := range check.Catalog {
		if len(e.Remedies) > 0 && accepted[e.ID] == 0 {
			t.Errorf("%s: no action was accepted under it: the property is not exercised for it", e.ID)
		}
	}
	if refused < 3000 {
		t.Errorf("only %d of 6000 refused: the generator asks for too little", refused)
	}
}

// admitted is what "fix --from FILE" lets through to planning: the file's
// reading (catalog) and the host's facts (AllowsOn).
func admitted(t *testing.T, h *facts.Snapshot, id finding.ID, a finding.Action) bool {
	t.Helper()
	doc, err := json.Marshal([]finding.Finding{{ID: id, Severity: finding.Warning, Fixes: []finding.Fix{{Description: "d", Action: &a}}}})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ReadFindings(bytes.NewReader(doc))
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("refusal is not one line: %q", err)
		}
		return false
	}
	err = Admit(fs, h)
	if err != nil && strings.Contains(err.Error(), "\n") {
		t.Errorf("refusal is not one line: %q", err)
	}
	return err == nil
}

type emitted struct {
	h  *facts.Snapshot
	id finding.ID
	a  finding.Action
}

func (e emitted) key() string {
	b, _ := json.Marshal(e.a) // map keys sorted
	return string(e.id) + " " + string(b)
}

// emits reports whether wgperf's own code emits a under id for host h
// before its fixes, in the state a itself calls for: the sysctl value it
// raises from, the MTU it lowers from, the path a buffer must fill, the
// measurement a probe reports. (The test looks up h as it is, and before
// its fixes in general, first.) Its checks, its cross-host MTU check against
// a peer of h, and its probes, fed with h's own tunnels and rules.
func emits(h *facts.Snapshot, id finding.ID, a finding.Action) bool {
	want := emitted{id: id, a: a}.key()
	for _, e := range emittedOn(h, before(h, &a)) {
		if e.key() == want {
			return true
		}
	}
	return false
}

// emittedOn is every action the checks (with options the action's path may
// need) and the probes emit on s, a state of host h.
func emittedOn(h, s *facts.Snapshot) []emitted {
	var fs []finding.Finding
	for _, o := range pathOptions(s) {
		fs = append(fs, check.Run([]*facts.Snapshot{s}, o).Findings...)
	}
	fs = append(fs, probedOn(h, s)...)
	var out []emitted
	for _, f := range fs {
		for _, fx := range f.Fixes {
			if fx.Action != nil {
				out = append(out, emitted{h: h, id: f.ID, a: *fx.Action})
			}
		}
	}
	return out
}

// pathOptions are the defaults, and the path whose buffer is the max of a
// tcp_rmem/wmem before() set: --rtt 1s and the rate that makes twice the BDP
// that max.
func pathOptions(s *facts.Snapshot) []check.Options {
	out := []check.Options{{}}
	if m, ok := s.Sysctls[wantBufferKey]; ok {
		n, _ := strconv.ParseFloat(m, 64)
		out = append(out, check.Options{PathRTT: time.Second, PathRateMbit: n * 4 / 1e6})
	}
	return out
}

// wantBufferKey carries, in a before() state, the tcp buffer max an action
// asks for (not a real sysctl: only pathOptions reads it).
const wantBufferKey = "test.want-buffer-max"

// probedOn are the probes' findings for h's own tunnels and ICMP
// limits, with every measurement s's state allows: the MTU probe and the
// MSS capture towards each tunnel's peer, a shaping sweep on each tunnel,
// an ICMP burst whose drops each limit counted, and the other end of each
// tunnel with its own MTU (the cross-host check).
func probedOn(h, s *facts.Snapshot) []finding.Finding {
	var out []finding.Finding
	measured := func(key string, usual ...int) []int {
		if m, err := strconv.Atoi(s.Sysctls[key]); err == nil {
			return []int{m}
		}
		return usual
	}
	mtus := measured(wantMTUKey, 1280, 1380, 1420)
	mss := measured(wantMSSKey, 0, 1300)
	rates := measured(wantRateKey, 10, 150)
	for _, w := range h.WireGuard {
		for _, m := range mtus {
			out = append(out, mtu.CaptureFindings(&mtu.CaptureResult{Client: h.Host, ClientInterface: w.Name, ClientWGMTU: 9000, WGMTU: m})...)
			for _, n := range mss {
				out = append(out, mtu.Findings(&mtu.Result{Client: h.Host, ClientIface: w.Name, BlackHole: true, WGMTU: m, MSSClamp: n})...)
				// The hosts' own TCP stalled at the same hop (outside the tunnel).
				out = append(out, mtu.Findings(&mtu.Result{Client: h.Host, ClientIface: w.Name, BlackHole: true, WGMTU: m, MSSClamp: n,
					OutsideGood: 1360, OutsideBad: 1361})...)
			}
			if len(w.Peers) > 0 && w.PublicKey != "" {
				big := before(h, nil)
				for i := range big.WireGuard {
					big.WireGuard[i].MTU = 9000
				}
				other := &facts.Snapshot{Host: targettest.Spec("the other end"), WireGuard: []facts.WGInterface{{Name: "wg-other", PublicKey: w.Peers[0].PublicKey, MTU: m,
					Peers: []facts.WGPeer{{PublicKey: w.PublicKey}}}}}
				out = append(out, check.Run([]*facts.Snapshot{big, other}, check.Options{}).Findings...)
			}
			// Each peer seeing this end at an address it does not have: a NAT
			// in front of it, whose keepalive fix the cross check emits.
			for _, p := range w.Peers {
				natted := &facts.Snapshot{Host: targettest.Spec("the other end"), WireGuard: []facts.WGInterface{{Name: "wg-other", PublicKey: p.PublicKey,
					Peers: []facts.WGPeer{{PublicKey: w.PublicKey, Endpoint: "192.0.2.99:51820"}}}}}
				out = append(out, check.Run([]*facts.Snapshot{s, natted}, check.Options{}).Findings...)
			}
		}
		for _, n := range rates {
			out = append(out, shaping.Findings(&shaping.Result{Client: h.Host, Device: w.Name, Recommended: n,
				Steps: []shaping.Step{{CapMbit: 0}, {CapMbit: n}}})...)
			// A long run's collapse cycles, capped at n (10 per cent below the level they climb to).
			if f := bench.CycleFinding(h.Host.String(), "the other end", bench.Upload, h.Host, w.Name,
				bench.Cycles{Collapses: 2, CV: 1, HighMbit: float64(n+5) / 0.9}); f != nil {
				out = append(out, *f)
			}
			out = append(out, bloatedOn(h, w.Name, n)...)
			// A cap at half of n that held the tunnel while the path carried n.
			capped := facts.Link{Name: w.Name, Shaper: &facts.Shaper{Qdisc: "tbf", RateMbit: float64(n) / 2}}
			if f, ok := check.ShaperCapFinding(h.Host, capped, bench.Upload, 0.95*float64(n)/2, float64(n)); ok {
				out = append(out, f)
			}
		}
	}
	out = append(out, portThrottledOn(h)...)
	// A multi-WAN host's endpoints routed through each of its uplinks, the others slower.
	if ups := uplinks.List(s); len(ups) > 1 {
		for _, e := range h.Endpoints {
			for fast := range ups {
				for i := range ups {
					ups[i].Tunnel, ups[i].Mbit = i != fast, 10
				}
				ups[fast].Mbit = 100
				for tunnel := range ups {
					if tunnel == fast {
						continue
					}
					for i := range ups {
						ups[i].Tunnel = i == tunnel
					}
					if f := uplinks.Finding(h.Host, e.Endpoint, e.Interface, ups, 9); f != nil {
						out = append(out, *f)
					}
				}
			}
		}
	}
	for _, r := range h.Firewall.Rules {
		if r.Limit == nil {
			continue
		}
		r := r
		out = append(out, icmpburst.Findings(&icmpburst.Result{Host: h.Host, OneShot: icmpburst.Mode{Sent: 10, Failed: 5}, Persistent: icmpburst.Mode{Sent: 10},
			Grew: []icmpburst.CounterGrowth{{FirewallGrowth: firewall.FirewallGrowth{Rule: &r, Packets: 5}, Limit: &r}}})...)
	}
	return out
}

// portThrottledOn are the UDP probe's port-throttle findings with h at
// either end of each of its tunnels: the far end (its listen port moves)
// and the near end of each peer with an endpoint (the peer's endpoint
// follows).
func portThrottledOn(h *facts.Snapshot) []finding.Finding {
	other := targettest.New("the other end")
	self := targettest.New(h.Host.String())
	policed := &iperf.Result{SentMbit: 190, ReceivedMbit: 75, Packets: 1000, LostPackets: 600}
	clean := &iperf.Result{SentMbit: 190, ReceivedMbit: 190, Packets: 1000}
	judge := func(c udppath.Config) []finding.Finding {
		o := c
		o.WireGuardPort = 0
		return udppath.Judge(udppath.Pair{Other: udppath.Analyze(o, clean, 0), OnPort: udppath.Analyze(c, policed, 0), TunnelMbit: 40})
	}
	var out []finding.Finding
	for _, w := range h.WireGuard {
		if w.ListenPort > 0 {
			out = append(out, judge(udppath.Config{Client: other, Server: self, Addr: "203.0.113.2", Direction: bench.Upload, TCPMbit: 190,
				WireGuardPort: w.ListenPort, ClientInterface: "wg-other", ServerInterface: w.Name, ServerKey: w.PublicKey})...)
		}
		for _, p := range w.Peers {
			ap, err := netip.ParseAddrPort(p.Endpoint)
			if err != nil {
				continue
			}
			out = append(out, judge(udppath.Config{Client: self, Server: other, Addr: ap.Addr().String(), Direction: bench.Upload, TCPMbit: 190,
				WireGuardPort: int(ap.Port()), ClientInterface: w.Name, ServerInterface: "wg-other", ServerKey: p.PublicKey})...)
		}
	}
	return out
}

// Measurements an action asks for, carried in a before() state for
// probeFindings (not real sysctls).
const (
	wantMTUKey  = "test.want-mtu"
	wantMSSKey  = "test.want-mss"
	wantRateKey = "test.want-rate"
)

// before is h as it was before wgperf's fixes, when every check had
// something to say: UDP, TCP and softnet counters that fired, CUBIC, the
// load on one CPU, no RPS masks, bonds on layer2, a full conntrack table,
// no NOTRACK or MSS clamp rule, small sysctls, and a static host route to
// each endpoint via another gateway than the preferred one. With a, also
// the state a's own values come from: the value its sysctl raises from, the
// MTU its tunnel lowers from (the underlay then carries a's MTU), the MTU
// below the LAN's that needs a clamp, and the measurements a probe reports.
func before(h *facts.Snapshot, a *finding.Action) *facts.Snapshot {
	s := clone(h)
	if s.Sysctls == nil {
		s.Sysctls = map[string]string{}
	}
	snmp := func(group string) map[string]int64 {
		if s.Counters.SNMP == nil {
			s.Counters.SNMP = map[string]map[string]int64{}
		}
		if s.Counters.SNMP[group] == nil {
			s.Counters.SNMP[group] = map[string]int64{}
		}
		return s.Counters.SNMP[group]
	}
	snmp("Udp")["RcvbufErrors"], snmp("Udp")["SndbufErrors"] = 1000, 1000
	snmp("Tcp")["RetransSegs"], snmp("Tcp")["OutSegs"] = 1000, 10000
	s.Sysctls["net.ipv4.tcp_congestion_control"] = "cubic"
	for k, v := range map[string]string{"net.core.rmem_max": "212992", "net.core.rmem_default": "212992", "net.core.wmem_max": "212992",
		"net.core.wmem_default": "212992", "net.core.netdev_max_backlog": "1000", "net.netfilter.nf_conntrack_max": "65536"} {
		if _, ok := s.Sysctls[k]; ok {
			s.Sysctls[k] = v
		}
	}
	for _, k := range []string{"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"} {
		if f := strings.Fields(s.Sysctls[k]); len(f) == 3 {
			s.Sysctls[k] = f[0] + " " + f[1] + " 4096"
		}
	}
	if len(s.Softnet) == 0 {
		s.Softnet = []facts.SoftnetCPU{{CPU: 0}}
	}
	for i := range s.Softnet {
		s.Softnet[i].Dropped, s.Softnet[i].Processed = 1, 1
	}
	s.Softnet[0].Processed, s.Softnet[0].TimeSqueeze = 1000000, 1
	for i := range s.IRQs { // every NIC queue interrupting CPU 0
		clear(s.IRQs[i].PerCPU)
		if len(s.IRQs[i].PerCPU) > 0 {
			s.IRQs[i].PerCPU[0] = 1000000
		}
	}
	for i := range s.WireGuard { // no keepalive behind a NAT (wg-peer-keepalive)
		for j := range s.WireGuard[i].Peers {
			s.WireGuard[i].Peers[j].PersistentKeepalive = 0
		}
	}
	for i := range s.Links {
		s.Links[i].RPSCPUs = nil
		if s.Links[i].Bond != nil {
			s.Links[i].Bond.XmitHashPolicy = "layer2"
		}
	}
	if s.Conntrack != nil {
		s.Conntrack.Max, s.Conntrack.Count = 65536, 65536
	}
	s.Firewall.Rules = slices.DeleteFunc(s.Firewall.Rules, func(r facts.FirewallRule) bool { return r.NoTrack || r.MSSClamp != "" })
	for _, e := range s.Endpoints {
		pref := preferred(s, e.Endpoint)
		if pref == nil {
			continue
		}
		s.Routes = slices.DeleteFunc(s.Routes, func(r facts.Route) bool { return r.Dst == e.Endpoint && (r.Table == "main" || r.Table == "") })
		gw := "192.0.2.254"
		if strings.Contains(e.Endpoint, ":") {
			gw = "2001:db8::fe"
		}
		s.Routes = append(s.Routes, facts.Route{Family: pref.Family, Table: "main", Dst: e.Endpoint, Gateway: gw, Dev: pref.Dev, Protocol: "static"})
	}
	if a == nil {
		return s
	}
	p := a.Params
	switch a.Kind {
	case remedy.KindSysctl:
		v := p["value"]
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k := p["key"]; k {
		case "net.core.netdev_max_backlog":
			s.Sysctls[k] = strconv.FormatInt(n/2, 10)
		case "net.netfilter.nf_conntrack_max":
			s.Sysctls[k] = strconv.FormatInt(n/2, 10)
			if s.Conntrack != nil {
				s.Conntrack.Max, s.Conntrack.Count = n/2, n/2
			}
		case "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem":
			if f := strings.Fields(v); len(f) == 3 {
				s.Sysctls[k] = f[0] + " " + f[1] + " 4096"
				s.Sysctls[wantBufferKey] = f[2]
			}
		}
	case remedy.KindWGMTU:
		m, _ := strconv.Atoi(p["mtu"])
		s.Sysctls[wantMTUKey] = p["mtu"]
		for i, w := range s.WireGuard {
			if w.Name != p["interface"] {
				continue
			}
			s.WireGuard[i].MTU = 9000
			for _, e := range s.Endpoints {
				over := 60
				if strings.Contains(e.Endpoint, ":") {
					over = 80
				}
				for j := range s.Links {
					if e.Interface == w.Name && s.Links[j].Name == e.Dev {
						s.Links[j].MTU = m + over
					}
				}
			}
		}
	case remedy.KindMSSClamp:
		s.Sysctls[wantMSSKey] = p["mss"]
		for i := range s.WireGuard {
			s.WireGuard[i].MTU = 1280
		}
	case remedy.KindTBFCap:
		s.Sysctls[wantRateKey] = strings.TrimSuffix(p["rate"], "mbit")
	case remedy.KindSQM:
		s.Sysctls[wantRateKey] = strings.TrimSuffix(p["bandwidth"], "mbit")
	}
	return s
}

// preferred is s's preferred default route for addr's family (the check's own
// choice: lowest metric, link up).
func preferred(s *facts.Snapshot, addr string) *facts.Route {
	fam := "inet"
	if strings.Contains(addr, ":") {
		fam = "inet6"
	}
	var best *facts.Route
	for i, r := range s.Routes {
		if r.Dst == "default" && r.Family == fam && (r.Table == "main" || r.Table == "") && (best == nil || r.Metric < best.Metric) {
			best = &s.Routes[i]
		}
	}
	return best
}
