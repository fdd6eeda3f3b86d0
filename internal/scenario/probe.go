package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/discover"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/icmpburst"
	"github.com/wgperf/wgperf/internal/probe/mtu"
	"github.com/wgperf/wgperf/internal/probes"
	"github.com/wgperf/wgperf/internal/target"
)

// flowCount is more connections than the conntrack-full scenario's table holds.
const flowCount = 600

// flowsDeadline bounds how long the load may take to fill B's conntrack
// table: a round of flows lands in milliseconds on an idle machine.
const flowsDeadline = 15 * time.Second

// probe runs one active measurement and returns the findings it proves and a
// one-line summary for the story.
func (r *runner) probe(ctx context.Context, p Probe) ([]finding.Finding, string, error) {
	switch p {
	case ProbeMTU:
		mc := r.tunnel().MTU()
		// B pings back (the black hole is located) and sends the return's MSS steps.
		mc.BackAddr, mc.BackTunnelAddr = r.lab.Node("a").UnderlayAddr, r.lab.Node("a").TunnelAddr
		res, err := mtu.Run(ctx, mc)
		if err != nil {
			return nil, "", err
		}
		r.res.MTU = res
		return res.Findings, res.Summary(), nil
	case ProbeICMPBurst:
		// mwan3-style health checks: the next hop and the far endpoint.
		res, err := icmpburst.Run(ctx, r.tunnel().ICMPBurst([]string{"198.51.100.1", r.lab.Node("b").UnderlayAddr}, ""))
		if err != nil {
			return nil, "", err
		}
		return res.Findings, res.Summary(), nil
	case ProbeFlows:
		summary, err := r.fillConntrack(ctx)
		return nil, summary, err
	}
	return nil, "", fmt.Errorf("unknown probe %q", p)
}

// fillConntrack sends rounds of flowCount new UDP flows from A to B through
// the tunnel until B's conntrack table is full, as a hub's clients keep
// coming, so doctor looks at the table the load fills. One round fills it on
// an idle machine, but it is a burst of 600 datagrams in some 40 ms: in a CI
// run beside a guest under TCG, doctor found B's table short of 80% and no
// entry refused yet. The unanswered flows then hold the table for their 30 s.
func (r *runner) fillConntrack(ctx context.Context) (string, error) {
	b := r.lab.Target("b")
	deadline := time.Now().Add(flowsDeadline)
	for sent := flowCount; ; sent += flowCount {
		if _, err := r.lab.Target("a").Run(ctx, r.opts.Exe, "lab", "_flows", "--to", r.lab.Node("b").TunnelAddr, "--count", strconv.Itoa(flowCount)); err != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(200 * time.Millisecond): // the datagrams cross both WireGuard ends
		}
		count, err := readProcInt(ctx, b, "/proc/sys/net/netfilter/nf_conntrack_count")
		if err != nil {
			return "", err
		}
		limit, err := readProcInt(ctx, b, "/proc/sys/net/netfilter/nf_conntrack_max")
		if err != nil {
			return "", err
		}
		if count >= limit {
			return fmt.Sprintf("%d new UDP flows from A to B through the tunnel filled B's conntrack table (%d entries)", sent, limit), nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the conntrack table on %s holds %d of %d entries after %d new UDP flows through the tunnel: the flows do not arrive", b, count, limit, sent)
		}
	}
}

// readProcInt reads a number from a /proc file on t.
func readProcInt(ctx context.Context, t target.Target, path string) (int, error) {
	raw, err := t.ReadFile(ctx, path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		return 0, fmt.Errorf("%s on %s: %w", path, t, err)
	}
	return n, nil
}

// tunnel is the lab's tunnel from A to B as the probes see it.
func (r *runner) tunnel() probes.Tunnel {
	return probes.Tunnel{Client: r.lab.Target("a"), Server: r.lab.Target("b"), Endpoints: discover.Endpoints{
		TunnelAddr: r.lab.Node("b").TunnelAddr, UnderlayAddr: r.lab.Node("b").UnderlayAddr,
		ClientInterface: r.lab.WGInterface("a"), ServerInterface: r.lab.WGInterface("b")}}
}
