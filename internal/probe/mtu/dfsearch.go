package mtu

import (
	"context"
	"fmt"
)

// This file holds the search a probe runs: the DF search over the path MTU,
// the one-way look at a black hole, and the MSS steps it hands over to, all
// within one budget of probes and runs.

// search runs the DF search and, when large probes die silently (or when
// asked), the MSS search through the tunnel: at most ProbeBudget probes and
// runs together.
func search(ctx context.Context, c Config, res *Result, p prober) error {
	s := NewSearch(c.Min, c.Max, c.Retries, 1)
	s.Likely(LikelyMTUs...)
	s.Limit(DFLimit)
	for {
		size, ok := s.Next()
		if !ok {
			break
		}
		pg, err := p.df(ctx, size)
		if err != nil {
			return err
		}
		pr := Probe{MTU: size, Passed: pg.Received, Note: pg.Error}
		if !pg.Received && pg.MTU > 0 {
			pr.Hint = pg.MTU
			if !pg.Local {
				res.FragNeededMTU = pg.MTU
			}
		}
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "DF probe %d bytes: %s\n", size, verdict(pr))
		}
		res.Probes = append(res.Probes, pr)
		s.Record(size, pr.Passed, pr.Hint)
	}
	res.Method = p.method()
	res.Direction = RoundTrip
	if res.Method == MethodTraceroute {
		res.Direction = Forward // traceroute's answer is a small ICMP error
	}
	if got, found := s.Result(); found {
		res.PathMTU = got
	}
	res.FirstFailed = s.FirstFailed()
	// Silent deaths above the largest passing size: no ICMP told the sender.
	res.BlackHole = res.PathMTU > 0 && res.FirstFailed > 0 && s.Silent(res.FirstFailed) && res.FragNeededMTU == 0
	if res.PathMTU > 0 {
		over := OverheadIPv4
		if res.IPv6 {
			over = OverheadIPv6
		}
		res.WGMTU = res.PathMTU - over
		res.MSSClamp = res.WGMTU - tcpIPv4
	}
	if res.BlackHole && res.Direction == RoundTrip && c.Server != nil && c.BackAddr != "" {
		// A round trip cannot tell which way the large packets vanish.
		ow, err := p.oneWay(ctx, res.FirstFailed)
		ow.Size = res.FirstFailed
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			ow = OneWay{Size: res.FirstFailed, Error: err.Error()}
		}
		ow.Broken = locate(ow)
		res.OneWay = &ow
		if c.Progress != nil {
			fmt.Fprintf(c.Progress, "one-way %d bytes: %d/%d arrived forward, %d/%d back: %s\n", ow.Size,
				ow.ForwardArrived, ow.ForwardSent, ow.ReturnArrived, ow.ReturnSent, orUntold(ow.Broken))
		}
	}
	if (res.BlackHole || res.PathMTU == 0 || c.MSSStep) && c.Server != nil && c.TunnelAddr != "" {
		if err := stepMSS(ctx, c, res, p, ProbeBudget-len(res.Probes)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res.MSSError = err.Error()
		}
		if res.PathMTU == 0 && res.MSSGood > 0 && res.MSSBad > 0 {
			// ICMP is blocked outright: the MSS cliff is all there is to go on.
			res.WGMTU = res.MSSGood + tcpIPv4
			res.MSSClamp = res.MSSGood
			res.BlackHole = true
		}
	}
	// The hosts' own TCP, with what the budget has left once the tunnel's
	// cliff is known.
	if left := ProbeBudget - len(res.Probes) - len(res.MSSRuns); res.BlackHole && res.PathMTU > 0 && c.Outside && c.Server != nil && left > 0 {
		if err := stepOutside(ctx, c, res, p, min(left, outsideRuns)); err != nil {
			if ctx.Err() != nil {
				return err
			}
			res.MSSError = err.Error()
		}
	}
	return nil
}

func verdict(p Probe) string {
	switch {
	case p.Passed:
		return "passed"
	case p.Hint > 0:
		return fmt.Sprintf("too big (mtu %d)", p.Hint)
	case p.Note != "":
		return p.Note
	}
	return "no reply"
}

// The search's budget: DF probes and MSS runs together, on any path.
const (
	ProbeBudget = 12
	// DFLimit leaves the MSS search at least four runs.
	DFLimit = 8
)
