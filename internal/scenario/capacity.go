package scenario

import (
	"context"
	"fmt"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/lab/sizing"
)

// Capacities remembers, per lab shape, what a healthy tunnel carries on this
// machine (see package sizing); share one across the scenarios of a run.
type Capacities = sizing.Capacities

// Sizing is the underlay rate a scenario runs at on this machine and why.
type Sizing = sizing.Sizing

// shapeOf is the capacity shape of a scenario's lab on implementation impl.
func shapeOf(sc Scenario, impl lab.Implementation) sizing.Shape {
	streams := 1
	if sc.ECMP > 1 {
		streams = ecmpStreams
	}
	return sizing.Shape{WireGuard: impl, Congestion: congestionOf(sc), Topology: orDefault(sc.Lab.Topology, lab.SiteToSite), DelayMs: sc.Lab.Underlay.DelayMs, Streams: streams}
}

// Play runs sc like Run; when it falls short on throughput alone and the
// machine has since got busier (a build started beside the lab), it sizes
// the scenario again for the machine as it is now and plays it once more at
// the lower rate. A missing or unexpected finding, or a wrong verdict from
// doctor, is never played again.
func Play(ctx context.Context, sc Scenario, opts Options) (*Result, error) {
	impl, _, err := lab.Detect(ctx, opts.WireGuard)
	if err != nil {
		return &Result{Scenario: sc.Name, Case: sc.Case, Symptom: sc.Symptom, Expect: sc.Expect}, err
	}
	opts.WireGuard = impl
	res, err := Run(ctx, sc, opts)
	if err != nil || res.Pass || res.Skipped || !res.Found || len(res.Unexpected) > 0 || res.DoctorMissed != "" || res.StillFound || opts.Capacities == nil || res.Sizing.CapacityMbit == 0 {
		return res, err
	}
	opts.Capacities.Forget(shapeOf(sc, res.WireGuard))
	_, now, err := sizeLab(ctx, sc, opts)
	if err != nil || now.Skip != "" || now.RateMbit >= res.Sizing.RateMbit {
		return res, nil // the machine did not get busier: the shortfall stands
	}
	if opts.Log != nil {
		fmt.Fprintf(opts.Log, "  fell short (%s) while the machine got busier (a healthy tunnel of this shape now carries %.0f Mbit/s, was %.0f): playing it again\n",
			res.Why, now.CapacityMbit, res.Sizing.CapacityMbit)
	}
	again, err := Run(ctx, sc, opts)
	if again != nil {
		again.Replayed = true
	}
	return again, err
}

// PlayAll plays the scenarios in order (Play), telling each one's story on
// opts.Log when it is set: its symptom, what it did and its verdict. It
// returns every result, a scenario that could not be played included (it
// fails saying why), and how many failed; a skipped one does not.
func PlayAll(ctx context.Context, scs []Scenario, opts Options) (results []*Result, failed int) {
	for _, sc := range scs {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "== %s: %s\n", sc.Name, sc.Symptom)
		}
		res, err := Play(ctx, sc, opts)
		if err != nil {
			res.Why = err.Error()
			res.Pass = false
		}
		if !res.Pass && !res.Skipped {
			failed++
		}
		results = append(results, res)
		if opts.Log != nil {
			verdict := "PASS"
			if res.Skipped {
				verdict = "SKIP: " + res.Why
			} else if !res.Pass {
				verdict = "FAIL: " + res.Why
			}
			fmt.Fprintf(opts.Log, "  %s (%.0f s)\n\n", verdict, res.Seconds)
		}
	}
	return results, failed
}

// sizeLab measures (or recalls) the capacity for sc's shape and returns the
// lab config to build, shaped to fit this machine.
func sizeLab(ctx context.Context, sc Scenario, opts Options) (lab.Config, Sizing, error) {
	cfg := sc.Lab
	cfg.Name = opts.LabName
	cfg.WireGuard = opts.WireGuard
	cfg.Congestion = congestionOf(sc)
	catalog := cfg.Underlay.RateMbit
	if catalog > 0 && opts.RateMbit > 0 {
		// A rate given instead of measured: the backup keeps its share of the primary.
		rate := min(catalog, opts.RateMbit)
		if cfg.Backup.RateMbit > 0 {
			cfg.Backup.RateMbit = max(1, cfg.Backup.RateMbit*rate/catalog)
		}
		cfg.HubMbit = hubShare(cfg.HubMbit, rate, catalog)
		cfg.UDPBufferPercent = bufferShare(cfg.UDPBuffer, rate, catalog)
		cfg.Underlay.RateMbit = rate
		return cfg, Sizing{CatalogMbit: catalog, RateMbit: rate}, nil
	}
	if catalog == 0 || opts.Capacities == nil {
		return cfg, Sizing{CatalogMbit: catalog, RateMbit: catalog}, nil
	}
	uplinks := max(sc.ECMP, 1)
	capacity, err := opts.Capacities.Measure(ctx, shapeOf(sc, opts.WireGuard), opts.Exe, opts.LabName, opts.Seconds)
	if err != nil {
		return cfg, Sizing{}, err
	}
	s := sizing.Size(catalog, capacity, uplinks).Held(opts.HoldMbit)
	if s.Skip != "" {
		return cfg, s, nil
	}
	cfg.Underlay.RateMbit = s.RateMbit
	// A parallel tunnel's uplink gets the same share; a slower backup keeps
	// its proportion to the primary (the case is one uplink much slower than
	// the other), never faster than it.
	switch {
	case sc.ECMP > 1:
		cfg.Backup.RateMbit = s.RateMbit
	case cfg.Backup.RateMbit > 0 && s.RateMbit < catalog:
		cfg.Backup.RateMbit = max(1, cfg.Backup.RateMbit*s.RateMbit/catalog)
	}
	cfg.HubMbit = hubShare(cfg.HubMbit, s.RateMbit, catalog)
	cfg.UDPBufferPercent = bufferShare(cfg.UDPBuffer, s.RateMbit, catalog)
	return cfg, s, nil
}

// bufferShare is the share (percent) of what rmem_max allows that capped UDP
// buffers get at a lab rate below the catalog's, 0 for all of it: the
// buffer keeps its length in time. At a fifth of the rate the full buffer
// lasted five times as long, dropped a few dozen datagrams and cost CUBIC
// from 0.05 to 0.36 of the link (udp-rcvbuf at 20 Mbit/s), a coin toss.
func bufferShare(udpBuffer, rate, catalog int) int {
	if udpBuffer != lab.UDPBufferCapped || catalog <= 0 || rate >= catalog {
		return 0
	}
	return max(1, 100*rate/catalog)
}

// hubShare is the hub's leg to B at a lab rate other than the catalog's: it
// keeps its proportion to A's leg (the case is one leg slower than the
// other, or both alike), 0 without a hub.
func hubShare(hub, rate, catalog int) int {
	if hub <= 0 || catalog <= 0 || rate >= catalog {
		return hub
	}
	return max(1, hub*rate/catalog)
}
