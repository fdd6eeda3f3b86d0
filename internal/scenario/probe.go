package scenario

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// flowCount is more connections than the conntrack-full scenario's table holds.
const flowCount = 600

// flowsDeadline bounds how long the load may take to fill B's conntrack
// table: a round of flows lands in milliseconds on an idle machine.
const flowsDeadline = 15 * time.Second

// load puts the scenario's workload on the network before doctor looks
// (ProbeFlows: many new flows through the tunnel), as its users would; the
// targeted probes are doctor's plan's, never played here.
func (r *runner) load(ctx context.Context) error {
	if !slices.Contains(r.sc.Probes, ProbeFlows) {
		return nil
	}
	summary, err := r.fillConntrack(ctx)
	if err != nil {
		return fmt.Errorf("load %s: %w", ProbeFlows, err)
	}
	r.logf("load %s: %s", ProbeFlows, summary)
	return nil
}

// recheck plays again, after the fix, the scenario's targeted probes as
// doctor's plan ran them on the broken lab (doctor.Report.Replay: the same
// steps, targets and directions) and returns their headlines and what they
// prove.
func (r *runner) recheck(ctx context.Context) ([]ProbeResult, []finding.Finding, error) {
	var names []catalog.Probe
	for _, p := range r.sc.Probes {
		if targeted(p) {
			names = append(names, catalog.Probe(p))
		}
	}
	runs, found, err := r.doctorReport.Replay(ctx, names)
	var results []ProbeResult
	for _, run := range runs {
		if run.Error == "" {
			results = append(results, ProbeResult{Probe(run.Probe), run.Summary})
			r.logf("recheck %s: %s", run.Probe, run.Summary)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("recheck %w", err)
	}
	return results, found, nil
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
