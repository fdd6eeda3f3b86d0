package bench

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/target"
)

// This file measures a tunnel that runs through hubs (--via): a road-warrior
// hub that forwards between its peers, a multi-hop path. The case write-ups
// measured each hop's own underlay (client → hub, hub → server) and watched
// the hub's CPU, which decrypts and encrypts every packet once more: the
// first hop's underlay alone overstates a path whose later hop is slower.

// Leg is one hop of a path through hubs: From reaches To's address under the
// tunnel at Addr (To's endpoint, as From's WireGuard peer names it). To runs
// the hop's iperf3 server, as the server does for the bench.
type Leg struct {
	From, To target.Target
	Addr     string
}

// HopRate is one hop's own underlay, each way, in Mbit/s (its single-stream
// runs; 0 where a run did not finish): upload is From sending, as the client
// does on the whole path.
type HopRate struct {
	Hop          int         `json:"hop"` // from 1, the client's
	From         target.Spec `json:"from"`
	To           target.Spec `json:"to"`
	Addr         string      `json:"addr"`
	UploadMbit   float64     `json:"upload_mbit"`
	DownloadMbit float64     `json:"download_mbit"`
}

// Hop names a hop as the tables print it: "hop 2 (netns:h → netns:b)".
func (h HopRate) String() string { return fmt.Sprintf("hop %d (%s → %s)", h.Hop, h.From, h.To) }

// PathName is a run's path as tables print it: "underlay hop 2" for a
// hop's own underlay run.
func (s Spec) PathName() string {
	if s.Hop > 0 {
		return fmt.Sprintf("%s hop %d", s.Path, s.Hop)
	}
	return s.Path
}

// DiscoverVia finds, for a tunnel from Client through the hubs via to
// Server, each hop's tunnel (discover.Tunnel between its ends) and fills
// Legs, the server's tunnel address and both ends' interfaces from the first
// and last hops. The path has no one underlay (UnderlayAddr is cleared) and
// at least one WireGuard hop per leg.
func (c *Config) DiscoverVia(ctx context.Context, via []target.Target) error {
	if len(via) == 0 {
		return nil
	}
	ends := append(append([]target.Target{c.Client}, via...), c.Server)
	c.Legs = nil
	for i := 0; i+1 < len(ends); i++ {
		from, to := ends[i], ends[i+1]
		ep, err := discover.Tunnel(ctx, from, to)
		if err != nil {
			return fmt.Errorf("hop %d (%s → %s): %w", i+1, from, to, err)
		}
		if ep.UnderlayAddr == "" {
			return fmt.Errorf("hop %d (%s → %s): %s's WireGuard peer for %s has no endpoint on it to measure the hop's underlay to",
				i+1, from, to, from, to)
		}
		c.Legs = append(c.Legs, Leg{From: from, To: to, Addr: ep.UnderlayAddr})
		if i == 0 {
			c.ClientInterface, c.ClientPort = ep.ClientInterface, ep.ClientPort
		}
		if i+2 == len(ends) {
			if c.TunnelAddr == "" {
				c.TunnelAddr = ep.TunnelAddr
			}
			c.ServerInterface, c.ServerPort = ep.ServerInterface, ep.ServerPort
		}
	}
	c.UnderlayAddr = ""
	c.Hops = max(c.Hops, len(c.Legs))
	return nil
}

// hubs are the hosts between client and server, in path order.
func (c Config) hubs() []target.Target {
	var out []target.Target
	for _, l := range c.Legs[min(1, len(c.Legs)):] {
		out = append(out, l.From)
	}
	return out
}

func (c Config) via() []target.Spec {
	var out []target.Spec
	for _, h := range c.hubs() {
		out = append(out, target.Of(h))
	}
	return out
}

// hopSpecs are the underlay runs of each hop, for one direction and stream count.
func hopSpecs(c Config, dir string, streams int) []Spec {
	var out []Spec
	for i := range c.Legs {
		out = append(out, Spec{Path: PathUnderlay, Direction: dir, Streams: streams, Hop: i + 1})
	}
	return out
}

// measureHop runs one hop's underlay as the bench runs the underlay between
// client and server: the same run, counters and pings, between the hop's ends.
func measureHop(ctx context.Context, c Config, spec Spec) (Run, error) {
	leg := c.Legs[spec.Hop-1]
	hc := c
	hc.Client, hc.Server, hc.UnderlayAddr, hc.TunnelAddr, hc.Legs = leg.From, leg.To, leg.Addr, "", nil
	hc.ClientInterface, hc.ServerInterface, hc.ClientPort, hc.ServerPort = "", "", 0, 0
	one := spec
	one.Hop = 0
	// No pings: the path's round trips are the ends', measured beside their own runs.
	run, _, err := measure(ctx, hc, one, nil, &pinger{t: leg.From}, nil, nil)
	run.Spec, run.Latency = spec, nil
	return run, err
}

// hubSamples are the hubs' counters before a tunnel run.
type hubSamples struct {
	hubs   []target.Target
	before []Sample
}

// hubsDuring samples the hubs before a tunnel run through them (none for
// other runs), all at once.
func (c Config) hubsDuring(ctx context.Context, spec Spec) *hubSamples {
	if spec.Path != PathTunnel || len(c.Legs) < 2 {
		return nil
	}
	h := &hubSamples{hubs: c.hubs()}
	h.before = sampleAll(ctx, h.hubs, Baseline)
	return h
}

// after is what each hub's counters did since hubsDuring.
func (h *hubSamples) after(ctx context.Context) []HostDelta {
	if h == nil {
		return nil
	}
	after := sampleAll(ctx, h.hubs, Named)
	out := make([]HostDelta, len(h.hubs))
	for i, t := range h.hubs {
		out[i] = Delta(End{Host: target.Of(t)}, h.before[i], after[i])
	}
	return out
}

func sampleAll(ctx context.Context, ts []target.Target, named bool) []Sample {
	out := make([]Sample, len(ts))
	done := make(chan struct{})
	for i, t := range ts {
		go func() { defer func() { done <- struct{}{} }(); out[i] = TakeSample(ctx, t, named) }()
	}
	for range ts {
		<-done
	}
	return out
}

// hopRates reads each hop's single-stream underlay runs.
func hopRates(r *Report) []HopRate {
	if len(r.Via) == 0 {
		return nil
	}
	ends := append(append([]target.Spec{r.Client}, r.Via...), r.Server)
	var out []HopRate
	for i := 0; i+1 < len(ends); i++ {
		h := HopRate{Hop: i + 1, From: ends[i], To: ends[i+1]}
		for _, dir := range []string{Upload, Download} {
			run := findHop(r, PathUnderlay, dir, 1, h.Hop)
			if run == nil {
				continue
			}
			h.Addr = run.Addr
			if dir == Upload {
				h.UploadMbit = run.Rate()
			} else {
				h.DownloadMbit = run.Rate()
			}
		}
		out = append(out, h)
	}
	return out
}

// slowestHop is, on a path through hubs, the underlay run of the hop that
// carried least for a direction and stream count: the path's limit. Nil
// unless every hop's run finished: a hop not measured may be the slowest.
func slowestHop(r *Report, dir string, streams int) *Run {
	var out *Run
	for hop := 1; hop <= len(r.Via)+1; hop++ {
		run := findHop(r, PathUnderlay, dir, streams, hop)
		if run == nil {
			return nil
		}
		if out == nil || run.Rate() < out.Rate() {
			out = run
		}
	}
	return out
}

// HopsText is the hops' own underlays in one line each, the slowest marked:
// "hop 2 (netns:h → netns:b)  upload 9.6  download 9.5 Mbit/s  slowest".
func (r *Report) HopsText() []string {
	var out []string
	slow := map[int]bool{}
	for _, c := range r.Cells {
		slow[c.Hop] = true
	}
	for _, h := range r.HopUnderlay {
		line := fmt.Sprintf("%s  upload %.1f  download %.1f Mbit/s", h, h.UploadMbit, h.DownloadMbit)
		if slow[h.Hop] {
			line += "  slowest"
		}
		out = append(out, line)
	}
	return out
}

// hubLoad is a hub's busiest CPU during the tunnel runs, as the hop lines
// print it: "netns:h busiest CPU 41% (tunnel upload, 1 stream)".
func (r *Report) hubLoad() []string {
	var out []string
	for i, hub := range r.Via {
		best, idx, during := -1.0, -1, ""
		for _, run := range r.Runs {
			if run.Path != PathTunnel || i >= len(run.Hubs) {
				continue
			}
			if b, j := run.Hubs[i].MaxCPU(); j >= 0 && b > best {
				best, idx, during = b, j, run.Spec.String()
			}
		}
		if idx >= 0 {
			out = append(out, fmt.Sprintf("hub %s: busiest CPU %d at %.0f%% (%s)", hub, idx, best, during))
		}
	}
	return out
}

// HopLines are the hops' own underlays and the hubs' busiest CPU during
// the tunnel runs, one line each, for bench's and doctor's text.
func (r *Report) HopLines() []string { return slices.Concat(r.HopsText(), r.hubLoad()) }

// writeHops prints the hops' own underlays and the hubs' load.
func (r *Report) writeHops(w io.Writer) {
	lines := r.HopLines()
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(w, "\nHOPS (the tunnel is judged against the slowest hop's underlay)")
	for _, l := range lines {
		fmt.Fprintln(w, "  "+l)
	}
}

// underlayText is a cell's underlay figure, with the hop it is on a path
// through hubs: "9.6 (hop 2)".
func (c Cell) underlayText() string {
	if c.Hop > 0 {
		return fmt.Sprintf("%.1f (hop %d)", c.UnderlayMbit, c.Hop)
	}
	return fmt.Sprintf("%.1f", c.UnderlayMbit)
}

// underlayName is what a cell's tunnel is judged against, in words.
func (c Cell) underlayName() string {
	if c.Hop > 0 {
		return fmt.Sprintf("the slowest hop's underlay (hop %d)", c.Hop)
	}
	return "the underlay"
}

// UnderlayRun is the underlay run a tunnel run of a direction and stream
// count is compared with: the one underlay's, or on a path through hubs the
// slowest hop's (nil when not measured).
func (r *Report) UnderlayRun(dir string, streams int) *Run {
	if r == nil {
		return nil
	}
	return find(r, PathUnderlay, dir, streams)
}
