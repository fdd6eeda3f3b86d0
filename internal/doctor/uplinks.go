package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/probe/uplinks"
	"github.com/wgperf/wgperf/internal/remedy"
)

// measureUplinks measures each uplink of a client that has more than one:
// raw TCP's upload through it, the idle round trip and the hops (a
// carrier's NAT named), and with c.UplinkRoutes the tunnel's own upload and
// download with its endpoint routed through the uplink for the run
// (tunnelOver). The bench measured the uplink the endpoint's route takes.
// The underlay baseline follows the tunnel's own route, so "the tunnel
// keeps up with the underlay" hides a tunnel on the slow uplink, and raw
// TCP alone can rank the uplinks the wrong way (the multi-WAN case's 5G:
// 273 Mbit/s raw, 1.7 through WireGuard). It returns found with what that
// proves: a route.stale-endpoint already found gets the measurement as
// evidence (the stale route is the cause it shows), otherwise
// route.endpoint-uplink is added.
func (r *Report) measureUplinks(ctx context.Context, c *Config, snaps []*facts.Snapshot, found []finding.Finding) []finding.Finding {
	ups := uplinks.List(snapOf(snaps, r.Client))
	if len(ups) < 2 || !r.Measured.Benched || r.Measured.Up.Underlay <= 0 || r.endpoints.UnderlayAddr == "" {
		return found
	}
	addr := r.endpoints.UnderlayAddr
	dev, _ := routeDev(ctx, c, addr)
	for i := range ups {
		u := &ups[i]
		u.RTTMs = uplinkRTT(ctx, c, u.Dev, addr)
		var err error
		if u.Hops, u.TraceBy, err = uplinks.Trace(ctx, c.Client, u.Dev, addr); err != nil {
			u.TraceError = err.Error()
		}
		if u.Dev == dev {
			u.Tunnel, u.Mbit = true, r.Measured.Up.Underlay
			u.TunnelMbit, u.TunnelDownMbit = r.Measured.Up.Tunnel, r.Measured.Down.Tunnel
			continue
		}
		c.progress("uplinks: underlay upload through %s (via %s), %d s", u.Dev, u.Gateway, 1+c.Seconds)
		res, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: addr, Port: c.Port, Seconds: c.Seconds, Omit: 1, BindDev: u.Dev})
		if err != nil {
			u.Error = err.Error()
		} else {
			u.Mbit = res.Mbit()
		}
		if !c.UplinkRoutes {
			continue
		}
		if u.TunnelMbit, u.TunnelDownMbit, err = r.tunnelOver(ctx, c, *u); err != nil {
			u.TunnelError = err.Error()
		}
	}
	r.Uplinks = ups
	if !c.UplinkRoutes {
		r.NotJudged = append(r.NotJudged, "the tunnel over each uplink (raw TCP, round trip and hops were measured): "+
			"it routes the tunnel's endpoint through each other uplink for a run; --uplink-routes allows that change (journaled, removed after the run)")
	}
	return withUplinkFinding(found, uplinks.Finding(r.Client, addr, r.endpoints.ClientInterface, ups, r.Measured.Up.Tunnel))
}

// holdMargin is how long past its runs' own timeouts a route held for the
// runs stays before the watchdog removes it: the hold's apply and release
// are a few commands each, slow only on a loaded machine.
const holdMargin = 30 * time.Second

// tunnelOver is the tunnel's upload and download with the client's host
// route to the endpoint through u for the runs: a change journaled as fixes
// are, which its watchdog removes at the runs' deadline if wgperf is cut
// off, and which is removed, the routes before it put back, as soon as the
// runs end. Doctor makes it only when asked (--uplink-routes).
func (r *Report) tunnelOver(ctx context.Context, c *Config, u uplinks.Uplink) (up, down float64, err error) {
	addr := r.endpoints.UnderlayAddr
	rem, err := remedy.RouteForRun(addr, remedy.Route{Via: u.Gateway, Dev: u.Dev})
	if err != nil {
		return 0, 0, err
	}
	run := iperf.Test{Addr: r.endpoints.TunnelAddr, Port: c.Port, Seconds: c.Seconds, Omit: 1, Timeout: time.Duration(1+c.Seconds+20) * time.Second}
	held, err := fix.Hold(ctx, fix.Host{T: c.Client, Root: c.FixRoot}, rem, 2*run.Timeout+holdMargin)
	if err != nil {
		return 0, 0, fmt.Errorf("routing the endpoint through %s: %w", u.Dev, err)
	}
	c.progress("uplinks: the tunnel with its endpoint routed through %s (via %s), %d s each way", u.Dev, u.Gateway, 1+c.Seconds)
	up, down, err = func() (up, down float64, err error) {
		// A policy rule before the main table (mwan3's) may still send
		// the endpoint elsewhere: then this is no measurement of u.
		if now, _ := routeDev(ctx, c, addr); now != u.Dev {
			return 0, 0, fmt.Errorf("with a host route through %s the endpoint's route still leaves through %q (a policy rule before the main table?)", u.Dev, now)
		}
		res, err := iperf.Run(ctx, c.Client, c.Server, run)
		if err != nil {
			return 0, 0, err
		}
		run.Reverse = true
		back, err := iperf.Run(ctx, c.Client, c.Server, run)
		if err != nil {
			return res.Mbit(), 0, fmt.Errorf("download: %w", err)
		}
		return res.Mbit(), back.Mbit(), nil
	}()
	if rerr := held.Release(context.WithoutCancel(ctx)); rerr != nil {
		return 0, 0, errors.Join(err, fmt.Errorf("removing the route held for the runs: %w", rerr))
	}
	return up, down, err
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
		if x.ID == catalog.RouteStaleEndpoint && x.Host.Same(f.Host) {
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
