package udppath

import (
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the judgement of UDP outside the tunnel. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{catalog.PathPortThrottled, catalog.PathUDPPoliced, catalog.WGSpecificCollapse}

// Thresholds of Judge: the port of wgperf's own must lose under CleanLoss for
// a loss on WireGuard's port to be the port's; a tunnel below CollapseShare
// of what UDP outside it delivered (the lesser run) collapsed where UDP did
// not.
const (
	CleanLoss     = 0.05
	CollapseShare = 0.5
	// LossyPath: where UDP outside the tunnel loses this share, a
	// loss-based TCP collapses through the tunnel whatever WireGuard does
	// (Mathis: MSS/RTT x 1.22/sqrt(p), under 10 Mbit/s at 0.5%, 1380-byte
	// segments and 20 ms), so a collapse there is the loss's. The
	// multi-WAN case's 5G link, WireGuard's own collapse, lost 0.18%.
	LossyPath = 0.005
)

// Pair is one direction's UDP runs outside the tunnel and what the tunnel
// carried that way.
//
// Which port pair stands for WireGuard's: the far end's listen port is held
// by its WireGuard, and freeing it (the interface down) would cut the tunnel
// being judged, so no run can reach that socket. A carrier's port rule
// matches the number on the wire in either field ("udp port 51820"), so the
// near end's iperf3 sends from that number (--cport) to the far end's iperf3:
// the upload's datagrams carry it as their source port, the download's (-R)
// as their destination. Where the near end listens on the same port, its own
// WireGuard holds it too: the datagrams are sent to the far end's port
// instead, rewritten by nft on both ends and counted on arrival
// (Config.ToPort); NoPort says why neither could run.
type Pair struct {
	Other  *Result // on a port of wgperf's own
	OnPort *Result // with WireGuard's port number; nil when it could not run
	// NoPort says why OnPort is nil ("" when it ran).
	NoPort     string
	TunnelMbit float64 // the tunnel's rate that way, from the bench
}

// Judge reads a direction's pair: a loss only WireGuard's port number meets
// is a port throttle; a tunnel collapse no UDP run reproduces is WireGuard's
// own, not policing. A run on wgperf's port that was policed has its finding
// already (Analyze), and nothing more is said. It is pure.
func Judge(p Pair) []finding.Finding {
	o := p.Other
	if o == nil || o.Policed {
		return nil
	}
	if on := p.OnPort; on != nil && on.Policed {
		if o.PathLoss >= CleanLoss {
			return nil // UDP as a whole loses too: no port to blame
		}
		return throttled(o, on)
	}
	// The tunnel is held to the lesser of what arrived: a run whose
	// receiver dropped at its own socket sets no bar the path could.
	arrived := o.ArrivedMbit
	if p.OnPort != nil {
		arrived = min(arrived, p.OnPort.ArrivedMbit)
	}
	// A path that loses at random on WireGuard's port (not a policer: that
	// is above) loses the tunnel's packets too, and a loss-based sender
	// collapses on it: the loss's, not WireGuard's (the lab's 1% on the
	// tunnel's datagrams: 2% on the port, 0% on another, CUBIC at 5 of 95).
	portLoss := p.OnPort != nil && p.OnPort.PathLoss >= LossyPath
	if p.TunnelMbit >= CollapseShare*arrived || o.PathLoss >= LossyPath || portLoss {
		return nil
	}
	return []finding.Finding{wireGuardOwn(p)}
}

// NewPort is the listen port the port fix moves the far end to: the next one
// up, or down from the top of the range.
func NewPort(port int) int {
	if port >= 65535 {
		return port - 1
	}
	return port + 1
}

// throttled is the port throttle as two findings with one ID, one on each
// end, each carrying its half of the fix: the far end (the server) moves to
// a new listen port, the near end (the client) points its peer at it. Either
// half alone cuts the tunnel, so each says the other is needed; doctor --fix
// applies the pair as one (the catalog's BothEnds).
func throttled(o, on *Result) []finding.Finding {
	sev := finding.Warning
	if on.PathLoss >= SevereLoss {
		sev = finding.Critical
	}
	port := strconv.Itoa(on.WireGuardPort)
	newPort := strconv.Itoa(NewPort(on.WireGuardPort))
	base := finding.Finding{
		ID: catalog.PathPortThrottled, Severity: sev,
		Title: fmt.Sprintf("The path throttles WireGuard's port %s (%s): UDP carrying it lost %.0f%% at %.1f Mbit/s, UDP on another port %.0f%%",
			port, on.Direction, 100*on.PathLoss, on.OfferedMbit, 100*o.PathLoss),
		Evidence: []finding.Evidence{
			finding.Evidence{Source: on.portSource(), Key: "lost on the path with port " + port + " (" + on.Direction + ")",
				Value: fmt.Sprintf("%d of %d (%.0f%%)", max(0, on.Lost-on.ReceiverDrops), on.Packets, 100*on.PathLoss), Threshold: fmt.Sprintf("< %.0f%%", 100*PolicedLoss)}.Of(100*on.PathLoss, finding.Percent),
			finding.Evidence{Source: "iperf3 -u", Key: "lost on the path on another port", Value: fmt.Sprintf("%d of %d (%.0f%%)", max(0, o.Lost-o.ReceiverDrops), o.Packets, 100*o.PathLoss),
				Threshold: fmt.Sprintf("< %.0f%%", 100*CleanLoss)}.Of(100*o.PathLoss, finding.Percent),
			finding.Evidence{Source: on.portSource(), Key: "UDP arrived with port " + port, Value: fmt.Sprintf("%.1f of %.1f Mbit/s", on.ArrivedMbit, on.OfferedMbit)}.Of(on.ArrivedMbit, finding.Mbits),
		},
	}
	if on.ToPort {
		base.Evidence = append(base.Evidence, finding.Evidence{Source: "nft counter on " + on.receiver().String(), Key: "datagrams that arrived with port " + port,
			Value: fmt.Sprint(on.Counted)}.Of(float64(on.Counted), finding.Packets))
	}
	const what = "Datagrams carrying WireGuard's port number are dropped above a rate other UDP and TCP pass at: a carrier or firewall " +
		"that recognises WireGuard by its port. The tunnel gets what the rule leaves; on another port it would not meet the rule. "
	far, near := base, base
	far.Host, far.Interface = on.Server, on.serverInterface
	far.Detail = what + fmt.Sprintf("This is the far end's half of the fix: %s moves to port %s, and %s must point its peer at the new port "+
		"at the same time (the other half, on %s): either half alone cuts the tunnel.", on.Server, newPort, on.Client, on.Client)
	far.Fixes = farFixes(on, newPort)
	near.Host, near.Interface = on.Client, on.clientInterface
	near.Detail = what + fmt.Sprintf("This is the near end's half of the fix: %s points its peer at port %s, where %s must listen "+
		"from the same moment (the other half, on %s): either half alone cuts the tunnel.", on.Client, newPort, on.Server, on.Server)
	near.Fixes = nearFixes(on, newPort)
	return []finding.Finding{far, near}
}

// farFixes move the far end's WireGuard off the throttled port; an
// interface whose name the probe did not learn gets the commands alone.
func farFixes(on *Result, newPort string) []finding.Fix {
	n := NewPort(on.WireGuardPort)
	desc := fmt.Sprintf("Move %s's WireGuard to listen port %s, together with the peer's endpoint on %s (the other half); then bench again",
		on.Server, newPort, on.Client)
	if on.serverInterface != "" {
		if r, err := remedy.WGListenPort(on.serverInterface, n, remedy.Unknown, ""); err == nil {
			return []finding.Fix{remedy.Fix(desc, r)}
		}
	}
	far := orWG(on.serverInterface)
	return []finding.Fix{{Description: desc,
		Commands: []string{shell.Join("wg", "set", far, "listen-port", newPort)},
		Config: []finding.ConfigSnippet{
			{Path: "/etc/wireguard/" + far + ".conf [Interface]", Lines: []string{"ListenPort = " + newPort}},
			{Path: "/etc/config/network (interface " + far + ") on OpenWrt", Lines: []string{"option listen_port '" + newPort + "'"}},
		}}}
}

// nearFixes point the near end's peer at the far end's new port; without
// the interface's name or the far end's key, the commands alone. Where the
// near end listens on the throttled port too (the run was sent to it,
// ToPort), its datagrams leave from that port, which a rule on "udp port"
// meets as well: its own listen port must move too (the far end learns it
// from the next authenticated packet, as WireGuard roams), in the same step
// as the endpoint (KindWGPortMove); by hand where the interface or the far
// end's key is unknown.
func nearFixes(on *Result, newPort string) []finding.Fix {
	out := nearEndpointFixes(on, newPort)
	if !on.ToPort {
		return out
	}
	if on.clientInterface != "" && on.serverKey != "" {
		// Both moves in one step the fix engine applies as the near half.
		desc := fmt.Sprintf("Move %s's own WireGuard to listen port %s (its datagrams leave from %d, which the rule meets as well) and point its peer at %s, "+
			"together with the new listen port on %s (the other half); then bench again", on.Client, newPort, on.WireGuardPort, endpoint(on.Addr, newPort), on.Server)
		if r, err := remedy.WGPortMove(on.clientInterface, NewPort(on.WireGuardPort), on.serverKey, endpoint(on.Addr, newPort), remedy.Unknown, ""); err == nil {
			return []finding.Fix{remedy.Fix(desc, r)}
		}
	}
	desc := fmt.Sprintf("By hand, at the same time: move %s's own WireGuard to listen port %s too: its datagrams leave from %d, "+
		"which the rule meets as well (doctor --fix moves the far end's port and this end's peer only)", on.Client, newPort, on.WireGuardPort)
	near := orWG(on.clientInterface)
	return append(out, finding.Fix{Description: desc,
		Commands: []string{shell.Join("wg", "set", near, "listen-port", newPort)},
		Config: []finding.ConfigSnippet{
			{Path: "/etc/wireguard/" + near + ".conf [Interface]", Lines: []string{"ListenPort = " + newPort}},
			{Path: "/etc/config/network (interface " + near + ") on OpenWrt", Lines: []string{"option listen_port '" + newPort + "'"}},
		}})
}

// nearEndpointFixes point the near end's peer at the far end's new port.
func nearEndpointFixes(on *Result, newPort string) []finding.Fix {
	ep := endpoint(on.Addr, newPort)
	desc := fmt.Sprintf("Point %s's peer at %s, together with the new listen port on %s (the other half); then bench again",
		on.Client, ep, on.Server)
	if on.clientInterface != "" && on.serverKey != "" {
		if r, err := remedy.WGPeerEndpoint(on.clientInterface, on.serverKey, ep, remedy.Unknown); err == nil {
			return []finding.Fix{remedy.Fix(desc, r)}
		}
	}
	near, key := orWG(on.clientInterface), on.serverKey
	if key == "" {
		key = "<the far end's public key>"
	}
	return []finding.Fix{{Description: desc,
		Commands: []string{shell.Join("wg", "set", near, "peer", key, "endpoint", ep)},
		Config: []finding.ConfigSnippet{
			{Path: "/etc/wireguard/" + near + ".conf [Peer] of " + on.Server.String(), Lines: []string{"Endpoint = " + ep}},
			{Path: "/etc/config/network (wireguard_" + near + " peer of " + on.Server.String() + ") on OpenWrt", Lines: []string{"option endpoint_port '" + newPort + "'"}},
		}}}
}

func wireGuardOwn(p Pair) finding.Finding {
	o := p.Other
	ports := "on a port of wgperf's own"
	ev := []finding.Evidence{
		finding.Evidence{Source: "iperf3", Key: "the tunnel (" + o.Direction + ")", Value: fmt.Sprintf("%.1f Mbit/s", p.TunnelMbit),
			Threshold: fmt.Sprintf("≥ %.0f%% of UDP outside", 100*CollapseShare)}.Of(p.TunnelMbit, finding.Mbits),
		finding.Evidence{Source: "iperf3 -u", Key: "UDP outside the tunnel, another port", Value: fmt.Sprintf("%.1f of %.1f Mbit/s (%.1f%% lost)", o.ArrivedMbit, o.OfferedMbit, 100*o.PathLoss)}.Of(o.ArrivedMbit, finding.Mbits),
	}
	if on := p.OnPort; on != nil {
		ports += " and with WireGuard's port " + strconv.Itoa(on.WireGuardPort)
		ev = append(ev, finding.Evidence{Source: on.portSource(), Key: "UDP outside the tunnel, WireGuard's port",
			Value: fmt.Sprintf("%.1f of %.1f Mbit/s (%.1f%% lost)", on.ArrivedMbit, on.OfferedMbit, 100*on.PathLoss)}.Of(on.ArrivedMbit, finding.Mbits))
	} else {
		ev = append(ev, finding.Evidence{Source: "wgperf doctor", Key: "UDP with WireGuard's port", Value: "not measured: " + p.NoPort})
	}
	return finding.Finding{
		ID: catalog.WGSpecificCollapse, Severity: finding.Warning, Host: o.sender(), Interface: o.SenderInterface,
		Title: fmt.Sprintf("The tunnel collapses where UDP outside it does not (%s): %.1f Mbit/s through it, %.1f of UDP arrived %s",
			o.Direction, p.TunnelMbit, o.ArrivedMbit, ports),
		Detail: "No UDP run outside the tunnel reproduces the collapse, so this is not a policer or a port throttle: something treats " +
			"WireGuard's packets apart (their size or fragments, the handshake, the implementation at either end). Capture both ends.",
		Evidence: ev,
		Fixes: []finding.Fix{{
			Description: "Capture the tunnel's packets on both ends during a transfer and compare what left with what arrived (sizes, fragments, gaps)",
			Commands:    []string{shell.Join("tcpdump", "-ni", "any", "-c", "2000", "-w", "wg.pcap", "host", o.Addr, "and", "udp")},
		}},
	}
}

func orWG(iface string) string {
	if iface == "" {
		return "wg0"
	}
	return iface
}

// endpoint is addr:port, an IPv6 address in brackets.
func endpoint(addr, port string) string {
	for _, c := range addr {
		if c == ':' {
			return "[" + addr + "]:" + port
		}
	}
	return addr + ":" + port
}

// portSource names how the run carried WireGuard's port, for evidence.
func (r *Result) portSource() string {
	if r.ToPort {
		return fmt.Sprintf("iperf3 -u to port %d (nft rewrite)", r.WireGuardPort)
	}
	return fmt.Sprintf("iperf3 -u --cport %d", r.WireGuardPort)
}

// receiver is the host that received the run's datagrams.
func (r *Result) receiver() target.Spec {
	if r.Direction == bench.Download {
		return r.Client
	}
	return r.Server
}
