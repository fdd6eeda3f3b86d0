package doctor

import (
	"context"

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
