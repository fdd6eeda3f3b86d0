package doctor

import (
	"fmt"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// This file is doctor's side of a tunnel that runs through a hub it was not
// told about: the client holds no peer for the server, one of its peers'
// AllowedIPs carries the server's tunnel address (a road-warrior hub, a
// site that forwards between spokes). The tunnel is measured end to end;
// each leg's underlay needs an iperf3 server on the hub, so without the hub
// as a target (--via) the ratio is not judged, and the report says so and
// how to give it. A hub's other peers (its offline road warriors) are not
// the measured tunnel's causes (aboutThisTunnel).

// HubPath is the hub a tunnel runs through, as doctor found it.
type HubPath struct {
	discover.Hub
	// Measured says whether the hub is a target (--via): each leg's
	// underlay and the hub's CPU were measured.
	Measured bool `json:"measured"`
}

// hubFound records a hub that discovery found between the ends.
func (r *Report) hubFound(c *Config, ep discover.Endpoints) {
	if !ep.Hub.Found() {
		return
	}
	r.Hub = &HubPath{Hub: ep.Hub, Measured: len(c.Via) > 0}
	if r.Hub.Measured {
		return
	}
	r.Threshold = "not applied: " + r.Hub.line() + "; each leg's underlay needs the hub as a target"
	r.NotJudged = append(r.NotJudged, "throughput against the underlay: "+r.Hub.line()+
		", so the link under the tunnel is two legs (client → hub, hub → server) that end on the hub; give it with --via "+
		r.Hub.viaExample()+" to measure each leg and the hub's CPU")
}

// line names the hub as the text shows it: its endpoint and key.
func (h HubPath) line() string {
	at := "whose endpoint the client does not hold (it dials in)"
	if h.Endpoint != "" {
		at = "at " + shell.Terminal(h.Endpoint)
	}
	s := fmt.Sprintf("the tunnel runs through a hub %s (the client's peer %s, AllowedIPs %s)", at, shortKey(h.PublicKey), shell.Terminal(h.Allowed))
	if h.ServerKey != "" && !h.Same() {
		s += fmt.Sprintf("; the server's way back is its peer %s, another key", shortKey(h.ServerKey))
	}
	return s
}

// viaExample is the --via a user would type for this hub.
func (h HubPath) viaExample() string {
	if a := h.Addr(); strings.Contains(a, ":") {
		return "ssh:root@[" + shell.Terminal(a) + "]"
	} else if a != "" {
		return "ssh:root@" + shell.Terminal(a)
	}
	return "ssh:root@HUB"
}

// unmeasuredHub says whether the path runs through a hub whose legs were
// not measured: nothing to judge the tunnel's rate against.
func (r *Report) unmeasuredHub() bool { return r.Hub != nil && !r.Hub.Measured }

// shortKey is a public key as the text names it (finding.ShortKey), its
// foreign text escaped.
func shortKey(k string) string { return shell.Terminal(finding.ShortKey(k)) }

// aboutThisTunnel leaves out, once the bench crossed the tunnel, the stale
// handshakes of the ends' peers: the benched peer had a session, so they
// are other peers' (a hub's offline road warriors), reported in Findings and
// the text but neither a cause of this tunnel's rate nor of its status.
func (r *Report) aboutThisTunnel(fs []finding.Finding) []finding.Finding {
	m := r.Measured
	if !m.Benched || r.Unreachable != nil || (m.Up.Tunnel <= 0 && m.Down.Tunnel <= 0) {
		r.otherPeers = nil
		return fs
	}
	var out []finding.Finding
	r.otherPeers = nil
	for _, f := range fs {
		if f.ID == catalog.WGHandshakeStale {
			r.otherPeers = append(r.otherPeers, f)
			continue
		}
		out = append(out, f)
	}
	return out
}
