package mtu

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/wgperf/wgperf/internal/target/targettest"
)

// simPath is a path the whole search runs against, without a network: DF
// probes pass up to its path MTU (or vanish, or name the MTU), and TCP
// through its WireGuard tunnel collapses once a padded segment outgrows it.
// Its clock adds what each probe costs on a real host.
type simPath struct {
	mtu         int  // the path MTU
	icmpBlocked bool // no DF probe is ever answered
	fragNeeded  bool // routers name the MTU (no black hole)
	tunnel      int  // the tunnel's MTU
	noPadding   bool // a sender that does not pad (the prediction is off)
	offload     int  // bytes segments carry beyond the MSS (offloads, options)
	outside     bool // doctor asks for MSS steps outside the tunnel too
	rtt         time.Duration
	pinger      dfPinger // only its wait: the live prober's learning
	clock       time.Duration
}

// simEndpoint is the far end's underlay address.
const simEndpoint = "203.0.113.2"

// mssRunCost is a one-second iperf3 run with its start and end, measured on
// the lab (1.03 s healthy or black-holed) with room for a slower host.
const mssRunCost = 1300 * time.Millisecond

func (p *simPath) method() string                { return MethodPing }
func (p *simPath) tunnelMTU(context.Context) int { return p.tunnel }

func (p *simPath) df(_ context.Context, size int) (Ping, error) {
	wait := dfWait(p.pinger.rttMs)
	switch {
	case p.icmpBlocked:
		p.clock += wait
		return Ping{}, nil
	case size <= p.mtu:
		p.clock += p.rtt
		rtt := float64(p.rtt) / float64(time.Millisecond)
		p.pinger.rttMs = max(p.pinger.rttMs, rtt)
		return Ping{Received: true, RTTms: rtt}, nil
	case p.fragNeeded:
		p.clock += p.rtt
		return Ping{MTU: p.mtu}, nil
	}
	p.clock += wait
	return Ping{}, nil
}

// crosses is the path's truth for one MSS.
func (p *simPath) crosses(mss int) bool {
	inner := mss + tcpIPv4 + p.offload
	if !p.noPadding {
		inner = min((inner+PaddingMultiple-1)/PaddingMultiple*PaddingMultiple, p.tunnel)
	}
	return inner+OverheadIPv4 <= p.mtu
}

// oneWay: the simulated path drops the same sizes both ways.
func (p *simPath) oneWay(_ context.Context, size int) (OneWay, error) {
	o := OneWay{Size: size, ForwardSent: echoBurst, ReturnSent: echoBurst}
	if size <= p.mtu {
		o.ForwardArrived, o.ReturnArrived = echoBurst, echoBurst
	}
	p.clock += 2 * echoBurst * dfWait(p.pinger.rttMs)
	return o, nil
}

func (p *simPath) mss(_ context.Context, addr string, mss int, _ bool) (MSSRun, error) {
	p.clock += mssRunCost
	if addr == simEndpoint {
		// Outside the tunnel: the segment as it is.
		if mss+tcpIPv4 <= p.mtu {
			return MSSRun{MSS: mss, Mbit: 190}, nil
		}
		return MSSRun{MSS: mss, Mbit: 0.1}, nil
	}
	if p.crosses(mss) {
		return MSSRun{MSS: mss, Mbit: 180}, nil
	}
	return MSSRun{MSS: mss, Mbit: 0.1}, nil
}

func (p *simPath) String() string {
	return fmt.Sprintf("path MTU %d (icmp blocked %v, frag-needed %v), tunnel MTU %d, no padding %v, offload %d, outside %v, RTT %v",
		p.mtu, p.icmpBlocked, p.fragNeeded, p.tunnel, p.noPadding, p.offload, p.outside, p.rtt)
}

// wholeSearch runs Run's search against a simulated path.
func wholeSearch(t *testing.T, p *simPath) *Result {
	t.Helper()
	res := &Result{SearchMin: 576, SearchMax: 1500}
	// MSS stepping needs a server; the simulated path answers for it.
	c := Config{Min: 576, Max: 1500, Retries: 1, Server: targettest.New("netns:b"), Addr: simEndpoint, TunnelAddr: "10.77.0.2", Outside: p.outside}
	if err := search(context.Background(), c, res, p); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return res
}

// The search on any path: every path MTU from 576 to 1500 bytes, black hole
// or frag-needed or ICMP blocked outright, a default and a small tunnel MTU,
// a LAN's and a long path's round trip, senders that pad (WireGuard) and
// that do not, segments a few bytes larger than their MSS. It takes at most
// 12 probes (DF and MSS together) and under 15 s, never names a path MTU the
// path does not carry, and finds the TCP cliff through the tunnel to the
// byte wherever padding puts it where the DF result says.
func TestWholeSearchOnAnyPath(t *testing.T) {
	worstProbes, worstTime, worstPath := 0, time.Duration(0), ""
	for _, tunnel := range []int{1420, 1280} {
		for _, rtt := range []time.Duration{time.Millisecond, 60 * time.Millisecond} {
			for _, kind := range []string{"black hole", "outside too", "frag-needed", "icmp blocked", "no padding", "offload"} {
				for mtu := 576; mtu <= 1500; mtu++ {
					p := &simPath{mtu: mtu, tunnel: tunnel, rtt: rtt}
					switch kind {
					case "outside too":
						p.outside = true
					case "frag-needed":
						p.fragNeeded = true
					case "icmp blocked":
						p.icmpBlocked = true
					case "no padding":
						p.noPadding = true
					case "offload":
						p.offload = 5
					}
					res := wholeSearch(t, p)
					n := len(res.Probes) + len(res.MSSRuns)
					if n > ProbeBudget {
						t.Fatalf("%s: %d DF probes + %d MSS runs > %d", p, len(res.Probes), len(res.MSSRuns), ProbeBudget)
					}
					if p.clock >= 15*time.Second {
						t.Fatalf("%s: took %v, want < 15 s (%d DF probes, %d MSS runs)", p, p.clock, len(res.Probes), len(res.MSSRuns))
					}
					if n > worstProbes || p.clock > worstTime {
						worstProbes, worstTime, worstPath = max(n, worstProbes), max(p.clock, worstTime), p.String()
					}
					if !p.icmpBlocked && (res.PathMTU > mtu || res.PathMTU == 0 || res.FirstFailed != 0 && res.FirstFailed <= mtu) {
						t.Fatalf("%s: path MTU %d, first failed %d", p, res.PathMTU, res.FirstFailed)
					}
					// What the MSS search proved holds on the path.
					if res.MSSGood > 0 && !p.crosses(res.MSSGood) || res.MSSBad > 0 && p.crosses(res.MSSBad) {
						t.Fatalf("%s: MSS %d healthy and %d collapsed, but the path says otherwise", p, res.MSSGood, res.MSSBad)
					}
					cliff := PredictMSSCliff(mtu, tunnel, OverheadIPv4, tcpIPv4)
					outsideOK := func(m int) bool { return m+tcpIPv4 <= mtu }
					if res.OutsideGood > 0 && !outsideOK(res.OutsideGood) || res.OutsideBad > 0 && outsideOK(res.OutsideBad) {
						t.Fatalf("%s: outside the tunnel MSS %d healthy and %d collapsed, but the path says otherwise", p, res.OutsideGood, res.OutsideBad)
					}
					if p.outside && res.BlackHole && res.FirstFailed == res.PathMTU+1 && (res.OutsideGood != res.PathMTU-tcpIPv4 || res.OutsideBad != res.FirstFailed-tcpIPv4) {
						t.Fatalf("%s: outside the tunnel MSS %d..%d, want %d..%d", p, res.OutsideGood, res.OutsideBad, res.PathMTU-tcpIPv4, res.FirstFailed-tcpIPv4)
					}
					exact := (kind == "black hole" || kind == "outside too") && tunnel+OverheadIPv4 > mtu && cliff >= ReferenceMSS-2*PaddingMultiple
					if exact && (res.MSSGood != cliff || res.MSSBad != cliff+1) {
						t.Fatalf("%s: MSS cliff %d..%d, want %d..%d (%d DF probes, %d MSS runs)", p, res.MSSGood, res.MSSBad, cliff, cliff+1, len(res.Probes), len(res.MSSRuns))
					}
				}
			}
		}
	}
	t.Logf("worst: %d probes, %v (%s)", worstProbes, worstTime, worstPath)
}

// The field case: a path whose MTU is not a likely size (1381 bytes) with a
// default tunnel. Padding puts the cliff at MSS 1272, not the 1269 that MTU
// - 60 - 40 - 12 predicted; the search finds it in a handful of probes.
func TestSearchFieldPath(t *testing.T) {
	p := &simPath{mtu: 1381, tunnel: 1420, rtt: 25 * time.Millisecond}
	res := wholeSearch(t, p)
	if res.MSSGood != 1272 || res.MSSBad != 1273 {
		t.Errorf("MSS cliff %d..%d, want 1272..1273", res.MSSGood, res.MSSBad)
	}
	if n := len(res.Probes) + len(res.MSSRuns); n > 10 || p.clock > 8*time.Second {
		t.Errorf("%d probes in %v, want at most 10 in 8 s", n, p.clock)
	}
	t.Logf("path MTU %d (first failed %d) in %d DF probes, cliff %d..%d in %d runs, %v", res.PathMTU, res.FirstFailed, len(res.Probes), res.MSSGood, res.MSSBad, len(res.MSSRuns), p.clock)
}
