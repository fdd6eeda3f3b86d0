package bench

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/check"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/iperf"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// Raises are the findings this package builds: the bench's analyses of its runs. Declared here as
// an analyzer declares its facts; TestRaises (internal/catalog) holds it to
// the finding literals of the package's code.
var Raises = []catalog.ID{
	catalog.CPUSaturated,
	catalog.KernelDrops,
	catalog.LatencyBufferbloat,
	catalog.NetBacklogDrops,
	catalog.TCPBuffersSmall,
	catalog.TCPCongestionControl,
	catalog.ThroughputAsymmetric,
	catalog.ThroughputOscillation,
	catalog.ThroughputTunnelRatio,
	catalog.UDPRcvbufErrors,
}

// This file holds the findings a bench reports, each from its own look at the report.

// sender and receiver of a run, as target specs.
func (r *Report) sender(dir string) target.Spec {
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
		Commands:    []string{shell.Join("wgperf", "diagnose", "--host", r.Client.String(), "--host", r.Server.String())},
	}
}

func (r *Report) mtuFix(dir string) finding.Fix {
	client, server := r.Client, r.Server
	if dir == Download {
		client, server = server, client
	}
	return finding.Fix{
		Description: "Rule out a PMTUD black hole in the slow direction: step the MSS through the tunnel",
		Commands:    []string{shell.Join("wgperf", "mtu", "--client", client.String(), "--server", server.String())},
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
			ID: catalog.ThroughputTunnelRatio, Severity: sev, Host: r.sender(c.Direction), Interface: r.senderInterface(c.Direction),
			Title: fmt.Sprintf("Tunnel %s (%s) reaches %.0f%% of %s: %s vs %s",
				c.Direction, streamsWord(c.Streams), 100*c.Ratio, c.underlayName(), mbit(c.TunnelMbit), mbit(c.UnderlayMbit)),
			Detail: fmt.Sprintf("A healthy WireGuard tunnel carries at least %.0f%% of the link under it; the difference is lost to something this host or the path does to tunnel packets.", 100*c.Expected),
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("tunnel %s %s", c.Direction, streamsWord(c.Streams)), Value: mbit(c.TunnelMbit)}.Of(c.TunnelMbit, finding.Mbits),
				finding.Evidence{Source: "iperf3", Key: fmt.Sprintf("%s %s %s", Spec{Path: PathUnderlay, Hop: c.Hop}.PathName(), c.Direction, streamsWord(c.Streams)), Value: mbit(c.UnderlayMbit)}.Of(c.UnderlayMbit, finding.Mbits),
				finding.Evidence{Source: "iperf3", Key: "tunnel/underlay", Value: fmt.Sprintf("%.2f", c.Ratio), Threshold: fmt.Sprintf(">= %.2f", c.Expected)}.Of(c.Ratio, finding.Ratio),
			},
			Fixes: []finding.Fix{r.diagnoseFix(), r.mtuFix(c.Direction)},
		}
		if t := find(r, PathTunnel, c.Direction, c.Streams); t != nil {
			for _, n := range t.Notes {
				f.Evidence = append(f.Evidence, finding.Evidence{Source: "host counters", Key: "during the tunnel run", Value: n})
			}
			if v := StreamView(t.Result); v != "" {
				f.Evidence = append(f.Evidence, finding.Evidence{Source: "iperf3", Key: "each stream of the tunnel run", Value: v})
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
			finding.Evidence{Source: "iperf3", Key: "tunnel " + fast.Direction + " " + streamsWord(streams), Value: mbit(fast.Stats.Mbit)}.Of(fast.Stats.Mbit, finding.Mbits),
			finding.Evidence{Source: "iperf3", Key: "tunnel " + slow.Direction + " " + streamsWord(streams), Value: mbit(slow.Stats.Mbit),
				Threshold: fmt.Sprintf(">= %s (%.0f%% of the fast direction)", mbit(AsymmetryRatio*fast.Stats.Mbit), 100*AsymmetryRatio)}.Of(slow.Stats.Mbit, finding.Mbits),
		}
		// An underlay just as lopsided is the link's nature (an ADSL line), not the tunnel's fault.
		uSlow, uFast := find(r, PathUnderlay, slow.Direction, streams), find(r, PathUnderlay, fast.Direction, streams)
		if uSlow != nil && uFast != nil && uFast.Stats.Mbit > 0 {
			uRatio := uSlow.Stats.Mbit / uFast.Stats.Mbit
			if uRatio < 2*slow.Stats.Mbit/fast.Stats.Mbit {
				continue
			}
			ev = append(ev, finding.Evidence{Source: "iperf3", Key: "underlay " + slow.Direction + "/" + fast.Direction, Value: fmt.Sprintf("%.2f", uRatio)}.Of(uRatio, finding.Ratio))
		}
		if slow.Stats.Retransmits > 0 {
			ev = append(ev, finding.Evidence{Source: "iperf3", Key: "retransmits (" + slow.Direction + ")", Value: Commas(slow.Stats.Retransmits)}.Of(float64(slow.Stats.Retransmits), finding.Packets))
		}
		out = append(out, finding.Finding{
			ID: catalog.ThroughputAsymmetric, Severity: finding.Warning, Host: r.sender(slow.Direction), Interface: r.senderInterface(slow.Direction),
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
		if run.Stats.Collapses < 2 || run.Stats.CV < OscillationCV || stalled(r, run) {
			continue
		}
		dev := r.senderInterface(run.Direction)
		high := CyclesOf(run.Result).HighMbit
		f := finding.Finding{
			ID: catalog.ThroughputOscillation, Severity: finding.Warning, Host: r.sender(run.Direction), Interface: dev,
			Title: fmt.Sprintf("Tunnel %s (%s) collapses periodically: %d drops below %.0f%% of its peak, rate varies %.0f%%",
				run.Direction, streamsWord(run.Streams), run.Stats.Collapses, 100*CollapseFraction, 100*run.Stats.CV),
			Detail: "The rate climbs until something saturates (a CPU, a queue, the path), collapses and recovers. A rate cap just " +
				"below the knee may hold it steady; wgperf shape-sweep holds several caps long enough to see, and says what each costs.",
			Evidence: []finding.Evidence{
				finding.Evidence{Source: "iperf3", Key: "collapses", Value: fmt.Sprint(run.Stats.Collapses), Threshold: "< 2"}.Of(float64(run.Stats.Collapses), finding.Count),
				finding.Evidence{Source: "iperf3", Key: "coefficient of variation of per-second rate", Value: fmt.Sprintf("%.2f", run.Stats.CV), Threshold: fmt.Sprintf("< %.2f", OscillationCV)}.Of(run.Stats.CV, finding.Ratio),
				rateEvidence(run.Result),
			},
			Fixes: []finding.Fix{SweepFix(r.Client.String(), r.Server.String(), run.Direction, dev, high)},
		}
		out = append(out, f)
	}
	return out
}

// StalledFraction is the share of the underlay below which a tunnel run's
// best second counts as a stall: a black-holed transfer trickles a few
// retransmitted segments now and then, which looks like collapses but is not
// a rate that climbs and falls (the stall has findings of its own).
const StalledFraction = 0.1

// stalled says whether a tunnel run never carried a tenth of the underlay
// measured the same way (false when there is no underlay run to compare).
func stalled(r *Report, run Run) bool {
	u := find(r, PathUnderlay, run.Direction, run.Streams)
	if u == nil || u.Result == nil || u.Stats.Mbit <= 0 || run.Result == nil {
		return false
	}
	peak := 0.0
	for _, iv := range run.Result.Measured() {
		peak = max(peak, iv.Mbit)
	}
	return peak < StalledFraction*u.Stats.Mbit
}

// rateEvidence lists the per-second rates of res; its number is the lowest,
// the depth of the deepest collapse.
func rateEvidence(res *iperf.Result) finding.Evidence {
	var parts []string
	low := math.Inf(1)
	for _, iv := range res.Measured() {
		parts = append(parts, fmt.Sprintf("%.0f", iv.Mbit))
		low = min(low, iv.Mbit)
	}
	e := finding.Evidence{Source: "iperf3", Key: "per-second Mbit/s", Value: strings.Join(parts, " ")}
	if len(parts) == 0 {
		return e
	}
	return e.Of(low, finding.Mbits)
}

func congestionFindings(r *Report) []finding.Finding {
	var out []finding.Finding
	done := map[target.Key]bool{}
	for _, run := range r.Runs {
		if run.Path != PathTunnel || run.Result == nil || run.Result.Protocol != "tcp" || run.Streams > 1 {
			continue
		}
		cc := run.Result.Congestion
		if !lossBased(cc) {
			continue
		}
		// The tuning guide: the window "bouncing around, or narrowing significantly":
		// a swing, or a window that stays collapsed while the run falls short.
		short := r.cellShort(run.Direction, run.Streams)
		// Or a window pinned where the loss holds it, whatever the underlay
		// measured: on a lossy path the underlay's own loss-based transfer
		// crawls too, and two short samples of a crawl compare at random.
		loss, _ := r.pathLoss(run)
		loss, pinned := lossPinned(run, loss)
		if run.Stats.Retransmits == 0 || (run.Stats.CwndSwing < CwndSwing && short == nil && !pinned) {
			continue
		}
		host := r.sender(run.Direction)
		if done[host.Key()] {
			continue
		}
		done[host.Key()] = true
		title := fmt.Sprintf("%s on the sender: cwnd swings %.1fx (%s..%s bytes) with %s retransmits in the tunnel %s",
			strings.ToUpper(cc), run.Stats.CwndSwing, Commas(run.Stats.CwndMin), Commas(run.Stats.CwndMax), Commas(run.Stats.Retransmits), run.Direction)
		evidence := []finding.Evidence{
			{Source: "iperf3", Key: "sender_tcp_congestion", Value: cc, Threshold: "bbr"},
			finding.Evidence{Source: "iperf3", Key: "cwnd max/min", Value: fmt.Sprintf("%.1f", run.Stats.CwndSwing), Threshold: fmt.Sprintf("< %.1f", CwndSwing)}.Of(run.Stats.CwndSwing, finding.Ratio),
			finding.Evidence{Source: "iperf3", Key: "retransmits", Value: Commas(run.Stats.Retransmits), Threshold: "0"}.Of(float64(run.Stats.Retransmits), finding.Packets),
		}
		if pinned {
			evidence = append(evidence, finding.Evidence{Source: "iperf3", Key: LossPinnedKey, Value: fmt.Sprintf("%.1f%%", loss*100),
				Threshold: fmt.Sprintf("< %g%%", PinningLoss*100)}.Of(loss*100, finding.Percent))
		}
		if pinned && short == nil && run.Stats.CwndSwing < CwndSwing {
			title = fmt.Sprintf("%s on the sender: %.1f%% of its tunnel %s segments were retransmitted, and its window stays at %s..%s bytes, where that loss holds a loss-based sender",
				strings.ToUpper(cc), loss*100, run.Direction, Commas(run.Stats.CwndMin), Commas(run.Stats.CwndMax))
		}
		if short != nil {
			if run.Stats.CwndSwing < CwndSwing {
				title = fmt.Sprintf("%s on the sender: cwnd stays at %s..%s bytes with %s retransmits, tunnel %s at %.0f%% of the underlay",
					strings.ToUpper(cc), Commas(run.Stats.CwndMin), Commas(run.Stats.CwndMax), Commas(run.Stats.Retransmits), run.Direction, short.Ratio*100)
			}
			evidence = append(evidence, finding.Evidence{Source: "iperf3", Key: "tunnel/underlay " + run.Direction,
				Value: fmt.Sprintf("%.2f", short.Ratio), Threshold: fmt.Sprintf(">= %.2f", short.Expected)}.Of(short.Ratio, finding.Ratio))
		}
		out = append(out, finding.Finding{
			ID: catalog.TCPCongestionControl, Severity: finding.Warning, Host: host,
			Title:    title,
			Detail:   "Loss-based congestion control halves its window at every lost tunnel packet and climbs back slowly; BBR paces by measured bandwidth and keeps the rate through random loss.",
			Evidence: evidence,
			Fixes:    bbrFixes(),
		})
	}
	return out
}

// PinningLoss is the retransmitted share of a loss-based stream's segments
// from which its window is the loss's, not the path's: at 0.5% (doctor's bar
// for a lossy path, as UDP outside the tunnel measures it) a Reno-like sender
// averages about 17 segments in flight (1.22/sqrt(p), the Mathis relation),
// two milliseconds' worth at 100 Mbit/s. The lossy-WAN case (2% loss both
// ways) retransmitted 0.7% to 4% of a 3 s sample's segments in the lab.
const PinningLoss = 0.005

// LossPinnedKey is the evidence key of a congestion-control finding whose
// window the loss pinned (lossPinned): the underlay's loss-based baseline
// crawls on the same loss, so the tunnel/underlay ratio cannot show its cost.
const LossPinnedKey = "retransmitted share of segments sent"

// assumedMSS turns a run's bytes and window into segments: the tunnel's MSS
// is not in iperf3's report, and a tunnel's (1368 at MTU 1420) is within a
// few percent of a LAN's, well inside the factor of two lossPinned allows.
const assumedMSS = 1380

// pathLoss is the retransmitted share of the segments a loss-based sender
// sent across the path in run's direction: the tunnel run and its repeats,
// with the underlay's runs that way when the same congestion control sent
// them (they cross the same path). One 3 s sample of a crawl holds about a
// dozen retransmits, too few alone to tell 2% loss from 0.5%: on kernel
// WireGuard in the lab, the lossy-WAN case's samples retransmitted 0.7% to 4%
// in the tunnel and 0.8% to 2.8% beside it, and one came within 0.91 of the
// underlay with doctor naming no cause. It returns the share and how many
// retransmits it counted.
func (r *Report) pathLoss(run Run) (share, retransmits float64) {
	segments, retransmits := sent(run)
	if u := find(r, PathUnderlay, run.Direction, run.Streams); u != nil && u.Result != nil && run.Result != nil && u.Result.Congestion == run.Result.Congestion {
		s, re := sent(*u)
		segments, retransmits = segments+s, retransmits+re
	}
	if segments < 1 {
		return 0, retransmits
	}
	return retransmits / (segments + retransmits), retransmits
}

// sent is about how many segments a run and its repeats carried, and how
// many they retransmitted.
func sent(run Run) (segments, retransmits float64) {
	if run.Result == nil {
		return 0, 0
	}
	segments, retransmits = segmentsSent(run.Stats.Mbit, run.Result.Seconds), float64(run.Stats.Retransmits)
	for _, rep := range run.Repeats {
		segments += segmentsSent(rep.Mbit, run.Result.Seconds)
		retransmits += float64(rep.Retransmits)
	}
	return segments, retransmits
}

// segmentsSent is about how many segments a stream of mbit carried in seconds.
func segmentsSent(mbit, seconds float64) float64 { return mbit * 1e6 / 8 * seconds / assumedMSS }

// lossPinned reports whether a single loss-based stream's window stayed
// where the path's loss holds it (at most twice the Mathis window for loss,
// the share of segments retransmitted, which is at least PinningLoss), and
// that share. Such a stream's rate is set by the loss, not by the path.
func lossPinned(run Run, loss float64) (float64, bool) {
	if run.Result == nil || run.Stats.Retransmits == 0 || run.Stats.CwndMax <= 0 || loss < PinningLoss {
		return loss, false
	}
	mathis := 1.22 / math.Sqrt(loss) // segments in flight on average
	return loss, float64(run.Stats.CwndMax)/assumedMSS <= 2*mathis
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

// notTheTunnelsSocket is the rcvbuf finding when the sockets show the
// tunnel's own socket dropped nothing: the datagrams were another socket's
// (a test's own, or one that closed during the run). It is a note, with no
// buffer to raise for the tunnel: kernel WireGuard receives through the UDP
// stack's encapsulation hook and has no socket queue at all.
func notTheTunnelsSocket(host target.Spec, rcv int64, others map[int]uint64) finding.Finding {
	ports := make([]int, 0, len(others))
	for p := range others {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	where := "a socket that closed during the run (a test's own)"
	var parts []string
	for _, p := range ports {
		parts = append(parts, fmt.Sprintf("port %d: %s", p, Commas(int64(others[p]))))
	}
	if len(parts) > 0 {
		where = "other sockets (" + strings.Join(parts, ", ") + ")"
	}
	return finding.Finding{
		ID: catalog.UDPRcvbufErrors, Severity: finding.Info, Host: host,
		Title: fmt.Sprintf("UDP receive buffers overflowed under tunnel load (%s datagrams), but not the tunnel's socket", Commas(rcv)),
		Detail: "The drops were on " + where + ": the tunnel's own socket dropped nothing, so its buffers are not what limits it. " +
			"Kernel WireGuard receives through the UDP stack's encapsulation hook and has no socket queue to overflow.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors (growth during tunnel runs)", Value: Commas(rcv), Threshold: "0"}.Of(float64(rcv), finding.Packets),
			finding.Evidence{Source: "/proc/net/udp", Key: "drops of the tunnel's socket (growth during tunnel runs)", Value: "0", Threshold: "0"}.Of(0, finding.Packets),
		},
		Fixes: []finding.Fix{{
			Description: "See which program owns the socket that dropped (its receive buffer is that program's to size)",
			Commands:    []string{"ss -uanpm", "grep Udp: /proc/net/snmp"},
		}},
	}
}

// UDPBufferTarget is the socket buffer limit suggested against drops.
const UDPBufferTarget = remedy.UDPBuffer

func hostFindings(r *Report) []finding.Finding {
	type agg struct {
		rcv, snd int64
		cpu      float64
		cpuIdx   int
		cpuRun   string
		// What the sockets say: the tunnel's own drops, other sockets'
		// by port, and whether every run read them with the tunnel's port known.
		tunnelDrops uint64
		others      map[int]uint64
		attributed  bool
		// Packets the per-CPU backlogs dropped, and where the most did.
		backlog    uint64
		backlogRun string
	}
	hosts := map[target.Key]*agg{}
	var names []target.Spec // the hosts, each once
	get := func(h target.Spec) *agg {
		if hosts[h.Key()] == nil {
			hosts[h.Key()] = &agg{cpuIdx: -1, others: map[int]uint64{}, attributed: true}
			names = append(names, h)
		}
		return hosts[h.Key()]
	}
	for _, run := range r.Runs {
		if run.Path != PathTunnel {
			continue
		}
		for _, d := range append([]HostDelta{run.Client, run.Server}, run.Hubs...) {
			if d.Host.IsZero() {
				continue
			}
			a := get(d.Host)
			a.rcv += d.UDPRcvbufErrors
			a.snd += d.UDPSndbufErrors
			a.attributed = a.attributed && d.SocketsKnown && d.TunnelPort > 0
			for _, sd := range d.Sockets {
				if sd.Tunnel {
					a.tunnelDrops += sd.Dropped
				} else {
					a.others[sd.Port] += sd.Dropped
				}
			}
			if d.SoftnetDropped > 0 {
				a.backlog += d.SoftnetDropped
				a.backlogRun = run.Spec.String()
			}
			if b, i := d.MaxCPU(); i >= 0 && b > a.cpu {
				a.cpu, a.cpuIdx, a.cpuRun = b, i, run.Spec.String()
			}
		}
	}
	sort.Slice(names, func(i, j int) bool { return names[i].String() < names[j].String() })
	var out []finding.Finding
	for _, h := range names {
		a := hosts[h.Key()]
		// Send errors alone are left to the passive check: Linux counts a send
		// refused by a full egress queue (a shaped uplink) the same way, and
		// only the host's facts tell the two apart. The runs' notes still say it.
		if a.rcv > 0 && a.attributed && a.tunnelDrops == 0 {
			out = append(out, notTheTunnelsSocket(h, a.rcv, a.others))
		} else if a.rcv > 0 {
			f := finding.Finding{
				ID: catalog.UDPRcvbufErrors, Severity: finding.Warning, Host: h,
				Title:  fmt.Sprintf("UDP buffers overflowed under tunnel load: %s receive, %s send errors", Commas(a.rcv), Commas(a.snd)),
				Detail: "Every error is a WireGuard packet the kernel dropped because a socket buffer was full; TCP inside the tunnel reads it as congestion.",
				Evidence: []finding.Evidence{
					finding.Evidence{Source: "/proc/net/snmp", Key: "Udp RcvbufErrors (growth during tunnel runs)", Value: Commas(a.rcv), Threshold: "0"}.Of(float64(a.rcv), finding.Packets),
					finding.Evidence{Source: "/proc/net/snmp", Key: "Udp SndbufErrors (growth during tunnel runs)", Value: Commas(a.snd), Threshold: "0"}.Of(float64(a.snd), finding.Packets),
				},
			}
			if a.attributed {
				f.Evidence = append(f.Evidence, finding.Evidence{Source: "/proc/net/udp", Key: "drops of the tunnel's socket (growth during tunnel runs)",
					Value: Commas(int64(a.tunnelDrops)), Threshold: "0"}.Of(float64(a.tunnelDrops), finding.Packets))
			}
			for _, k := range []string{"net.core.rmem_max", "net.core.rmem_default"} {
				raise, err := remedy.Sysctl(k, fmt.Sprint(UDPBufferTarget))
				f.Fixes = append(f.Fixes, remedy.Fixes(fmt.Sprintf("Raise %s to 25 MiB", k), raise, err)...)
			}
			out = append(out, f)
		}
		if a.backlog > 0 {
			out = append(out, backlogFinding(h, a.backlog, a.backlogRun))
		}
		if a.cpu >= CPUSaturatedPercent {
			out = append(out, finding.Finding{
				ID: catalog.CPUSaturated, Severity: finding.Warning, Host: h,
				Title:  fmt.Sprintf("CPU %d was %.0f%% busy during the %s run", a.cpuIdx, a.cpu, a.cpuRun),
				Detail: "Encryption and packet processing need a CPU; one at its limit is the tunnel's ceiling whatever the link can do.",
				Evidence: []finding.Evidence{
					finding.Evidence{Source: "/proc/stat", Key: fmt.Sprintf("cpu%d busy", a.cpuIdx), Value: fmt.Sprintf("%.0f%%", a.cpu), Threshold: fmt.Sprintf("< %.0f%%", CPUSaturatedPercent)}.Of(a.cpu, finding.Percent),
				},
				Fixes: []finding.Fix{{
					Description: "See what keeps the CPU busy (a userspace WireGuard process, kernel WireGuard's wg-crypt workers, softirq, another program) during a transfer",
					Commands:    []string{"top -b -n 1 -H | head -20", "cat /proc/net/softnet_stat"},
				}},
			})
		}
	}
	return out
}

// backlogFinding is net.backlog-drops measured: the per-CPU backlogs dropped
// packets while the tunnel ran, which the passive check's since-boot count
// cannot say. The host's softnet counters are the whole machine's, so both
// ends of a pair on one machine (the lab) see the same drops.
func backlogFinding(host target.Spec, dropped uint64, run string) finding.Finding {
	raise, err := remedy.Sysctl("net.core.netdev_max_backlog", fmt.Sprint(check.BacklogTarget))
	return finding.Finding{
		ID: catalog.NetBacklogDrops, Severity: finding.Warning, Host: host,
		Title: fmt.Sprintf("%s packets dropped at full backlog queues during tunnel runs (last in the %s run)", Commas(int64(dropped)), run),
		Detail: "Received packets wait in a per-CPU backlog until softirq processing takes them; a burst larger than " +
			"net.core.netdev_max_backlog drops the rest before WireGuard sees them, and TCP inside the tunnel backs off.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/proc/net/softnet_stat", Key: "dropped (growth during tunnel runs)", Value: Commas(int64(dropped)), Threshold: "0"}.Of(float64(dropped), finding.Packets),
		},
		Fixes: remedy.Fixes(fmt.Sprintf("Raise net.core.netdev_max_backlog to %d", check.BacklogTarget), raise, err),
	}
}
