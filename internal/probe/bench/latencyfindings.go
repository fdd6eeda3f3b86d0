package bench

import (
	"fmt"
	"math"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// BloatMs is the round trip a transfer may add before it counts as
// bufferbloat. 30 ms is where the common bufferbloat grades (DSLReports',
// Waveform's) leave A for B, and about what a call or a game starts to feel;
// a queue sized in milliseconds at the link's rate (a healthy AQM's 5 ms
// target, a deep FIFO's hundreds) lands far on either side of it. The lab's
// healthy tunnels add a few milliseconds.
const BloatMs = 30.0

// Queue places, as the finding names them.
const (
	QueueOnPath     = "on the path"        // the underlay's pings wait as long: a shared bottleneck's queue
	QueueTunnelEnds = "at the tunnel ends" // only the tunnel's pings wait: a queue in or before the WireGuard interface
	QueueUnknown    = "not located"        // no underlay pings to compare
)

// SQMShare is the share of the measured rate an SQM shaper gets: below the
// bottleneck, so the queue forms in the AQM (sqm-scripts advises 85-95% of
// the measured speed; TCP's goodput is already a few percent under the line).
const SQMShare = 0.9

// bloat is what load added to the round trip in one direction.
type bloat struct {
	dir             string
	run             *Run
	idle, loaded    *RTT
	added           float64 // loaded median - idle median through the tunnel, ms
	underlayAdded   float64 // the same over the underlay during the same run
	underlayP90     float64 // the underlay's loaded p90 - its idle median, ms
	underlayMeasure bool
	where           string
}

// measureBloat compares the single-stream tunnel run's round trips in dir
// with the idle ones; nil when either series is missing.
func measureBloat(r *Report, dir string) *bloat {
	run := find(r, PathTunnel, dir, 1)
	if run == nil || run.Latency == nil || r.IdleLatency == nil {
		return nil
	}
	idle, loaded := r.IdleLatency.Tunnel, run.Latency.Tunnel
	if idle == nil || loaded == nil || idle.Received == 0 || loaded.Received == 0 {
		return nil
	}
	b := &bloat{dir: dir, run: run, idle: idle, loaded: loaded, added: loaded.MedianMs - idle.MedianMs, where: QueueUnknown}
	if iu, lu := r.IdleLatency.Underlay, run.Latency.Underlay; iu != nil && lu != nil && iu.Received > 0 && lu.Received > 0 {
		b.underlayMeasure, b.underlayAdded, b.underlayP90 = true, lu.MedianMs-iu.MedianMs, lu.P90Ms-iu.MedianMs
		// A queue the tunnel's pings skip left the underlay's near idle (a few
		// ms in the lab). One they share made them wait too, if not as long at
		// the median: two series of a handful of pings each, started a moment
		// apart, meet a queue that fills and drains at different depths (the
		// kernel guest's backup uplink under load: tunnel +407 ms, underlay
		// less than half of it, the queue R's). So a quarter as long at the
		// median, or half as long at the underlay's p90, is the path's queue.
		b.where = QueueTunnelEnds
		if b.onPathByMedian() || b.onPathByP90() {
			b.where = QueueOnPath
		}
	}
	return b
}

// onPathByMedian: the underlay's median waited a quarter as long as the
// tunnel's (and at least half of BloatMs).
func (b *bloat) onPathByMedian() bool { return b.underlayAdded >= max(BloatMs/2, b.added/4) }

// onPathByP90: the underlay's slowest tenth waited half as long (and at
// least BloatMs), where its median did not.
func (b *bloat) onPathByP90() bool { return b.underlayP90 >= max(BloatMs, b.added/2) }

// underlayWaited says how the underlay's pings waited during the transfer,
// by the measure that placed the queue on the path.
func (b *bloat) underlayWaited() string {
	if b.onPathByMedian() {
		return fmt.Sprintf("+%s ms at the median, against the tunnel's +%s", ms(b.underlayAdded), ms(b.added))
	}
	return fmt.Sprintf("their slowest tenth +%s ms above the idle median, against the tunnel's +%s at the median", ms(b.underlayP90), ms(b.added))
}

// bufferbloatFindings reports each direction whose transfer added more than
// BloatMs to the tunnel's median round trip, with where the queue is and a
// queue discipline for the sender's egress that keeps it short.
func bufferbloatFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	for _, dir := range []string{Upload, Download} {
		b := measureBloat(r, dir)
		if b == nil || b.added <= BloatMs {
			continue
		}
		out = append(out, b.finding(r))
	}
	return out
}

func (b *bloat) finding(r *Report) finding.Finding {
	host := r.sender(b.dir)
	ev := []finding.Evidence{
		finding.Evidence{Source: "ping", Key: "tunnel round trip idle (min/median/p90/max)", Value: b.idle.String()}.Of(b.idle.MedianMs, finding.Millis),
		finding.Evidence{Source: "ping", Key: "tunnel round trip during the " + b.dir + " (min/median/p90/max)", Value: b.loaded.String()}.Of(b.loaded.MedianMs, finding.Millis),
		finding.Evidence{Source: "ping", Key: "added by the " + b.dir + " (median)", Value: fmt.Sprintf("+%s ms", ms(b.added)),
			Threshold: fmt.Sprintf("<= +%.0f ms", BloatMs)}.Of(b.added, finding.Millis),
	}
	if b.underlayMeasure {
		ev = append(ev, finding.Evidence{Source: "ping", Key: "underlay round trip added during the same run (median)",
			Value: fmt.Sprintf("%+.1f ms", b.underlayAdded)}.Of(b.underlayAdded, finding.Millis))
		if b.where == QueueOnPath && !b.onPathByMedian() {
			ev = append(ev, finding.Evidence{Source: "ping", Key: "underlay round trip during the same run (p90) above its idle median",
				Value: fmt.Sprintf("%+.1f ms", b.underlayP90)}.Of(b.underlayP90, finding.Millis))
		}
	}
	f := finding.Finding{
		ID: catalog.LatencyBufferbloat, Severity: finding.Warning, Host: host,
		Title: fmt.Sprintf("Latency under load: %s through the tunnel adds %s ms to the round trip (%s idle, %s loaded); the queue is %s",
			withArticle(b.dir), ms(b.added), ms(b.idle.MedianMs), ms(b.loaded.MedianMs), b.where),
		Evidence: ev,
	}
	switch b.where {
	case QueueOnPath:
		f.Detail = "The underlay's own pings waited too (" + b.underlayWaited() + "), so the queue is on the shared path: a deep buffer at the bottleneck (a modem, " +
			"a shaper) that a bulk sender fills. Every interactive packet waits behind it while a transfer runs. " +
			"Shaping the sender's uplink just below the bottleneck with an AQM moves the queue where it is kept short."
		f.Interface = r.uplink(b.dir)
		f.Fixes = b.sqmFixes(r, f.Interface, r.underlayRate(b.dir))
	case QueueTunnelEnds:
		f.Detail = "The underlay's pings stayed near idle while the tunnel's waited: the queue is in or before the sender's WireGuard " +
			"interface (its own qdisc, or the implementation's queue), not on the path."
		f.Interface = r.senderInterface(b.dir)
		f.Fixes = b.sqmFixes(r, f.Interface, b.run.Stats.Mbit)
	default:
		f.Detail = "Without the underlay measured beside the tunnel the queue cannot be placed: bench with the underlay address."
		f.Fixes = []finding.Fix{r.diagnoseFix()}
	}
	return f
}

// QueueOf is where a bufferbloat finding located its queue (one of the
// Queue places; "" for any other finding).
func QueueOf(f finding.Finding) string {
	if f.ID != catalog.LatencyBufferbloat {
		return ""
	}
	for _, q := range []string{QueueOnPath, QueueTunnelEnds, QueueUnknown} {
		if strings.HasSuffix(f.Title, "the queue is "+q) {
			return q
		}
	}
	return ""
}

// withArticle is "an upload" or "a download".
func withArticle(dir string) string {
	if dir == Upload {
		return "an " + dir
	}
	return "a " + dir
}

// sqmFixes is cake (or htb + fq_codel) on dev at SQMShare of mbit; none
// when the device or the rate is unknown.
func (b *bloat) sqmFixes(r *Report, dev string, mbit float64) []finding.Fix {
	if dev == "" || mbit <= 0 {
		return []finding.Fix{r.diagnoseFix()}
	}
	bw := int(math.Max(1, math.Floor(mbit*SQMShare)))
	q, err := remedy.SQM(dev, fmt.Sprintf("%dmbit", bw))
	return remedy.Fixes(fmt.Sprintf("Shape %s's egress at %d Mbit/s (%.0f%% of the %.1f Mbit/s measured) with cake, or htb + fq_codel where the kernel has no cake",
		dev, bw, 100*SQMShare, mbit), q, err)
}

// uplink is the sender's underlay interface in dir.
func (r *Report) uplink(dir string) string {
	if dir == Download {
		return r.ServerUplink
	}
	return r.ClientUplink
}

// underlayRate is the single-stream underlay rate in dir, or the tunnel's
// when the underlay was not measured (0: neither).
func (r *Report) underlayRate(dir string) float64 {
	if u := find(r, PathUnderlay, dir, 1); u != nil && u.Rate() > 0 {
		return u.Rate()
	}
	if t := find(r, PathTunnel, dir, 1); t != nil {
		return t.Rate()
	}
	return 0
}
