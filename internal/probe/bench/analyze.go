// Package bench measures a WireGuard tunnel against the link under it with
// iperf3 (the tuning guide's method): tunnel and underlay, upload and download, one
// stream and several, each after an --omit warm-up. Host counters sampled on
// both ends around every run say why a slow run was slow.
//
// Analyze is a pure function over the results; Measure is the thin I/O shell.
package bench

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/target"
)

// Paths and directions a run can take.
const (
	PathTunnel   = "tunnel"
	PathUnderlay = "underlay"
	Upload       = "upload"   // client sends
	Download     = "download" // server sends (iperf3 --reverse)
)

// Thresholds (from the tuning guide and the relay case).
const (
	SingleHopRatio      = 0.9  // tunnel ≥ 90% of the underlay on one hop
	MultiHopRatio       = 0.5  // ≥ 50% of the worst hop with two or three hops
	AsymmetryRatio      = 0.5  // slow direction below half the fast one
	CPUSaturatedPercent = 90.0 // a CPU this busy during a tunnel run is the ceiling
	// CollapseFraction: an interval below this share of the run's high level is
	// a collapse; OscillationCV is the spread a collapsing run shows at least.
	CollapseFraction = 0.6
	OscillationCV    = 0.2
	// CwndSwing is the max/min ratio of a single stream's cwnd that counts as oscillating.
	CwndSwing = 2.0
)

// Spec is one planned run.
type Spec struct {
	Path      string  `json:"path"`      // tunnel or underlay
	Direction string  `json:"direction"` // upload or download
	Streams   int     `json:"streams"`
	UDPMbit   float64 `json:"udp_mbit,omitempty"` // a UDP control run at this rate
}

func (s Spec) String() string {
	kind := fmt.Sprintf("%d stream", s.Streams)
	if s.Streams > 1 {
		kind += "s"
	}
	if s.UDPMbit > 0 {
		kind = fmt.Sprintf("UDP %g Mbit/s", s.UDPMbit)
	}
	return fmt.Sprintf("%s %s, %s", s.Path, s.Direction, kind)
}

// Run is one finished (or failed) iperf3 run with the host counters around it.
type Run struct {
	Spec
	Addr   string        `json:"addr"`
	Result *iperf.Result `json:"result,omitempty"` // nil when the run failed
	Error  string        `json:"error,omitempty"`
	Stats  Stats         `json:"stats"`
	Client HostDelta     `json:"client"`
	Server HostDelta     `json:"server"`
	// Notes attribute a slow run to what the counters saw.
	Notes []string `json:"notes,omitempty"`
}

// Stats summarise a run's measured (non-omitted) intervals.
type Stats struct {
	Mbit        float64 `json:"mbit"`
	Retransmits int64   `json:"retransmits"`
	CwndMin     int64   `json:"cwnd_min,omitempty"` // bytes, over all streams and intervals
	CwndMedian  int64   `json:"cwnd_median,omitempty"`
	CwndMax     int64   `json:"cwnd_max,omitempty"`
	// CV is the coefficient of variation of the per-interval rate (stddev/mean).
	CV float64 `json:"cv"`
	// Collapses counts drops from the run's high level to below CollapseFraction of it.
	Collapses int `json:"collapses"`
	// CwndSwing is max/min of the congestion window of single-stream TCP runs.
	CwndSwing   float64 `json:"cwnd_swing,omitempty"`
	LostPercent float64 `json:"lost_percent,omitempty"`
	JitterMs    float64 `json:"jitter_ms,omitempty"`
}

// Cell compares tunnel and underlay for one direction and stream count.
type Cell struct {
	Direction    string  `json:"direction"`
	Streams      int     `json:"streams"`
	TunnelMbit   float64 `json:"tunnel_mbit"`
	UnderlayMbit float64 `json:"underlay_mbit"`
	Ratio        float64 `json:"ratio"`
	Expected     float64 `json:"expected"`
	OK           bool    `json:"ok"`
}

// Report is a whole bench: what was measured, the comparison and the findings.
// --json prints it; the HTML report plots Runs[].Result.Intervals.
type Report struct {
	Client          string            `json:"client"`
	Server          string            `json:"server"`
	TunnelAddr      string            `json:"tunnel_addr"`
	UnderlayAddr    string            `json:"underlay_addr,omitempty"`
	ClientInterface string            `json:"client_interface,omitempty"` // WireGuard interface on the client
	ServerInterface string            `json:"server_interface,omitempty"`
	Hops            int               `json:"hops"` // WireGuard hops between client and server (1 unless told)
	Omit            int               `json:"omit_secs"`
	Seconds         int               `json:"time_secs"`
	Runs            []Run             `json:"runs"`
	Cells           []Cell            `json:"cells"`
	Findings        []finding.Finding `json:"findings"`
	Elapsed         float64           `json:"elapsed_secs"`
}

// Expected is the tunnel/underlay ratio a healthy setup reaches.
func (r *Report) Expected() float64 {
	if r.Hops > 1 {
		return MultiHopRatio
	}
	return SingleHopRatio
}

// Analyze fills in Stats, Notes, Cells and Findings from the runs. It is pure:
// calling it twice gives the same report.
func Analyze(r *Report) {
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Result != nil {
			run.Stats = Summarise(run.Result)
		}
		run.Notes = notes(run)
	}
	r.Cells = cells(r)
	var fs []finding.Finding
	fs = append(fs, ratioFindings(r)...)
	fs = append(fs, asymmetryFindings(r)...)
	fs = append(fs, oscillationFindings(r)...)
	fs = append(fs, congestionFindings(r)...)
	fs = append(fs, hostFindings(r)...)
	finding.Sort(fs)
	r.Findings = fs
}

// Summarise computes a run's statistics from its measured intervals.
func Summarise(res *iperf.Result) Stats {
	st := Stats{Mbit: res.Mbit(), Retransmits: res.Retransmits, LostPercent: res.LostPercent, JitterMs: res.JitterMs}
	ivs := res.Measured()
	var rates []float64
	var cwnd []int64
	for _, iv := range ivs {
		// The last interval of a run is often a fraction of a second: its rate is noise.
		if iv.End-iv.Start < 0.5 {
			continue
		}
		rates = append(rates, iv.Mbit)
		cwnd = append(cwnd, iv.Cwnd...)
	}
	st.CV = cv(rates)
	st.Collapses = collapses(rates)
	if len(cwnd) > 0 {
		sort.Slice(cwnd, func(i, j int) bool { return cwnd[i] < cwnd[j] })
		st.CwndMin, st.CwndMax = cwnd[0], cwnd[len(cwnd)-1]
		st.CwndMedian = cwnd[len(cwnd)/2]
		if res.Streams <= 1 && st.CwndMin > 0 {
			st.CwndSwing = float64(st.CwndMax) / float64(st.CwndMin)
		}
	}
	return st
}

func cv(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean
}

// collapses counts how often the rate fell from the run's high level (its
// 90th percentile) to below CollapseFraction of it and later recovered or ended there.
func collapses(rates []float64) int {
	if len(rates) < 3 {
		return 0
	}
	sorted := append([]float64(nil), rates...)
	sort.Float64s(sorted)
	high := sorted[int(math.Ceil(0.9*float64(len(sorted))))-1]
	low := CollapseFraction * high
	n, down := 0, false
	for _, x := range rates {
		switch {
		case x < low && !down:
			n, down = n+1, true
		case x >= 0.85*high:
			down = false
		}
	}
	return n
}

func notes(run *Run) []string {
	var out []string
	if run.Error != "" {
		return []string{"run failed: " + run.Error}
	}
	recv, send := run.Server, run.Client
	if run.Direction == Download {
		recv, send = run.Client, run.Server
	}
	out = append(out, recv.Attribution("receiver")...)
	out = append(out, send.Attribution("sender")...)
	if run.Result != nil && run.Result.Protocol == "udp" && run.Result.LostPackets > 0 {
		out = append(out, fmt.Sprintf("receiver lost %s of %s datagrams (%.2f%%)",
			commas(run.Result.LostPackets), commas(run.Result.Packets), run.Result.LostPercent))
	}
	return out
}

func find(r *Report, path, dir string, streams int) *Run {
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Path == path && run.Direction == dir && run.Streams == streams && run.UDPMbit == 0 && run.Result != nil {
			return run
		}
	}
	return nil
}

func cells(r *Report) []Cell {
	var out []Cell
	seen := map[string]bool{}
	for _, run := range r.Runs {
		key := fmt.Sprint(run.Direction, run.Streams)
		if run.Path != PathTunnel || run.UDPMbit > 0 || run.Result == nil || seen[key] {
			continue
		}
		seen[key] = true
		u := find(r, PathUnderlay, run.Direction, run.Streams)
		if u == nil || u.Stats.Mbit <= 0 {
			continue
		}
		c := Cell{Direction: run.Direction, Streams: run.Streams, TunnelMbit: run.Stats.Mbit,
			UnderlayMbit: u.Stats.Mbit, Expected: r.Expected()}
		c.Ratio = c.TunnelMbit / c.UnderlayMbit
		c.OK = c.Ratio >= c.Expected
		out = append(out, c)
	}
	return out
}

// sender and receiver of a run, as target specs.
func (r *Report) sender(dir string) string {
	if dir == Download {
		return r.Server
	}
	return r.Client
}

func (r *Report) senderInterface(dir string) string {
	if dir == Download {
		return r.ServerInterface
	}
	return r.ClientInterface
}

func (r *Report) diagnoseFix() finding.Fix {
	return finding.Fix{
		Description: "Find the cause on both ends: collect and diagnose them",
		Commands:    []string{target.Quote("wgperf", "diagnose", "--host", r.Client, "--host", r.Server)},
	}
}

func (r *Report) mtuFix(dir string) finding.Fix {
	client, server := r.Client, r.Server
	if dir == Download {
		client, server = server, client
	}
	return finding.Fix{
		Description: "Rule out a PMTUD black hole in the slow direction: step the MSS through the tunnel",
		Commands:    []string{target.Quote("wgperf", "mtu", "--client", client, "--server", server)},
	}
}

func mbit(x float64) string { return fmt.Sprintf("%.1f Mbit/s", x) }

func ratioFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	for _, c := range r.Cells {
		if c.OK {
			continue
		}
		sev := finding.Warning
		if c.Ratio < c.Expected/2 {
			sev = finding.Critical
		}
		f := finding.Finding{
			ID: finding.ThroughputTunnelRatio, Severity: sev, Host: r.sender(c.Direction), Interface: r.senderInterface(c.Direction),
			Title: fmt.Sprintf("Tunnel %s (%s) reaches %.0f%% of the underlay: %s vs %s",
				c.Direction, streamsWord(c.Streams), 100*c.Ratio, mbit(c.TunnelMbit), mbit(c.UnderlayMbit)),
			Detail: fmt.Sprintf("A healthy WireGuard tunnel carries at least %.0f%% of the link under it; the difference is lost to something this host or the path does to tunnel packets.", 100*c.Expected),
			Evidence: []finding.Evidence{
				{Source: "iperf3", Key: fmt.Sprintf("tunnel %s %s", c.Direction, streamsWord(c.Streams)), Value: mbit(c.TunnelMbit)},
				{Source: "iperf3", Key: fmt.Sprintf("underlay %s %s", c.Direction, streamsWord(c.Streams)), Value: mbit(c.UnderlayMbit)},
				{Source: "iperf3", Key: "tunnel/underlay", Value: fmt.Sprintf("%.2f", c.Ratio), Threshold: fmt.Sprintf(">= %.2f", c.Expected)},
			},
			Fixes: []finding.Fix{r.diagnoseFix(), r.mtuFix(c.Direction)},
		}
		if t := find(r, PathTunnel, c.Direction, c.Streams); t != nil {
			for _, n := range t.Notes {
				f.Evidence = append(f.Evidence, finding.Evidence{Source: "host counters", Key: "during the tunnel run", Value: n})
			}
		}
		out = append(out, f)
	}
	return out
}

func streamsWord(n int) string {
	if n <= 1 {
		return "1 stream"
	}
	return fmt.Sprintf("%d streams", n)
}

func asymmetryFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	for _, streams := range streamCounts(r) {
		up, down := find(r, PathTunnel, Upload, streams), find(r, PathTunnel, Download, streams)
		if up == nil || down == nil {
			continue
		}
		slow, fast := down, up
		if up.Stats.Mbit < down.Stats.Mbit {
			slow, fast = up, down
		}
		if fast.Stats.Mbit <= 0 || slow.Stats.Mbit/fast.Stats.Mbit >= AsymmetryRatio {
			continue
		}
		ev := []finding.Evidence{
			{Source: "iperf3", Key: "tunnel " + fast.Direction + " " + streamsWord(streams), Value: mbit(fast.Stats.Mbit)},
			{Source: "iperf3", Key: "tunnel " + slow.Direction + " " + streamsWord(streams), Value: mbit(slow.Stats.Mbit),
				Threshold: fmt.Sprintf(">= %s (%.0f%% of the fast direction)", mbit(AsymmetryRatio*fast.Stats.Mbit), 100*AsymmetryRatio)},
		}
		// An underlay just as lopsided is the link's nature (an ADSL line), not the tunnel's fault.
		uSlow, uFast := find(r, PathUnderlay, slow.Direction, streams), find(r, PathUnderlay, fast.Direction, streams)
		if uSlow != nil && uFast != nil && uFast.Stats.Mbit > 0 {
			uRatio := uSlow.Stats.Mbit / uFast.Stats.Mbit
			if uRatio < 2*slow.Stats.Mbit/fast.Stats.Mbit {
				continue
			}
			ev = append(ev, finding.Evidence{Source: "iperf3", Key: "underlay " + slow.Direction + "/" + fast.Direction, Value: fmt.Sprintf("%.2f", uRatio)})
		}
		if slow.Stats.Retransmits > 0 {
			ev = append(ev, finding.Evidence{Source: "iperf3", Key: "retransmits (" + slow.Direction + ")", Value: commas(slow.Stats.Retransmits)})
		}
		out = append(out, finding.Finding{
			ID: finding.ThroughputAsymmetric, Severity: finding.Warning, Host: r.sender(slow.Direction), Interface: r.senderInterface(slow.Direction),
			Title: fmt.Sprintf("Tunnel %s is %.0f%% of %s (%s vs %s)", slow.Direction, 100*slow.Stats.Mbit/fast.Stats.Mbit,
				fast.Direction, mbit(slow.Stats.Mbit), mbit(fast.Stats.Mbit)),
			Detail: "One direction far slower than the other points at something one-sided: a path MTU black hole in that direction, " +
				"a stale endpoint route on one end, or a receiver dropping UDP.",
			Evidence: ev,
			Fixes:    []finding.Fix{r.mtuFix(slow.Direction), r.diagnoseFix()},
		})
	}
	return out
}

func streamCounts(r *Report) []int {
	seen := map[int]bool{}
	var out []int
	for _, run := range r.Runs {
		if !seen[run.Streams] && run.UDPMbit == 0 {
			seen[run.Streams] = true
			out = append(out, run.Streams)
		}
	}
	sort.Ints(out)
	return out
}

func oscillationFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	for _, run := range r.Runs {
		if run.Path != PathTunnel || run.Result == nil || run.UDPMbit > 0 {
			continue
		}
		if run.Stats.Collapses < 2 || run.Stats.CV < OscillationCV {
			continue
		}
		dev := r.senderInterface(run.Direction)
		capMbit := int(math.Floor(run.Stats.Mbit*0.9/10) * 10)
		if capMbit < 10 {
			capMbit = 10
		}
		f := finding.Finding{
			ID: finding.ThroughputOscillation, Severity: finding.Warning, Host: r.sender(run.Direction), Interface: dev,
			Title: fmt.Sprintf("Tunnel %s collapses periodically: %d drops below %.0f%% of its peak, rate varies %.0f%%",
				run.Spec.String(), run.Stats.Collapses, 100*CollapseFraction, 100*run.Stats.CV),
			Detail: "The rate climbs until something saturates (a CPU, a queue), collapses and recovers. A steady rate just below " +
				"the knee moves more data than the oscillation; wgperf shape-sweep finds the cap.",
			Evidence: []finding.Evidence{
				{Source: "iperf3", Key: "collapses", Value: fmt.Sprint(run.Stats.Collapses), Threshold: "< 2"},
				{Source: "iperf3", Key: "coefficient of variation of per-second rate", Value: fmt.Sprintf("%.2f", run.Stats.CV), Threshold: fmt.Sprintf("< %.2f", OscillationCV)},
				{Source: "iperf3", Key: "per-second Mbit/s", Value: rateList(run.Result)},
			},
			Fixes: []finding.Fix{{
				Description: "Find the most stable rate cap on the sender's tunnel interface",
				Commands:    []string{target.Quote("wgperf", "shape-sweep", "--client", r.Client, "--server", r.Server)},
			}},
		}
		if dev != "" {
			tbf, err := remedy.TBF(dev, fmt.Sprintf("%dmbit", capMbit))
			f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Cap %s at %d Mbit/s, below the collapse", dev, capMbit), tbf, err)...)
		}
		out = append(out, f)
	}
	return out
}

func rateList(res *iperf.Result) string {
	var parts []string
	for _, iv := range res.Measured() {
		parts = append(parts, fmt.Sprintf("%.0f", iv.Mbit))
	}
	return strings.Join(parts, " ")
}

func congestionFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	done := map[string]bool{}
	for _, run := range r.Runs {
		if run.Path != PathTunnel || run.Result == nil || run.Result.Protocol != "tcp" || run.Streams > 1 {
			continue
		}
		cc := run.Result.Congestion
		if cc != "cubic" && cc != "reno" {
			continue
		}
		// The tuning guide: the window "bouncing around, or narrowing significantly":
		// a swing, or a window that stays collapsed while the run falls short.
		short := r.cellShort(run.Direction, run.Streams)
		if run.Stats.Retransmits == 0 || (run.Stats.CwndSwing < CwndSwing && short == nil) {
			continue
		}
		host := r.sender(run.Direction)
		if done[host] {
			continue
		}
		done[host] = true
		title := fmt.Sprintf("%s on the sender: cwnd swings %.1fx (%s..%s bytes) with %s retransmits in the tunnel %s",
			strings.ToUpper(cc), run.Stats.CwndSwing, commas(run.Stats.CwndMin), commas(run.Stats.CwndMax), commas(run.Stats.Retransmits), run.Direction)
		evidence := []finding.Evidence{
			{Source: "iperf3", Key: "sender_tcp_congestion", Value: cc, Threshold: "bbr"},
			{Source: "iperf3", Key: "cwnd max/min", Value: fmt.Sprintf("%.1f", run.Stats.CwndSwing), Threshold: fmt.Sprintf("< %.1f", CwndSwing)},
			{Source: "iperf3", Key: "retransmits", Value: commas(run.Stats.Retransmits), Threshold: "0"},
		}
		if short != nil {
			if run.Stats.CwndSwing < CwndSwing {
				title = fmt.Sprintf("%s on the sender: cwnd stays at %s..%s bytes with %s retransmits, tunnel %s at %.0f%% of the underlay",
					strings.ToUpper(cc), commas(run.Stats.CwndMin), commas(run.Stats.CwndMax), commas(run.Stats.Retransmits), run.Direction, short.Ratio*100)
			}
			evidence = append(evidence, finding.Evidence{Source: "iperf3", Key: "tunnel/underlay " + run.Direction,
				Value: fmt.Sprintf("%.2f", short.Ratio), Threshold: fmt.Sprintf(">= %.2f", short.Expected)})
		}
		// The sender's kernel and modules are unknown here: the fix shows the
		// modprobe, and the fq qdisc for kernels before 4.20.
		bbr, err := remedy.Congestion("bbr", true, "")
		out = append(out, finding.Finding{
			ID: finding.TCPCongestionControl, Severity: finding.Warning, Host: host,
			Title:    title,
			Detail:   "Loss-based congestion control halves its window at every lost tunnel packet and climbs back slowly; BBR paces by measured bandwidth and keeps the rate through random loss.",
			Evidence: evidence,
			Fixes:    remedy.Fixes("Switch the sender to BBR", bbr, err),
		})
	}
	return out
}

// cellShort returns the tunnel/underlay cell of a direction and stream count
// when the tunnel fell short of the expectation, or nil.
func (r *Report) cellShort(direction string, streams int) *Cell {
	for i, c := range r.Cells {
		if c.Direction == direction && c.Streams == streams && c.UnderlayMbit > 0 && !c.OK {
			return &r.Cells[i]
		}
	}
	return nil
}

// UDPBufferTarget is the socket buffer limit suggested against drops.
const UDPBufferTarget = remedy.UDPBuffer

func hostFindings(r *Report) []finding.Finding {
	type agg struct {
		rcv, snd int64
		cpu      float64
		cpuIdx   int
		cpuRun   string
	}
	hosts := map[string]*agg{}
	get := func(h string) *agg {
		if hosts[h] == nil {
			hosts[h] = &agg{cpuIdx: -1}
		}
		return hosts[h]
	}
	for _, run := range r.Runs {
		if run.Path != PathTunnel {
			continue
		}
		for _, d := range []HostDelta{run.Client, run.Server} {
			if d.Host == "" {
				continue
			}
			a := get(d.Host)
			a.rcv += d.UDPRcvbufErrors
			a.snd += d.UDPSndbufErrors
			if b, i := d.MaxCPU(); i >= 0 && b > a.cpu {
				a.cpu, a.cpuIdx, a.cpuRun = b, i, run.Spec.String()
			}
		}
	}
	names := make([]string, 0, len(hosts))
	for h := range hosts {
		names = append(names, h)
	}
	sort.Strings(names)
	var out []finding.Finding
	for _, h := range names {
		a := hosts[h]
		// Send errors alone are left to the passive check: Linux counts a send
		// refused by a full egress queue (a shaped uplink) the same way, and
		// only the host's facts tell the two apart. The runs' notes still say it.
		if a.rcv > 0 {
			f := finding.Finding{
				ID: finding.UDPRcvbufErrors, Severity: finding.Warning, Host: h,
				Title:  fmt.Sprintf("UDP buffers overflowed under tunnel load: %s receive, %s send errors", commas(a.rcv), commas(a.snd)),
				Detail: "Every error is a WireGuard packet the kernel dropped because a socket buffer was full; TCP inside the tunnel reads it as congestion.",
				Evidence: []finding.Evidence{
					{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors (growth during tunnel runs)", Value: commas(a.rcv), Threshold: "0"},
					{Source: "/proc/net/snmp", Key: "Udp SndbufErrors (growth during tunnel runs)", Value: commas(a.snd), Threshold: "0"},
				},
			}
			for _, k := range []string{"net.core.rmem_max", "net.core.rmem_default"} {
				raise, err := remedy.Sysctl(k, fmt.Sprint(UDPBufferTarget))
				f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Raise %s to 25 MiB", k), raise, err)...)
			}
			out = append(out, f)
		}
		if a.cpu >= CPUSaturatedPercent {
			out = append(out, finding.Finding{
				ID: finding.CPUSaturated, Severity: finding.Warning, Host: h,
				Title:  fmt.Sprintf("CPU %d was %.0f%% busy during the %s run", a.cpuIdx, a.cpu, a.cpuRun),
				Detail: "Encryption and packet processing need a CPU; one at its limit is the tunnel's ceiling whatever the link can do.",
				Evidence: []finding.Evidence{
					{Source: "/proc/stat", Key: fmt.Sprintf("cpu%d busy", a.cpuIdx), Value: fmt.Sprintf("%.0f%%", a.cpu), Threshold: fmt.Sprintf("< %.0f%%", CPUSaturatedPercent)},
				},
				Fixes: []finding.Fix{{
					Description: "See what keeps the CPU busy (the WireGuard process, softirq, another program) during a transfer",
					Commands:    []string{"top -b -n 1 -H | head -20", "cat /proc/net/softnet_stat"},
				}},
			})
		}
	}
	return out
}
