package doctor

import (
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/target"
)

// shaperCaps holds each direction's sending tunnel interface against the
// bench: the client's sends the upload, the server's the download. A cap
// that holds the tunnel below the path is a cause the passive checks cannot
// see (a cap is no fault until the path outgrows it). It is pure.
func shaperCaps(m Measured, ep discover.Endpoints, snaps []*facts.Snapshot) []finding.Finding {
	var out []finding.Finding
	for _, d := range []struct {
		dir   string
		rate  bench.DirRate
		host  target.Spec
		iface string
	}{
		{bench.Upload, m.Up, m.Client, ep.ClientInterface},
		{bench.Download, m.Down, m.Server, ep.ServerInterface},
	} {
		s := snapOf(snaps, d.host)
		if s == nil || d.iface == "" {
			continue
		}
		for _, l := range s.Links {
			if l.Name != d.iface {
				continue
			}
			if f, ok := check.ShaperCapFinding(s.Host, l, d.dir, d.rate.Tunnel, d.rate.Underlay); ok {
				out = append(out, f)
			}
		}
	}
	return out
}
