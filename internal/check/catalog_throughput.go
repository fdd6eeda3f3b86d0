package check

import (
	"fmt"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// throughputEntries add to internal/catalog/throughput.go what reports each finding
// and how it is fixed (joined in Catalog, catalog.go):
// What the bench measures: the ratio, asymmetry, collapses, caps, queues and TCP's own limits.
var throughputEntries = []Entry{
	{
		ID: catalog.LatencyBufferbloat,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Pings the far end's tunnel and underlay addresses
from the client, five a second, for two seconds before any run and all
through every run's measured seconds. When the single-stream run in a
direction adds more than 30 ms to the tunnel's median round trip, the queue
that grew is located by the underlay's pings of the same moment: as delayed
(half as much or more), it is on the path (a bottleneck's deep buffer); near
idle, it is at the tunnel's ends. 30 ms is where the common bufferbloat
grades leave A for B. Fix: cake (or htb with fq_codel) shaping the sender's
uplink, or its WireGuard interface, at 90% of the measured rate.`}},
		Remedies: []Remedy{
			{Kind: remedy.KindSQM, Params: map[string]Values{"device": Named("the sender's uplink or WireGuard interface").On(sqmDevice), "bandwidth": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "an upload through wg0 adds 180 ms to the round trip, and pings outside the tunnel wait as long: eth0's modem holds the queue",
			Fixes: func() []finding.Fix {
				r, err := remedy.SQM("eth0", "18mbit")
				return fixes("Shape eth0's egress at 18 Mbit/s (90% of the 20.4 Mbit/s measured) with cake, or htb + fq_codel where the kernel has no cake", r, err)
			},
		},
	},
	{
		ID:    catalog.TCPBuffersSmall,
		Check: &buffersSmall,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench and doctor", Doc: `The bench reads its own
flows' TCP state with ss -tin at both ends, three times during each tunnel TCP
run. A single stream that waited at least 20% of its busy time for the
receiver's window (rwnd_limited), below the path's BDP (the underlay's rate
of the same direction times the bench's round trip), where the receiver's
tcp_rmem maximum is under twice that BDP, reports this finding on the
receiver; one that waited as long for its own send buffer (sndbuf_limited)
with tcp_wmem under twice the BDP, on the sender. Recorded in the lab
(100 Mbit/s, 20 ms): tcp_rmem max 256 KiB held a flow to 54 Mbit/s,
rwnd_limited 37%; tcp_wmem max 128 KiB to 40 Mbit/s, sndbuf_limited 72%.`}},
		Remedies: []Remedy{
			{Kind: remedy.KindSysctl, Params: map[string]Values{"key": OneOf("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"), "value": Triple(1<<20, maxInt, 1<<20).On(raises)}},
		},
		Example: Example{
			Host: fmt.Sprintf("net.ipv4.tcp_rmem is \"4096 131072 1048576\" and the path is %s", Options{}.pathDescription()),
			Fixes: func() []finding.Fix {
				want := tcpBufferWant(Options{}.bdpBytes())
				return sysctlFix(fmt.Sprintf("Raise the receive buffer maximum to %s", mib(want)), "net.ipv4.tcp_rmem", fmt.Sprintf("4096 131072 %d", want))
			},
		},
	},
	{
		ID:    catalog.TCPCongestionControl,
		Check: &congestionControl,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench and doctor's long run", Doc: `The bench reads each single-stream tunnel run's
sender algorithm, retransmits and congestion window: a CUBIC or Reno window
that swings at least 2x, or stays small while the tunnel falls short of the
underlay, reports this finding (the tuning guide's "bouncing around, or
narrowing significantly"); so does a window that stays where the path's loss
holds it (at least 0.5% of the segments the sender sent through the tunnel and
outside it retransmitted, the window within twice the Mathis window), whatever
the ratio: on a lossy path the underlay's own CUBIC crawls too. Too few
retransmits to tell are sampled again, tunnel and underlay. Doctor's 30-second run proves it where a short run
cannot: a CUBIC or Reno stream that retransmitted while 4 streams through the
same tunnel carried at least 2.5 times its rate was held back by its own
window, not by the path, and its collapse cycles are the algorithm's answer to
loss (recorded on a 2%-loss WAN: 4.9 times), so no rate cap is swept for them.
A knee caps the streams together (recorded: 1.7 times).`}},
		Remedies: []Remedy{
			{Kind: remedy.KindCongestion, Params: map[string]Values{"algorithm": OneOf("bbr")}},
		},
		Example: Example{
			Host: "a Linux 6.1 sender using cubic, with tcp_bbr available",
			Fixes: func() []finding.Fix {
				r, err := remedy.Congestion("bbr", false, "6.1.0")
				return fixes("Switch TCP congestion control to BBR", r, err)
			},
		},
	},
	{
		ID:    catalog.ThroughputAsymmetric,
		Cross: &crossDelivery,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)",
			Doc: `Compares the tunnel's two directions at the same stream count: the slow
one below half of the fast one is a warning, unless the underlay is about as
lopsided (an ADSL line's nature, not the tunnel's fault). One direction far
slower than the other points at something one-sided: a black hole that way, a
stale endpoint route on one end, a receiver dropping UDP.`}},
		Example: Example{
			Host:  "ssh:root@site-a sends to ssh:root@site-b and loses 5%",
			Fixes: func() []finding.Fix { return []finding.Fix{deliveryFix("ssh:root@site-a", "ssh:root@site-b")} },
		},
	},
	{
		ID: catalog.ThroughputCollapseKnee,
		Probes: []Source{{Kind: "probe", Name: "wgperf shape-sweep (and doctor, after a long run saw collapse cycles of the tunnel's own)", Doc: `Caps the sender's tunnel interface with tbf at several
rates below the level the uncapped run climbed to (90, 80 and 70% of it) and
holds each for 60 s or three collapse cycles, whichever is longer (--short:
two cycles, which can miss a slower collapse). Per cap it reports the mean,
the slowest second, retransmits and collapses. A cap that holds steady
(per-second rates within 10%, no collapse) and carries more than the uncapped
mean is the knee's fix; a steady cap that carries less, but at least 75% of
the mean, is a trade-off the finding names: --prefer steady (the default)
proposes it, --prefer mean keeps no cap. Cycles the underlay shows too are the
path's, and no cap is swept. The case's sweep: uncapped, 165 Mbit/s on average,
swinging between 180 and 90 every 15-20 s as the receiver's one CPU saturated
with interrupts; capped at 150 Mbit/s, 142 sustained for 60 s (200 held only
for a while). They took the steady 142 over the mean of 165 that collapsed,
for streaming. Fix: that cap.`}},
		Remedies: []Remedy{
			{Kind: remedy.KindTBFCap, Params: map[string]Values{"device": Named("the sender's tunnel interface").On(onWireGuard), "rate": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "wg0 on the sender: 165 Mbit/s on average uncapped, collapsing every 15-20 s; capped at 150 Mbit/s, 142 steady for 60 s",
			Fixes: func() []finding.Fix {
				r, err := remedy.TBF("wg0", "150mbit")
				return fixes("Cap wg0 at 150 Mbit/s, just below the knee", r, err)
			},
		},
	},
	{
		ID: catalog.ThroughputOscillation,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench, doctor's long run", Doc: `Reads iperf3's per-second intervals: throughput that
climbs, collapses and recovers again and again (at least two falls below 60%
of the run's high level, and a spread of the per-second rate a steady link
does not show). What saturates is not known from the rate alone: in the case,
the receiver's userspace WireGuard handled the network interrupts on one CPU,
which saturated and let the queue overflow every 15-20 s; the path itself may
cycle too, which doctor's long run checks by running the underlay alone (then
no cap helps). Fix: the sweep (wgperf shape-sweep, which doctor runs when the
cycles are the tunnel's own) that holds caps below the knee for several cycles
each; a cap is proposed only by the sweep that showed it holds
(throughput.collapse-knee).`}},
		Example: Example{
			Host: "wg0 on the sender swings between 180 and 90 Mbit/s every 15-20 s",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "Hold caps below the knee for several cycles each and see whether one keeps the tunnel steady, and at what cost",
					Commands:    []string{"wgperf shape-sweep --client ssh:root@site-a --server ssh:root@site-b --caps 162,144,126"},
				}}
			},
		},
	},
	{
		ID: catalog.ThroughputShaperCap,
		Probes: []Source{{Kind: "probe", Name: "wgperf doctor", Doc: `Reads the root qdisc of each end's tunnel interface
(tc -j qdisc show: tbf's rate, cake's bandwidth; an htb's root class's ceil
from tc class show) and, after its bench, compares it with both runs in the
direction that end sends: a tunnel that reached 80% of the cap while the
underlay carried 1.15 times the cap or more is held by the cap. The case:
the remote users' tunnel was capped at 150 Mbit/s on wg0 against collapse
cycles; once its UDP buffers were fixed the path carried about 450, and the
cap was raised to 450. Fix: raise the cap to the path's rate, or remove it.`}},
		Remedies: []Remedy{
			{Kind: remedy.KindTBFCap, Params: map[string]Values{"device": Named("the sender's tunnel interface").On(onWireGuard), "rate": Mbit(1, 1000000)}},
		},
		Example: Example{
			Host: "wg0 on the sender capped by tbf at 150 Mbit/s; the tunnel carried 142 and the underlay 452",
			Fixes: func() []finding.Fix {
				return shaperCapFixes("wg0", facts.Shaper{Qdisc: "tbf", RateMbit: 150}, 452)
			},
		},
	},
	{
		ID: catalog.ThroughputTunnelRatio,
		Probes: []Source{{Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Runs iperf3 through the tunnel and around it (to the
peer's endpoint address), both directions, single and parallel streams. A
healthy single-hop tunnel carries at least 90% of the link under it (the
tuning guide's rule; 50% of the worst hop over several hops). Below that it is
a symptom: wgperf doctor ranks the causes the other findings name.`}},
		Example: Example{
			Host: "the tunnel from ssh:root@site-a to ssh:root@site-b carries 40% of the underlay",
			Fixes: func() []finding.Fix {
				return []finding.Fix{{
					Description: "Rank the causes on both ends",
					Commands:    []string{"wgperf doctor --client ssh:root@site-a --server ssh:root@site-b"},
				}}
			},
		},
	},
}
