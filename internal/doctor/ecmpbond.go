package doctor

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/verify"
)

// A tunnel runs at one slave's rate when it carries at least slaveShare of
// the TCP one slave's speed lets through one tunnel, or when the bench's
// parallel streams around it (the underlay, which a layer3+4 hash spreads)
// carried bondSpread times what they carried through it.
const (
	slaveShare = 0.7
	bondSpread = 1.5
	// minECMPGain is the least expected gain worth several tunnels.
	minECMPGain = 1.3
)

// bondECMP suggests, for a host whose tunnel leaves by a flow-hashing bond
// of several slaves and runs at one slave's rate, as many tunnels as the
// bond has slaves behind a multipath route (the ECMP case's central move:
// one tunnel over its 3×1G bond carried 874-893 Mbit/s, two 1.56 Gbit/s),
// with the gain to expect: the tunnels' rate times their number, bounded by
// the bond's speed or by what the parallel streams around the tunnel
// carried. ok is false when the host has no such bond or its tunnel was not
// held at one slave's rate.
func bondECMP(s *facts.Snapshot, rep *bench.Report) (finding.Finding, bool) {
	if rep == nil || len(s.WireGuard) == 0 {
		return finding.Finding{}, false
	}
	dev, dir := rep.ClientUplink, bench.Upload
	if s.Host.Same(rep.Server) {
		dev, dir = rep.ServerUplink, bench.Download
	} else if !s.Host.Same(rep.Client) {
		return finding.Finding{}, false
	}
	b, ok := check.BondUnder(s, dev)
	if !ok {
		return finding.Finding{}, false
	}
	var cell *bench.Cell
	for i, c := range rep.Cells {
		if c.Direction == dir && c.Hop == 0 && c.TunnelMbit > 0 && (cell == nil || c.Streams > cell.Streams) {
			cell = &rep.Cells[i]
		}
	}
	if cell == nil {
		return finding.Finding{}, false
	}
	tunnel, around := cell.TunnelMbit, cell.UnderlayMbit
	bySpeed := b.OneTCP > 0 && tunnel >= slaveShare*b.OneTCP
	byStreams := cell.Streams > 1 && around >= bondSpread*tunnel
	if !bySpeed && !byStreams {
		return finding.Finding{}, false
	}
	n := min(b.Slaves, remedy.MaxECMPTunnels)
	bound, boundBy := b.AllTCP, fmt.Sprintf("the TCP %s's %d Mbit/s carry through tunnels", b.Name, b.BondMbit)
	if byStreams && (bound == 0 || around < bound) {
		bound, boundBy = around, fmt.Sprintf("what %d streams around the tunnel carried", cell.Streams)
	}
	expected := float64(n) * tunnel
	if bound > 0 {
		expected = min(expected, bound)
	}
	if expected < minECMPGain*tunnel {
		return finding.Finding{}, false
	}
	slaves := fmt.Sprintf("%d slaves", b.Slaves)
	if b.SlaveMbit > 0 {
		slaves = fmt.Sprintf("%d × %d Mbit/s", b.Slaves, b.SlaveMbit)
	}
	f := finding.Finding{
		ID:        catalog.RouteECMPSuggested,
		Severity:  finding.Info,
		Host:      s.Host,
		Interface: s.WireGuard[0].Name,
		Title: fmt.Sprintf("One tunnel carries %.0f Mbit/s %s, one slave's worth of %s (%s, %s): %d tunnels over the bond (ECMP) can carry about %.0f",
			tunnel, dir, b.Name, b.Mode, slaves, n, expected),
		Detail: fmt.Sprintf("A WireGuard tunnel is one UDP flow, and %s sends each flow by one slave: the tunnel cannot go past one "+
			"slave's rate however many the bond has. %d tunnels between the same ends, on ports the bond's hash sends by different "+
			"slaves (wgperf fix ecmp chooses them), behind a multipath route that hashes flows over them, add the slaves up: about "+
			"%.0f Mbit/s, %.1f× (%d × %.0f, bounded by %s). The ECMP case's one tunnel over a 3×1G bond carried 874-893 Mbit/s "+
			"and two 1.56 Gbit/s, its retransmissions the cost (paths that differ reorder packets).",
			b.Name, n, expected, expected/tunnel, n, tunnel, boundBy),
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "bench", Key: fmt.Sprintf("tunnel %s, %d streams", dir, cell.Streams), Value: fmt.Sprintf("%.0f Mbit/s", tunnel)}.Of(tunnel, finding.Mbits),
			{Source: "/sys/class/net/" + b.Name + "/bonding", Key: b.Name, Value: fmt.Sprintf("%s, %s, hash %s", b.Mode, slaves, b.Policy)},
			finding.Evidence{Source: "bench", Key: fmt.Sprintf("expected with %d tunnels", n), Value: fmt.Sprintf("about %.0f Mbit/s (%.1f×)", expected, expected/tunnel),
				Threshold: "bounded by " + boundBy}.Of(expected, finding.Mbits),
		},
		Fixes: []finding.Fix{{
			Description: fmt.Sprintf("Spread the flows over %d tunnels on both ends (ports the bond's hash spreads), then measure the scaling", n),
			Commands:    []string{shell.Join("wgperf", "fix", "ecmp", "--interface", s.WireGuard[0].Name, "--tunnels", strconv.Itoa(n))},
		}},
	}
	if byStreams {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "bench", Key: fmt.Sprintf("underlay %s, %d streams", dir, cell.Streams),
			Value: fmt.Sprintf("%.0f Mbit/s", around), Threshold: fmt.Sprintf(">= %.1f× the tunnel: the bond spreads flows", bondSpread)}.Of(around, finding.Mbits))
	}
	if b.Policy == "layer2" || b.Policy == "layer2+3" {
		f.Detail += " The bond hashes on " + b.Policy + ", which ignores ports: every tunnel would leave by one slave until it hashes on layer3+4 (bond.hash-policy)."
	}
	return f, true
}

// measureBondSpread measures, where the client's tunnel leaves by a
// flow-hashing bond of several slaves and the bench ran one stream only
// (doctor's quick bench), parallel upload flows (verify.ChooseSpreadFlows:
// those the hash fix measures too) through the tunnel and
// around it: one flow rides one slave either way, and only parallel flows
// show whether the bond spreads them past the tunnel (bondECMP reads the
// cell it adds to the bench). Nothing when a run fails: the suggestion then
// rests on the slaves' link speeds alone.
func (r *Report) measureBondSpread(ctx context.Context, c *Config, snaps []*facts.Snapshot) {
	s := snapOf(snaps, r.Client)
	if r.Bench == nil || s == nil || r.endpoints.UnderlayAddr == "" || r.Bench.UnderlayBlocked != "" ||
		slices.ContainsFunc(r.Bench.Cells, func(cl bench.Cell) bool { return cl.Streams > 1 }) {
		return
	}
	b, ok := check.BondUnder(s, r.Bench.ClientUplink)
	if !ok {
		return
	}
	underlayPort := c.Port
	if c.UnderlayPort > 0 {
		underlayPort = c.UnderlayPort
	}
	// Around the tunnel the flows leave from ports the bond would spread if
	// it hashed on them: the kernel's own can put every flow on one slave.
	flows := verify.ChooseSpreadFlows(ctx, c.Client, r.endpoints.UnderlayAddr, underlayPort)
	cell := bench.Cell{Direction: bench.Upload, Streams: flows.Streams}
	for _, path := range []string{bench.PathTunnel, bench.PathUnderlay} {
		addr, port, cport := r.endpoints.TunnelAddr, c.Port, 0
		if path == bench.PathUnderlay {
			addr, port, cport = r.endpoints.UnderlayAddr, underlayPort, flows.CPort
		}
		c.progress("%s is a bond of %d slaves: %s upload, %d streams, for %d s", b.Name, b.Slaves, path, flows.Streams, 1+c.Seconds)
		res, err := iperf.Run(ctx, c.Client, c.Server, iperf.Test{Addr: addr, Port: port, Seconds: c.Seconds, Omit: 1,
			Parallel: flows.Streams, CPort: cport, Timeout: time.Duration(c.Seconds+25) * time.Second})
		if err != nil {
			return
		}
		mbit := bench.Summarise(res).Mbit
		if path == bench.PathTunnel {
			cell.TunnelMbit = mbit
		} else {
			cell.UnderlayMbit = mbit
		}
	}
	if cell.UnderlayMbit > 0 {
		cell.Ratio = cell.TunnelMbit / cell.UnderlayMbit
	}
	r.Bench.Cells = append(r.Bench.Cells, cell)
}
