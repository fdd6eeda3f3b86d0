package mtu

import (
	"context"
	"fmt"
	"net"
	"time"
)

// This file holds the MSS stepping: one-second iperf3 runs at chosen MSS
// values through the tunnel, and outside it on the hosts' own TCP, that
// locate the cliff a black hole makes.

// MSS stepping bounds: the reference MSS fits the IPv6 minimum MTU through a tunnel.
const (
	ReferenceMSS = 1200
	HealthyShare = 0.5 // a step is healthy at half the best rate or more
	// minHealthyMbit: a one-second run below it crossed nothing but a few
	// retransmitted segments (a black hole lets about 0.1 Mbit/s through).
	minHealthyMbit = 1.0
	// mssStall bounds a one-second MSS step once one has finished: a healthy
	// one ends within about 1.5 s even on a busy machine, one over a black
	// hole usually too. A slow host (a router, an emulated guest) takes longer
	// to start iperf3 at all: the bound grows to thrice the last step that
	// finished, and the first step (one expected to run) gets mssFirstStall.
	mssStall      = 4 * time.Second
	mssFirstStall = 20 * time.Second
	// defaultTunnelMTU is what the search assumes when it cannot read the
	// client's WireGuard MTU (wg-quick's default).
	defaultTunnelMTU = 1420
)

// stepMSS finds the MSS cliff through the tunnel in at most runs one-second
// iperf3 runs, starting from the cliff the DF search predicts: the tunnel
// pads its packets to 16 bytes, so a known path MTU names the cliff to the
// byte and two runs confirm it; without one (ICMP blocked) the search bisects
// the padding grid below the tunnel's MTU.
func stepMSS(ctx context.Context, c Config, res *Result, p prober, runs int) error {
	tunnelMTU := p.tunnelMTU(ctx)
	overhead, headers := OverheadIPv4, tcpIPv4
	if res.IPv6 {
		overhead = OverheadIPv6
	}
	if ip := net.ParseIP(c.TunnelAddr); ip != nil && ip.To4() == nil {
		headers = TCPIPv6Headers
	}
	top := tunnelMTU - headers
	lo, hi := ReferenceMSS, top+1
	if res.PathMTU > 0 {
		lo = PredictMSSCliff(res.PathMTU, tunnelMTU, overhead, headers)
		if res.FirstFailed > 0 {
			hi = PredictMSSCliff(res.FirstFailed-1, tunnelMTU, overhead, headers) + 1
		}
	}
	s := newMSSSearch(lo, hi, min(ReferenceMSS, lo-2*PaddingMultiple), top, headers, runs)
	addr, reverse := c.TunnelAddr, false
	if res.Broken() == Return && c.BackTunnelAddr != "" {
		addr, reverse = c.BackTunnelAddr, true
	}
	runs2, ref, err := runMSS(ctx, c, p, s, addr, reverse, "through the tunnel")
	res.MSSRuns, res.ReferenceMbit = runs2, ref
	res.MSSGood, res.MSSBad = s.Result()
	return err
}

// outsideRuns bounds the MSS runs outside the tunnel: the DF search names
// the cliff there exactly (no padding), so two runs prove it.
const outsideRuns = 3

// stepOutside proves the black hole on the hosts' own TCP: to Addr itself,
// outside the tunnel, the largest MSS whose segments fit the path MTU runs
// and one byte more collapses.
func stepOutside(ctx context.Context, c Config, res *Result, p prober, runs int) error {
	headers := tcpIPv4
	if res.IPv6 {
		headers = TCPIPv6Headers
	}
	lo, hi := res.PathMTU-headers, res.SearchMax-headers+1
	if res.FirstFailed > 0 {
		hi = res.FirstFailed - headers
	}
	s := newMSSSearch(lo, hi, min(ReferenceMSS, lo-2*PaddingMultiple), res.SearchMax-headers, 0, runs)
	s.unpadded = true
	addr, reverse := c.Addr, false
	if res.Broken() == Return && c.BackAddr != "" {
		addr, reverse = c.BackAddr, true
	}
	done, _, err := runMSS(ctx, c, p, s, addr, reverse, "outside the tunnel")
	res.OutsideRuns = done
	res.OutsideGood, res.OutsideBad = s.Result()
	return err
}

// runMSS runs s's MSS search against addr and returns its runs and the
// reference rate (the first healthy run's). reverse: the far end sends, to
// addr on the client, as in the direction a located black hole drops.
func runMSS(ctx context.Context, c Config, p prober, s *mssSearch, addr string, reverse bool, where string) ([]MSSRun, float64, error) {
	var runs []MSSRun
	best, ref := 0.0, 0.0
	for {
		mss, ok := s.Next()
		if !ok {
			return runs, ref, nil
		}
		run, err := p.mss(ctx, addr, mss, reverse)
		if err != nil {
			return runs, ref, err
		}
		run.Healthy = run.Mbit >= max(minHealthyMbit, HealthyShare*best)
		if run.Healthy {
			best = max(best, run.Mbit)
			if ref == 0 {
				ref = run.Mbit
			}
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "MSS %d %s (%s): %.1f Mbit/s\n", mss, where, run.Direction, run.Mbit)
		}
		runs = append(runs, run)
		s.Record(mss, run.Healthy)
	}
}
