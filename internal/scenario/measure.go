package scenario

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/probe/bench"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/target"
	"github.com/wgperf/wgperf/internal/verify"
)

// ecmpStreams spread over the tunnels: one flow takes one tunnel, and the
// layer-4 hash puts all of k flows on one of two tunnels with chance 2^(1-k)
// (1 in 8 for 4 flows, 1 in 32768 for 16).
const ecmpStreams = 16

// minECMPShare is the least share of the bytes each of n tunnels must carry
// for the spread to count, as a fraction of a fair share (1/n).
const minECMPShare = 0.5

// measureUnderlay is A to B's endpoint and back, around the tunnel (ECMP:
// the upload only, with parallel streams).
func (r *runner) measureUnderlay(ctx context.Context) (up, down float64, err error) {
	a, b, addr := r.lab.Target("a"), r.lab.Target("b"), r.lab.Node("b").UnderlayAddr
	if r.sc.ECMP > 1 {
		up, _, err = r.parallel(addr).Run(ctx)
		return up, 0, err
	}
	if n := r.sc.Lab.SilentHopMTU; n > 0 {
		// A hop that drops large packets without a word stalls the hosts' own
		// TCP too (iperf3's results over its control connection included):
		// the path's rate is measured with packets that fit it, the sender
		// into the hop on an uplink MTU of the hop's size for these runs.
		sender := map[bool]string{false: "a", true: "b"}[r.sc.Lab.SilentHopToA]
		t := r.lab.Target(sender)
		was, err := t.Run(ctx, "cat", "/sys/class/net/eth0/mtu")
		if err != nil {
			return 0, 0, err
		}
		mtu := strings.TrimSpace(string(was))
		if _, err := strconv.Atoi(mtu); err != nil {
			return 0, 0, fmt.Errorf("%s eth0 MTU %q: %w", sender, mtu, err)
		}
		if _, err := t.Run(ctx, "ip", "link", "set", "dev", "eth0", "mtu", strconv.Itoa(n)); err != nil {
			return 0, 0, err
		}
		r.logf("underlay: %s's uplink at MTU %d for the baseline (the lab's silent hop drops larger packets)", sender, n)
		defer func() {
			if _, rerr := t.Run(context.WithoutCancel(ctx), "ip", "link", "set", "dev", "eth0", "mtu", mtu); rerr != nil && err == nil {
				err = rerr
			}
		}()
	}
	if up, err = r.iperf(ctx, a, b, addr, 1, false); err != nil {
		return 0, 0, err
	}
	down, err = r.iperf(ctx, a, b, addr, 1, true)
	return up, down, err
}

// measureTunnel runs "wgperf bench --quick" between the scenario's client and
// server (both directions) and returns its report and the single-stream rates
// through the tunnel (withUnderlay: with the underlay beside it, in the
// report). ECMP measures parallel flows to site B's network instead, which
// every tunnel routes.
func (r *runner) measureTunnel(ctx context.Context, withUnderlay bool) (rep *bench.Report, up, down float64, err error) {
	if r.sc.ECMP > 1 {
		before, err := r.tunnelTxBytes(ctx)
		if err != nil {
			return nil, 0, 0, err
		}
		var cost verify.Cost
		if up, cost, err = r.parallel(lab.SiteBLAN).Run(ctx); err != nil {
			return nil, 0, 0, err
		}
		r.logf("%d TCP streams to %s: %.1f Mbit/s, %s", ecmpStreams, lab.SiteBLAN, up, cost)
		after, err := r.tunnelTxBytes(ctx)
		if err != nil {
			return nil, 0, 0, err
		}
		r.res.TunnelShares = shares(before, after)
		return nil, up, 0, nil
	}
	client, server := orDefault(r.sc.Client, "a"), orDefault(r.sc.Server, "b")
	cfg := bench.Config{
		Client: r.lab.Target(client), Server: r.lab.Target(server),
		TunnelAddr:      r.lab.Node("b").TunnelAddr,
		UnderlayAddr:    r.lab.Node("b").UnderlayAddr,
		ClientInterface: r.lab.WGInterface(client), ServerInterface: r.lab.WGInterface(server),
		Quick: true, Seconds: r.opts.Seconds,
		// Lab nodes start iperf3 at once: a run this late has stalled.
		Timeout: time.Duration(1+r.opts.Seconds+8) * time.Second,
	}
	if r.sc.Server != "" {
		// LAN hosts have no underlay of their own: A measures that separately.
		cfg.TunnelAddr, cfg.UnderlayAddr = r.lab.Node(r.sc.Server).LANAddr, ""
	}
	if !withUnderlay {
		cfg.UnderlayAddr = ""
	}
	if rep, err = bench.Measure(ctx, cfg); err != nil {
		return nil, 0, 0, err
	}
	t := rep.Throughput()
	return rep, t.Up.Tunnel, t.Down.Tunnel, nil
}

// parallel is the ECMP scenario's measurement: ecmpStreams flows from A to
// addr, the one parallel run "fix ecmp --verify" makes too.
func (r *runner) parallel(addr string) verify.Parallel {
	return verify.Parallel{Client: r.lab.Target("a"), Server: r.lab.Target("b"), Addr: addr, Streams: ecmpStreams, Seconds: r.opts.Seconds}
}

// iperf runs one TCP test and returns the receiver's rate in Mbit/s. A black
// hole can keep iperf3 from finishing: the run is bounded.
func (r *runner) iperf(ctx context.Context, client, server target.Target, addr string, streams int, reverse bool) (float64, error) {
	res, err := iperf.Run(ctx, client, server, iperf.Test{Addr: addr, Seconds: r.opts.Seconds, Omit: 1,
		Parallel: streams, Reverse: reverse, Timeout: time.Duration(r.opts.Seconds+15) * time.Second})
	if err != nil {
		return 0, fmt.Errorf("iperf3 %s → %s: %w", client, addr, err)
	}
	return res.ReceivedMbit, nil
}

// tunnelTxBytes reads what A has sent into each of the lab's tunnels so far:
// the ECMP spread is proven from the tunnels' own counters, not inferred from
// the total.
func (r *runner) tunnelTxBytes(ctx context.Context) ([]uint64, error) {
	a := r.lab.Target("a")
	var out []uint64
	for _, dev := range r.ecmpDevices() {
		b, err := a.ReadFile(ctx, "/sys/class/net/"+dev+"/statistics/tx_bytes")
		if err != nil {
			out = append(out, 0) // not made yet: before the fix
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s tx_bytes: %w", dev, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// shares turns two counter readings into each tunnel's share of the bytes
// sent between them.
func shares(before, after []uint64) []float64 {
	var total uint64
	deltas := make([]uint64, len(after))
	for i := range after {
		if i < len(before) && after[i] >= before[i] {
			deltas[i] = after[i] - before[i]
		} else {
			deltas[i] = after[i] // a tunnel that did not exist before
		}
		total += deltas[i]
	}
	out := make([]float64, len(deltas))
	for i, d := range deltas {
		if total > 0 {
			out[i] = float64(d) / float64(total)
		}
	}
	return out
}
