package doctor

import (
	"bytes"
	"context"
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
)

// measureUplinks measures the underlay upload through each uplink the
// tunnel does not take (the bench measured that one), when the client has
// more than one: the underlay baseline follows the tunnel's own route, so
// "the tunnel keeps up with the underlay" hides a tunnel on the slow uplink.
// It returns found with what that proves: a route.stale-endpoint already
// found gets the measurement as evidence (the stale route is the cause it
// shows), otherwise route.endpoint-uplink is added.
func (r *Report) measureUplinks(ctx context.Context, c *Config, snaps []*facts.Snapshot, found []finding.Finding) []finding.Finding {
	ups := uplinks.List(snapOf(snaps, r.Client))
	if len(ups) < 2 || !r.Measured.Benched || r.Measured.Up.Underlay <= 0 || r.endpoints.UnderlayAddr == "" {
		return found
	}
	dev, _ := routeDev(ctx, c, r.endpoints.UnderlayAddr)
	for i := range ups {
		u := &ups[i]
		u.RTTMs = uplinkRTT(ctx, c, u.Dev, r.endpoints.UnderlayAddr)
		if u.Dev == dev {
			u.Tunnel, u.Mbit = true, r.Measured.Up.Underlay
			continue
		}
		c.progress("uplinks: underlay upload through %s (via %s), %d s", u.Dev, u.Gateway, 1+c.Seconds)
		res, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: r.endpoints.UnderlayAddr, Port: c.Port, Seconds: c.Seconds, Omit: 1, BindDev: u.Dev})
		if err != nil {
			u.Error = err.Error()
			continue
		}
		u.Mbit = res.Mbit()
	}
	r.Uplinks = ups
	return withUplinkFinding(found, uplinks.Finding(r.Client, r.endpoints.UnderlayAddr, r.endpoints.ClientInterface, ups, r.Measured.Up.Tunnel))
}

// uplinkRTT is the median of a few idle pings to addr bound to dev (0 when
// none came back or ping is missing: the rates still tell the uplinks apart).
func uplinkRTT(ctx context.Context, c *Config, dev, addr string) float64 {
	rtt, err := bench.Ping(ctx, c.Client, addr, 5, dev)
	if err != nil || rtt.Received == 0 {
		return 0
	}
	return rtt.MedianMs
}

// withUplinkFinding adds f (nil: nothing) to found, or its evidence to the
// route.stale-endpoint of the same host, whose stale route is the cause the
// measurement shows. It is pure.
func withUplinkFinding(found []finding.Finding, f *finding.Finding) []finding.Finding {
	if f == nil {
		return found
	}
	for i, x := range found {
		if x.ID == catalog.RouteStaleEndpoint && x.Host == f.Host {
			found[i].Evidence = append(slices.Clone(x.Evidence), f.Evidence...)
			return found
		}
	}
	return append(found, *f)
}

// routeDev is the device the client's route to addr leaves through.
func routeDev(ctx context.Context, c *Config, addr string) (dev, gateway string) {
	out, err := c.Client.Run(ctx, "ip", "-j", "route", "get", addr)
	if err != nil {
		return "", ""
	}
	dev, gateway, _, err = parse.ParseRouteGet(bytes.NewReader(out))
	if err != nil {
		return "", ""
	}
	return dev, gateway
}
