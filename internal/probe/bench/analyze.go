// Package bench measures a WireGuard tunnel against the link under it with
// iperf3 (the tuning guide's method): tunnel and underlay, upload and download, one
// stream and several, each after an --omit warm-up. Host counters sampled on
// both ends around every run say why a slow run was slow.
//
// Analyze is a pure function over the results; Measure is the thin I/O shell.
package bench

import (
	"encoding/json"
	"fmt"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/drops"
	"github.com/wgperf/wgperf/internal/probe/iperf"
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
	// Hop, on an underlay run of a path through hubs (Config.Legs), is the
	// hop it measured, from 1 (the client's); 0 on every other run.
	Hop int `json:"hop,omitempty"`
}

func (s Spec) String() string {
	kind := fmt.Sprintf("%d stream", s.Streams)
	if s.Streams > 1 {
		kind += "s"
	}
	if s.UDPMbit > 0 {
		kind = fmt.Sprintf("UDP %g Mbit/s", s.UDPMbit)
	}
	return fmt.Sprintf("%s %s, %s", s.PathName(), s.Direction, kind)
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
	// Hubs are the hubs' counters during a tunnel run through them (--via:
	// their CPUs carry the tunnel twice; hops.go), in path order.
	Hubs []HostDelta `json:"hubs,omitempty"`
	// ClientDrops and ServerDrops are the packets each end's kernel dropped
	// during the run, by reason (none without a sampler; kerneldrops.go).
	ClientDrops []drops.Count `json:"client_kernel_drops,omitempty"`
	ServerDrops []drops.Count `json:"server_kernel_drops,omitempty"`
	// Notes attribute a slow run to what the counters saw.
	Notes []string `json:"notes,omitempty"`
	// IperfJSON is the file that holds the run's iperf3 -J document
	// (bench --iperf3-json DIR), as written.
	IperfJSON string `json:"iperf3_json,omitempty"`
	// Latency is the round trip while the run loaded the path (latency.go).
	Latency *Latency `json:"latency,omitempty"`
	// Repeats are later runs of the same spec, made when one sample could
	// not settle its cell's verdict (repeat.go); the cell takes the median.
	Repeats []Repeat `json:"repeats,omitempty"`
	// TCP is the state of the run's flows at both ends, read with ss while
	// a tunnel TCP run loaded the path (tcpstate.go; nil on other runs).
	TCP *TCPState `json:"tcp,omitempty"`
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

// Cell compares tunnel and underlay for one direction and stream count, each
// the median of its samples.
type Cell struct {
	Direction    string  `json:"direction"`
	Streams      int     `json:"streams"`
	TunnelMbit   float64 `json:"tunnel_mbit"`
	UnderlayMbit float64 `json:"underlay_mbit"`
	// Hop is, on a path through hubs, the hop whose underlay UnderlayMbit
	// is: the slowest (0: the one underlay between the ends).
	Hop      int     `json:"hop,omitempty"`
	Ratio    float64 `json:"ratio"`
	Expected float64 `json:"expected"`
	OK       bool    `json:"ok"`
	// Samples is how many runs each path took when more than one (a repeat
	// was needed: repeat.go); absent, one.
	Samples int `json:"samples,omitempty"`
}

// Report is a whole bench: what was measured, the comparison and the findings.
// --json prints it; the HTML report plots Runs[].Result.Intervals.
type Report struct {
	Client          target.Spec       `json:"client"`
	Server          target.Spec       `json:"server"`
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
	// KernelDrops says how each end's kernel drops were sampled (client,
	// server), and if not, why; none without a sampler.
	KernelDrops []drops.Status `json:"kernel_drops,omitempty"`
	// IdleLatency is the round trip before any run (latency.go);
	// ClientUplink and ServerUplink the interfaces each end reaches the
	// other's underlay address through ("" when unknown).
	IdleLatency  *Latency `json:"idle_latency,omitempty"`
	ClientUplink string   `json:"client_uplink,omitempty"`
	ServerUplink string   `json:"server_uplink,omitempty"`
	// UnderlayBlocked says why the underlay runs were left out, in one line
	// ("iperf3 to 203.0.113.2:5299: Connection refused"); "" when they ran.
	UnderlayBlocked string `json:"underlay_blocked,omitempty"`
	// Via are the hubs the tunnel runs through (--via), client side first;
	// HopUnderlay each hop's own underlay, the path's limit the slowest.
	Via         []target.Spec `json:"via,omitempty"`
	HopUnderlay []HopRate     `json:"hop_underlay,omitempty"`
	// Clients is several clients' load on the server at once (--clients).
	Clients *ManyClients `json:"clients,omitempty"`
}

// MarshalJSON writes empty lists as [], never null.
func (r Report) MarshalJSON() ([]byte, error) {
	type plain Report
	p := plain(r)
	if p.Runs == nil {
		p.Runs = []Run{}
	}
	if p.Cells == nil {
		p.Cells = []Cell{}
	}
	if p.Findings == nil {
		p.Findings = []finding.Finding{}
	}
	return json.Marshal(p)
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
		run.Notes = notes(r, run)
	}
	r.HopUnderlay = hopRates(r)
	r.Cells = cells(r)
	var fs []finding.Finding
	fs = append(fs, ratioFindings(r)...)
	fs = append(fs, asymmetryFindings(r)...)
	fs = append(fs, oscillationFindings(r)...)
	fs = append(fs, congestionFindings(r)...)
	fs = append(fs, hostFindings(r)...)
	fs = append(fs, tcpLimitFindings(r)...)
	fs = append(fs, bufferbloatFindings(r)...)
	fs = KernelDropFindings(r, fs)
	finding.Sort(fs)
	r.Findings = fs
}

// notes are what a run's figures mean; a loss figure names the way its
// datagrams went (one direction's loss, not a round trip's).
func notes(r *Report, run *Run) []string {
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
	out = append(out, kernelDropNotes(run)...)
	if n := tcpNote(run); n != "" {
		out = append(out, n)
	}
	if run.Result != nil && run.Result.Protocol == "udp" && run.Result.LostPackets > 0 {
		from, to := r.Client, r.Server
		if run.Direction == Download {
			from, to = r.Server, r.Client
		}
		out = append(out, fmt.Sprintf("receiver lost %s of %s datagrams (%.2f%%) on the way from %s to %s",
			Commas(run.Result.LostPackets), Commas(run.Result.Packets), run.Result.LostPercent, from, to))
	}
	return out
}

// find is the run of a path, direction and stream count; on a path through
// hubs the underlay's is the slowest hop's (hops.go).
func find(r *Report, path, dir string, streams int) *Run {
	if path == PathUnderlay && len(r.Via) > 0 {
		return slowestHop(r, dir, streams)
	}
	return findHop(r, path, dir, streams, 0)
}

// findHop is the run of a path, direction, stream count and hop (0: not a
// hop's own underlay run).
func findHop(r *Report, path, dir string, streams, hop int) *Run {
	for i := range r.Runs {
		run := &r.Runs[i]
		if run.Path == path && run.Direction == dir && run.Streams == streams && run.Hop == hop && run.UDPMbit == 0 && run.Result != nil {
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
		if u == nil || u.Rate() <= 0 {
			continue
		}
		c := Cell{Direction: run.Direction, Streams: run.Streams, TunnelMbit: run.Rate(),
			UnderlayMbit: u.Rate(), Hop: u.Hop, Expected: r.Expected()}
		if n := min(run.Spread().Samples, u.Spread().Samples); n > 1 {
			c.Samples = n
		}
		c.Ratio = c.TunnelMbit / c.UnderlayMbit
		c.OK = c.Ratio >= c.Expected
		out = append(out, c)
	}
	return out
}
