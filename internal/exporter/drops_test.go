package exporter

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/probe/drops"
)

type fixedDrops struct {
	status drops.Status
	counts []drops.Count
}

func (f fixedDrops) Status() drops.Status { return f.status }
func (f fixedDrops) Snapshot(context.Context) (drops.Snapshot, error) {
	return drops.Snapshot{Counts: f.counts, Lost: 3}, nil
}
func (f fixedDrops) Close() error { return nil }

func TestDropMetrics(t *testing.T) {
	s := fixedDrops{status: drops.Status{Tier: drops.TierBTF}, counts: []drops.Count{
		{Reason: "SOCKET_RCVBUFF", Function: "__udp_enqueue_schedule_skb", Packets: 900},
		{Reason: "SOCKET_RCVBUFF", Function: "udp_queue_rcv_one_skb", Interface: "eth0", Packets: 100},
		{Reason: "NETFILTER_DROP", Function: "nf_hook_slow", Packets: 7},
	}}
	text := exposition(t, dropMetrics(context.Background(), s))
	for _, want := range []string{
		`wgperf_kernel_drops_total{reason="SOCKET_RCVBUFF"} 1000`,
		`wgperf_kernel_drops_total{reason="NETFILTER_DROP"} 7`,
		`wgperf_kernel_drops_uncounted_total 3`,
		`wgperf_kernel_drops_sampler_info{tier="btf",why=""} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %s in:\n%s", want, text)
		}
	}
	// The reason label is bounded, whatever a kernel names.
	var many []drops.Count
	for i := range maxDropReasons + 50 {
		many = append(many, drops.Count{Reason: fmt.Sprintf("reason %#x", 0x10000+i), Packets: 1})
	}
	ms := dropMetrics(context.Background(), fixedDrops{status: drops.Status{Tier: drops.TierBTF}, counts: many})
	if n := strings.Count(exposition(t, ms), "wgperf_kernel_drops_total{"); n != maxDropReasons+1 {
		t.Errorf("%d reason series, want %d (the rest as other)", n, maxDropReasons+1)
	}
	none := exposition(t, dropMetrics(context.Background(), drops.None("local", "not root")))
	if !strings.Contains(none, `wgperf_kernel_drops_sampler_info{tier="none",why="not root"} 1`) || strings.Contains(none, "kernel_drops_total") {
		t.Errorf("none:\n%s", none)
	}
	if dropMetrics(context.Background(), nil) != nil {
		t.Error("metrics without --collector.drops")
	}
}

func exposition(t *testing.T, ms []metric) string {
	t.Helper()
	fams, err := gather(ms)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range fams {
		b.Write(f.text)
	}
	return b.String()
}
