package scenario

import (
	"context"
	"fmt"
	"strconv"

	"github.com/wgperf/wgperf/internal/finding"
)

// flowCount is more connections than the conntrack-full scenario's table holds.
const flowCount = 600

// probe runs one active measurement and returns the findings it proves and a
// one-line summary for the story.
func (r *runner) probe(ctx context.Context, p Probe) ([]finding.Finding, string, error) {
	switch p {
	case ProbeFlows:
		_, err := r.lab.Target("a").Run(ctx, r.opts.Exe, "lab", "_flows", "--to", r.lab.Node("b").TunnelAddr, "--count", strconv.Itoa(flowCount))
		if err != nil {
			return nil, "", err
		}
		return nil, fmt.Sprintf("%d new UDP flows from A to B through the tunnel", flowCount), nil
	}
	return nil, "", fmt.Errorf("unknown probe %q", p)
}
