package doctor

import (
	"context"
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/udppath"
)

// ProbeUDPOutside offers UDP outside the tunnel at the rate TCP carried there.
const ProbeUDPOutside = check.ProbeUDPOutside

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
		if d.Role != check.Cause || f.Severity < finding.Warning || impactOf(f) < explainedImpact {
			continue
		}
		if hit := direction(f, m); hit == "both" || hit == dir {
			return true
		}
	}
	return false
}

// runUDPOutside offers UDP outside the tunnel in each planned direction.
func (r *Report) runUDPOutside(ctx context.Context, c *Config, dirs []string) ([]finding.Finding, string, error) {
	var fs []finding.Finding
	var parts []string
	for _, dir := range dirs {
		uc := udppath.Config{Client: c.Client, Server: c.Server, Addr: r.endpoints.UnderlayAddr, Direction: dir,
			Port: c.Port, Progress: progressWriter(c.Progress)}
		uc.TCPMbit, uc.SenderInterface = r.Measured.Up.Underlay, r.endpoints.ClientInterface
		if dir == bench.Download {
			uc.TCPMbit, uc.SenderInterface = r.Measured.Down.Underlay, r.endpoints.ServerInterface
		}
		res, err := udppath.Run(ctx, uc)
		if err != nil {
			return fs, strings.Join(parts, "; "), err
		}
		r.UDPOutside = append(r.UDPOutside, res)
		fs = append(fs, res.Findings...)
		parts = append(parts, fmt.Sprintf("%s: %.1f of %.1f Mbit/s arrived, %.0f%% lost on the path", dir, res.ArrivedMbit, res.OfferedMbit, 100*res.PathLoss))
	}
	return fs, strings.Join(parts, "; "), nil
}
