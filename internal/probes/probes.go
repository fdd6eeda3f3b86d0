// Package probes is the one list of the targeted probes doctor runs when the
// evidence calls for them, and the one way each is pointed at a tunnel.
//
// Each probe's package exports its definition (probe.Def: its name, help
// line, whether it needs the far end, the findings it may raise, its result
// in doctor's JSON report); All lists them once. A Tunnel is a measured
// tunnel as every probe sees it: its two ends and the addresses discover
// found; its methods build each probe's configuration, so doctor, the lab's
// rechecks, fix --verify and the probe commands no longer copy ends and
// addresses into each probe field by field. Tests hold the list to the
// catalog (every probe a finding calls for is here, and each raises
// something), to the probe packages (each definition is listed) and to the
// doctor report's schema.
package probes

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/probe"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probe/shaping"
	"github.com/wgperf/wgperf/internal/probe/udppath"
	"github.com/wgperf/wgperf/internal/target"
)

// All are the targeted probes, in the order doctor considers them: each is
// its package's definition (probe.Def), listed here once.
var All = []probe.Def{
	mtu.Def,
	icmpburst.Def,
	udppath.Def,
	bench.LongRunDef,
	shaping.Def,
}

// Lookup is the definition of a probe name.
func Lookup(name catalog.Probe) (probe.Def, bool) {
	i := slices.IndexFunc(All, func(e probe.Def) bool { return e.Name == name })
	if i < 0 {
		return probe.Def{}, false
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
