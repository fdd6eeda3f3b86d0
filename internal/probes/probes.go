// Package probes is the one list of the targeted probes doctor runs when the
// evidence calls for them, and the one way each is pointed at a tunnel.
//
// An entry names its probe, the findings it may raise (as the package that
// analyses its output declares them, its Raises), what it needs and its help
// line. A Tunnel is a measured tunnel as every probe sees it: its two ends and
// the addresses discover found; its methods build each probe's configuration,
// so doctor, the lab's rechecks, fix --verify and the probe commands no
// longer copy ends and addresses into each probe field by field. A test holds
// the list to the catalog: every probe a finding calls for is here, and every
// entry's package raises something.
package probes

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/target"
)

// Entry is one targeted probe.
type Entry struct {
	Name catalog.Probe
	// Raises are the findings the probe may raise: those its package
	// declares it builds (the package's Raises).
	Raises []catalog.ID
	// FarEnd: the probe needs the other end of the tunnel (an iperf3
	// server, a sender there); without it the probe runs from one end.
	FarEnd bool
	Doc    string // what it measures and when doctor runs it, one line
}

// All are the targeted probes, in the order doctor considers them.
var All = []Entry{
	{Name: catalog.ProbeMTU, Raises: mtu.Raises,
		Doc: "don't-fragment probes to the peer's endpoint, then MSS steps through the tunnel with a far end: when a run stalled or collapsed, or an MTU finding calls for it"},
	{Name: catalog.ProbeICMPBurst, Raises: icmpburst.Raises,
		Doc: "one-shot pings against one persistent ping to the health checks' targets, with the ICMP limit counters read around them: whenever health checks are configured (mwan3 track_ip, banIP, an ICMP limit rule)"},
	{Name: catalog.ProbeUDPOutside, Raises: udppath.Raises, FarEnd: true,
		Doc: "UDP outside the tunnel at the rate TCP carried there, in each slow direction, on a port of its own and with WireGuard's port (sent to the far end's through a temporary nft rewrite where both ends listen on one): when nothing found explains a slow tunnel"},
	{Name: catalog.ProbeLongRun, Raises: bench.Raises, FarEnd: true,
		Doc: "a 30-second per-second run and a parallel-stream run in the slow or unsteady direction, when the short runs leave it unexplained or --thorough asks: collapse cycles and many flows"},
	{Name: catalog.ProbeShaping, Raises: shaping.Raises, FarEnd: true,
		Doc: "tbf caps below the level the tunnel climbed to on its sender, each held for 60 s or three cycles (--short-sweep: two) against the uncapped run: when throughput collapses in cycles of the tunnel's own"},
}

// Lookup is the entry of a probe name.
func Lookup(name catalog.Probe) (Entry, bool) {
	i := slices.IndexFunc(All, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return Entry{}, false
	}
	return All[i], true
}

// Help is the list as a command's help shows it: each probe's name and its
// line, wrapped under the name.
func Help() string {
	var b strings.Builder
	for _, e := range All {
		b.WriteString("  " + string(e.Name) + "\n")
		line := "     "
		for _, w := range strings.Fields(e.Doc) {
			if len(line)+1+len(w) > 80 {
				b.WriteString(line + "\n")
				line = "     "
			}
			line += " " + w
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// Tunnel is a measured tunnel as the probes see it: the end they start from,
// the far end (nil when there is none) and what discover found between them.
type Tunnel struct {
	Client, Server target.Target
	discover.Endpoints
	// Port is the far end's iperf3 port.
	Port int
}

// Reversed is the same tunnel seen from the far end, given what discover
// found from there (back): the download's sender starts the probes.
func (t Tunnel) Reversed(back discover.Endpoints) Tunnel {
	return Tunnel{Client: t.Server, Server: t.Client, Endpoints: back, Port: t.Port}
}

// MTU points the path MTU search at the tunnel: DF probes to the far end's
// endpoint, MSS steps through the tunnel to its address when there is a far
// end. The caller adds what the evidence asks (Outside, MSSStep, BackAddr).
func (t Tunnel) MTU() mtu.Config {
	c := mtu.Config{Client: t.Client, Addr: t.UnderlayAddr, ClientInterface: t.ClientInterface, Port: t.Port}
	if t.Server != nil {
		c.Server, c.TunnelAddr, c.ServerInterface = t.Server, t.TunnelAddr, t.ServerInterface
	}
	return c
}

// ICMPBurst points the health-check experiment at the client: its pings go
// to targets, bound to iface ("" for the routing table's choice).
func (t Tunnel) ICMPBurst(targets []string, iface string) icmpburst.Config {
	return icmpburst.Config{Host: t.Client, Targets: targets, Interface: iface}
}

// Shaping points the tbf sweep at the client's tunnel interface, measured
// through the tunnel to the far end.
func (t Tunnel) Shaping(caps []int, seconds int) shaping.Config {
	return shaping.Config{Client: t.Client, Server: t.Server, TunnelAddr: t.TunnelAddr, Device: t.ClientInterface,
		Caps: caps, Seconds: seconds, Omit: 1, Port: t.Port}
}

// UDPOutside points the UDP run outside the tunnel at the far end's
// endpoint address, with both ends' interfaces and the far end's key for
// the port fix's commands. The caller sets the direction and the rate.
func (t Tunnel) UDPOutside() udppath.Config {
	return udppath.Config{Client: t.Client, Server: t.Server, Addr: t.UnderlayAddr, Port: t.Port,
		ClientInterface: t.ClientInterface, ServerInterface: t.ServerInterface, ServerKey: t.PeerKey}
}
