package doctor

import (
	"context"

	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/roaming"
)

// This file watches both ends' peers while the bench runs: the endpoint each
// end holds for the other's key, sampled every 2 s (less often on a slow host), shows two devices
// sharing one key (roaming.Findings), which no snapshot of a moment can.

// peerWatches are the bench's watches of both ends' tunnel interfaces.
type peerWatches []*roaming.Watch

// watchPeers starts a watch on each end whose tunnel interface is known.
func (r *Report) watchPeers(ctx context.Context, c *Config) peerWatches {
	var ws peerWatches
	if r.endpoints.ClientInterface != "" {
		ws = append(ws, roaming.Start(ctx, c.Client, r.endpoints.ClientInterface))
	}
	if r.endpoints.ServerInterface != "" {
		ws = append(ws, roaming.Start(ctx, c.Server, r.endpoints.ServerInterface))
	}
	return ws
}

// stop ends the watches and judges what they saw.
func (ws peerWatches) stop() []finding.Finding {
	var out []finding.Finding
	for _, w := range ws {
		out = append(out, roaming.Findings(w.Host, w.Interface, w.Stop())...)
	}
	return out
}

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
		if f.ID == check.WGHandshakeStale {
			r.otherPeers = append(r.otherPeers, f)
			continue
		}
		out = append(out, f)
	}
	return out
}
