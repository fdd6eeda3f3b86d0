package exporter

import (
	"context"
	"time"

	"github.com/wgperf/wgperf/internal/probe/drops"
)

// The kernel's drops by reason (--collector.drops, off by default): counted
// by the drop sampler (wgperf drops) since the exporter started.
var (
	descKernelDrops     = desc("kernel_drops_total", "Packets the kernel dropped since the exporter started, by drop reason (enum skb_drop_reason as the running kernel names it); with --collector.drops.", "reason")
	descKernelDropsLost = desc("kernel_drops_uncounted_total", "Drops the sampler had no room to tell apart (its map is bounded); with --collector.drops.")
	descKernelDropsTier = desc("kernel_drops_sampler_info", "How drops are sampled: tier btf, tracepoint or none (then why says why); with --collector.drops.", "tier", "why")
)

// maxDropReasons bounds the reason label's values: a kernel names about 130
// reasons; a subsystem's own reasons beyond that share reason="other".
const maxDropReasons = 200

// dropMetrics are the sampler's counts at the moment of a scrape.
func dropMetrics(ctx context.Context, s drops.Sampler) []metric {
	if s == nil {
		return nil
	}
	st := s.Status()
	out := []metric{constMetric(descKernelDropsTier, gauge, 1, st.Tier, st.Why)}
	if st.Tier == drops.TierNone {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return out
	}
	var other float64
	for i, c := range drops.ByReason(snap.Counts) {
		if i >= maxDropReasons {
			other += float64(c.Packets)
			continue
		}
		out = append(out, constMetric(descKernelDrops, counter, float64(c.Packets), c.Reason))
	}
	if other > 0 {
		out = append(out, constMetric(descKernelDrops, counter, other, "other"))
	}
	return append(out, constMetric(descKernelDropsLost, counter, float64(snap.Lost)))
}
