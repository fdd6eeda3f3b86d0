package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/wgperf/wgperf/internal/lab"
	"github.com/wgperf/wgperf/internal/target"
)

// measureTunnel is the upload from the client node through the tunnel to B
// (ECMP: parallel flows to site B's network, which every tunnel routes).
func (r *runner) measureTunnel(ctx context.Context) (float64, error) {
	addr, parallel := r.lab.Node("b").TunnelAddr, 1
	if r.sc.Server != "" {
		addr = r.lab.Node(r.sc.Server).LANAddr
	}
	if r.sc.ECMP > 1 {
		addr, parallel = lab.SiteBLAN, 4
	}
	mbit, err := r.iperf(ctx, r.lab.Target(orDefault(r.sc.Client, "a")), addr, parallel)
	if err != nil {
		return 0, fmt.Errorf("tunnel measurement: %w", err)
	}
	return mbit, nil
}

// measureUnderlay is the same upload from A to B's endpoint, around the tunnel.
func (r *runner) measureUnderlay(ctx context.Context) (float64, error) {
	parallel := 1
	if r.sc.ECMP > 1 {
		parallel = 4
	}
	mbit, err := r.iperf(ctx, r.lab.Target("a"), r.lab.Node("b").UnderlayAddr, parallel)
	if err != nil {
		return 0, fmt.Errorf("underlay measurement: %w", err)
	}
	return mbit, nil
}

// iperf runs one iperf3 TCP test and returns the receiver's rate in Mbit/s. A
// black hole can keep iperf3 from ending cleanly: it is bounded, and a run that
// moved nothing counts as 0 rather than failing the scenario.
func (r *runner) iperf(ctx context.Context, client target.Target, addr string, parallel int) (float64, error) {
	secs := r.opts.Seconds
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs+15)*time.Second)
	defer cancel()
	out, err := client.Run(ctx, "iperf3", "-c", addr, "-J", "-t", strconv.Itoa(secs), "-O", "1",
		"-P", strconv.Itoa(parallel), "--connect-timeout", "3000")
	var res struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		if err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("iperf3 output: %w", jerr)
	}
	if res.Error != "" && res.End.SumReceived.BitsPerSecond == 0 {
		return 0, nil
	}
	return res.End.SumReceived.BitsPerSecond / 1e6, nil
}
