package doctor

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/udppath"
)

// explainedImpact: a warning or critical cause whose impact reaches this
// already explains a slow direction; UDP outside the tunnel is measured only
// where nothing that large was found.
const explainedImpact = 0.5

// udpOutsideDirections are the directions whose tunnel fell short of its
// underlay with nothing found that explains it (the underlay's own TCP ran,
// no cause of impact explainedImpact or more aims at that direction): a TCP
// baseline cannot see a path that polices UDP, so those get a UDP run. It is
// pure.
func udpOutsideDirections(fs []finding.Finding, m Measured) []string {
	if !m.Benched || m.Stalled {
		return nil
	}
	var out []string
	for _, d := range []struct {
		name string
		r    bench.DirRate
	}{{bench.Upload, m.Up}, {bench.Download, m.Down}} {
		if d.r.Underlay <= 0 || d.r.Ratio() >= m.Expected || m.underlayFailed(d.name) || explained(fs, m, d.name) {
			continue
		}
		out = append(out, d.name)
	}
	return out
}

// explained reports a cause large enough to account for dir's shortfall.
func explained(fs []finding.Finding, m Measured, dir string) bool {
	for _, f := range fs {
		d := doctorOf(f.ID)
		if d.Role != catalog.Cause || f.Severity < finding.Warning || impactOf(f) < explainedImpact {
			continue
		}
		if hit := direction(f, m); hit == "both" || hit == dir {
			return true
		}
	}
	return false
}

// runUDPOutside offers UDP outside the tunnel in each planned direction:
// on a port of wgperf's own, then carrying WireGuard's port number (see
// udppath.Pair for which pair stands for it), and judges the two against
// what the tunnel carried.
func (r *Report) runUDPOutside(ctx context.Context, c *Config, p ProbePlan, _ []*facts.Snapshot) ([]finding.Finding, string, error) {
	var fs []finding.Finding
	var parts []string
	wgPort, toPort, noPort := r.wireGuardPortRun()
	for _, dir := range p.Directions {
		uc := r.tunnel(c).UDPOutside()
		// Where the baseline reached the far end: --underlay-addr and -port.
		uc.Addr, uc.Port = cmp.Or(c.UnderlayAddr, uc.Addr), cmp.Or(c.UnderlayPort, uc.Port)
		uc.Direction, uc.Progress = dir, progressWriter(c.Progress)
		uc.TCPMbit, uc.SenderInterface = r.Measured.Up.Underlay, r.endpoints.ClientInterface
		tunnel := r.Measured.Up.Tunnel
		if dir == bench.Download {
			uc.TCPMbit, uc.SenderInterface, tunnel = r.Measured.Down.Underlay, r.endpoints.ServerInterface, r.Measured.Down.Tunnel
		}
		uc.PathLowMbit = pathLow(r.Bench, dir)
		pair := udppath.Pair{TunnelMbit: tunnel, NoPort: noPort}
		res, err := udppath.Run(ctx, uc)
		if err != nil {
			return fs, strings.Join(parts, "; "), err
		}
		pair.Other = res
		r.addUDPOutside(res)
		if !res.Policed && !res.Capacity {
			r.Measured.PathLoss = max(r.Measured.PathLoss, res.PathLoss)
		}
		fs = append(fs, res.Findings...)
		part := fmt.Sprintf("%s: %.1f of %.1f Mbit/s arrived, %.0f%% lost on the path%s", dir, res.ArrivedMbit, res.OfferedMbit, 100*res.PathLoss, res.CapacityWords())
		// UDP policed on a port of its own is the answer already: the run
		// with WireGuard's port could only repeat it.
		if wgPort > 0 && !res.Policed {
			uc.WireGuardPort, uc.ToPort = wgPort, toPort
			on, err := udppath.Run(ctx, uc)
			switch {
			case err != nil && toPort:
				// The rewrite could not be made (no nft, a NAT on the path):
				// the run with WireGuard's port is not measured, the rest stands.
				noPort = fmt.Sprintf("UDP to WireGuard's port %d could not run: %v", wgPort, err)
				pair.NoPort = noPort
			case err != nil:
				return fs, strings.Join(append(parts, part), "; "), err
			default:
				pair.OnPort = on
				r.addUDPOutside(on)
				how := "with"
				if toPort {
					how = "to"
				}
				part += fmt.Sprintf("; %s WireGuard's port %d %.0f%% lost%s", how, wgPort, 100*on.PathLoss, on.CapacityWords())
			}
		}
		fs = append(fs, udppath.Judge(pair)...)
		parts = append(parts, part)
	}
	if noPort != "" {
		r.NotJudged = append(r.NotJudged, "UDP with WireGuard's port number outside the tunnel: "+noPort)
	}
	return fs, strings.Join(parts, "; "), nil
}

// wireGuardPortRun is the WireGuard port number the second UDP run carries
// (the far end's, as the client's peer names it), or why there is none. The
// client's iperf3 sends from it; where the client's own WireGuard holds the
// same port, the run is sent to the far end's port instead (toPort: nft
// rewrites and counts it on both ends for its seconds).
func (r *Report) wireGuardPortRun() (port int, toPort bool, why string) {
	ep := r.endpoints
	port = ep.EndpointPort
	if port == 0 {
		port = ep.ServerPort
	}
	if port == 0 {
		return 0, false, "the far end's WireGuard port is unknown"
	}
	return port, port == ep.ClientPort, ""
}

// pathLow is the lowest rate TCP carried on the path in dir in a whole
// second of the bench's own underlay runs, 0 without one: UDP outside the
// tunnel that delivers about as much met the path's capacity, not a policer.
// It is pure.
func pathLow(b *bench.Report, dir string) float64 {
	low := 0.0
	if b == nil {
		return 0
	}
	for _, run := range b.Runs {
		if run.Path != bench.PathUnderlay || run.Direction != dir || run.UDPMbit != 0 || run.Result == nil || run.Result.Protocol == "udp" {
			continue
		}
		for _, iv := range run.Result.Measured() {
			if iv.End-iv.Start < 0.5 || iv.Mbit <= 0 {
				continue
			}
			if low == 0 || iv.Mbit < low {
				low = iv.Mbit
			}
		}
	}
	return low
}

// addUDPOutside keeps one more UDP run outside the tunnel among the report's
// udp-outside results.
func (r *Report) addUDPOutside(res *udppath.Result) {
	r.SetResult(udppath.Def, append(ProbeResult[[]*udppath.Result](r, udppath.Def), res))
}
