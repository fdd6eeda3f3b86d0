package doctor

import (
	"fmt"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// Measured is what the bench saw, reduced to what ranking needs: per
// direction the tunnel and underlay rates (0 when not measured) and whether a
// run through the tunnel stalled outright.
type Measured struct {
	Benched bool    `json:"benched"` // false: no server, nothing measured
	Client  string  `json:"client"`  // target spec of the upload's sender
	Server  string  `json:"server"`
	Up      DirRate `json:"upload"`
	Down    DirRate `json:"download"`
	Stalled bool    `json:"stalled,omitempty"` // a tunnel run never finished (bulk TCP stuck)
	// Expected is the tunnel/underlay ratio that counts as healthy.
	Expected float64 `json:"expected"`
}

// DirRate is one direction's single-stream figures in Mbit/s.
type DirRate struct {
	Tunnel   float64 `json:"tunnel_mbit"`
	Underlay float64 `json:"underlay_mbit"`
}

// Ratio is tunnel/underlay, 0 when the underlay was not measured.
func (d DirRate) Ratio() float64 {
	if d.Underlay <= 0 {
		return 0
	}
	return d.Tunnel / d.Underlay
}

// deficit is the share of the underlay the tunnel does not carry in this
// direction (0 when healthy or unmeasured; 1 when nothing went through).
func (m Measured) deficit(d DirRate) float64 {
	if !m.Benched || d.Underlay <= 0 {
		return 0
	}
	return max(0, 1-d.Ratio())
}

// Cause is one finding ranked by the throughput it explains.
type Cause struct {
	Finding finding.Finding `json:"finding"`
	// Score orders causes; Explains is the share of the underlay's throughput
	// this cause is judged to cost (0..1), Direction which direction it hurts.
	Score     float64 `json:"score"`
	Explains  float64 `json:"explains"`
	Direction string  `json:"direction"` // upload, download, both
	// Gain says what fixing it should bring back, in words and figures.
	Gain string `json:"expected_gain"`
	// Command applies its automatic fix, "" when it has none.
	Command string `json:"command,omitempty"`
}

// impact is the largest share of the throughput a finding can cost when
// present: a black hole or a route over the backup takes (nearly) all of it,
// a buffer that drops datagrams a good part, a note almost nothing. Root
// causes rank above the consequences they drive (CUBIC losing to drops).
var impact = map[string]float64{
	"mtu.pmtud-blackhole":      1.0,
	"wg.handshake-stale":       1.0,
	"route.stale-endpoint":     0.9,
	"mtu.tunnel-too-large":     0.8,
	"mtu.mss-clamp-missing":    0.7,
	"udp.rcvbuf-errors":        0.6,
	"net.backlog-drops":        0.55,
	"bond.hash-policy":         0.5,
	"cpu.saturated":            0.5,
	"cpu.softirq-imbalance":    0.45,
	"tcp.congestion-control":   0.4,
	"tcp.buffers-small":        0.4,
	"icmp.ratelimit-drops":     0.3, // costs throughput only through failovers it triggers
	"conntrack.table-pressure": 0.3,
}

// hidden lists causes the tunnel/underlay ratio cannot show: a stale
// endpoint route slows the bench's underlay run to the same endpoint too; a
// missing MSS clamp stalls the hosts behind the gateways, not the gateways'
// own bench (their sockets know the tunnel's MTU).
var hidden = map[string]bool{"route.stale-endpoint": true, "icmp.ratelimit-drops": true, "conntrack.table-pressure": true,
	"mtu.mss-clamp-missing": true}

// unmeasured lists causes a throughput measurement cannot verify a fix of:
// "fix --verify" would see no gain and roll the fix back.
var unmeasured = map[string]bool{"icmp.ratelimit-drops": true, "conntrack.table-pressure": true, "mtu.mss-clamp-missing": true}

// receiveSide and sendSide are host findings that hurt the direction in which
// their host receives, or sends.
var (
	receiveSide = map[string]bool{"udp.rcvbuf-errors": true, "net.backlog-drops": true, "cpu.softirq-imbalance": true}
	sendSide    = map[string]bool{"tcp.congestion-control": true}
)

// Symptom reports whether a finding describes the slowness itself (the bench's
// ratio, asymmetry, oscillation) rather than a cause of it.
func Symptom(id string) bool { return strings.HasPrefix(id, "throughput.") }

var sevWeight = map[finding.Severity]float64{finding.Critical: 3, finding.Warning: 2, finding.Info: 0.2}

// Rank orders the findings that are causes (not symptoms) by the throughput
// they explain given what was measured, highest first. It is pure.
//
// A cause's share is its impact, capped by the deficit measured in the
// direction it hurts; a cause whose direction is measured healthy is a latent
// risk (a fifth of its impact); one the ratio cannot show keeps its impact;
// without a bench every cause keeps half its impact (unconfirmed). The score
// is that share weighted by severity, so a critical black hole outranks a
// warning about buffers, and any warning outranks an info note.
func Rank(fs []finding.Finding, m Measured) []Cause {
	var out []Cause
	for _, f := range fs {
		if Symptom(f.ID) {
			continue
		}
		imp := impactOf(f)
		c := Cause{Finding: f, Direction: direction(f, m)}
		def := m.directionDeficit(c.Direction)
		switch {
		case !m.Benched:
			c.Explains = imp / 2
		case hidden[f.ID]:
			c.Explains = imp
		case m.Stalled && f.ID != "cpu.saturated" && imp >= 0.7:
			c.Explains = imp // a stall costs everything; MTU-class causes explain it
		case def < 1-m.Expected:
			c.Explains = imp / 5
		default:
			c.Explains = min(imp, def)
		}
		c.Score = sevWeight[f.Severity] * c.Explains
		c.Gain = gain(c, m)
		out = append(out, c)
	}
	sort.SliceStable(out, func(i, j int) bool {
		// A full conntrack table drops the packets every measurement and probe
		// sends on a new flow: what they saw follows from it.
		if a, b := refusesNewFlows(out[i].Finding), refusesNewFlows(out[j].Finding); a != b {
			return a
		}
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return impactOf(out[i].Finding) > impactOf(out[j].Finding)
	})
	return out
}

// impactOf is a finding's impact: the table's, 0.2 for a cause it does not
// list, at most 0.05 for a note; a full connection tracking table refuses
// every new flow (the bench's own connections too), so it can cost it all.
func impactOf(f finding.Finding) float64 {
	imp, ok := impact[f.ID]
	if !ok {
		imp = 0.2
	}
	switch {
	case f.Severity == finding.Info:
		imp = min(imp, 0.05)
	case refusesNewFlows(f):
		imp = 1.0
	}
	return imp
}

// refusesNewFlows reports a full connection tracking table: the kernel drops
// the packets of new flows, probes' pings and iperf3's connections included.
func refusesNewFlows(f finding.Finding) bool {
	return f.ID == "conntrack.table-pressure" && f.Severity == finding.Critical
}

// direction says which way a finding hurts: host-side receive problems the
// direction that host receives, sender problems the one it sends.
func direction(f finding.Finding, m Measured) string {
	switch {
	case receiveSide[f.ID] && f.Host == m.Server, sendSide[f.ID] && f.Host == m.Client:
		return "upload"
	case receiveSide[f.ID] && f.Host == m.Client, sendSide[f.ID] && f.Host == m.Server:
		return "download"
	}
	return "both"
}

func (m Measured) directionDeficit(dir string) float64 {
	up, down := m.deficit(m.Up), m.deficit(m.Down)
	switch dir {
	case "upload":
		return up
	case "download":
		return down
	}
	return max(up, down)
}

// gain says what fixing the cause should bring back.
func gain(c Cause, m Measured) string {
	if !m.Benched {
		return "not measured: give --server to bench the tunnel against its underlay"
	}
	if c.Finding.ID == "route.stale-endpoint" {
		return "the tunnel moves to the preferred uplink: its rate instead of the backup's " +
			"(the underlay bench to the endpoint follows the same stale route, so it cannot show the difference)"
	}
	if c.Finding.ID == "mtu.mss-clamp-missing" {
		return "hosts behind the gateways get bulk TCP through the tunnel again " +
			"(the gateways' own bench cannot show it: their connections already fit the tunnel's MTU)"
	}
	if hidden[c.Finding.ID] {
		return "not visible in the bench: it costs through failovers or failed connections, not the steady rate"
	}
	var parts []string
	for _, d := range []struct {
		name string
		r    DirRate
	}{{"upload", m.Up}, {"download", m.Down}} {
		if c.Direction != "both" && c.Direction != d.name {
			continue
		}
		if d.r.Underlay <= 0 || d.r.Ratio() >= m.Expected {
			continue
		}
		want := m.Expected * d.r.Underlay
		parts = append(parts, fmt.Sprintf("%s %.0f → ≥ %.0f Mbit/s", d.name, d.r.Tunnel, want))
	}
	if m.Stalled && len(parts) == 0 {
		return "bulk transfers complete instead of stalling"
	}
	if len(parts) == 0 {
		return "none measured now: the direction it affects is healthy (a latent risk)"
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (%.0f%% of the underlay)", m.Expected*100)
}
