package check

import (
	"fmt"
	"time"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// Thresholds of crossDelivery.
const (
	// deliveryMinBytes is the traffic a direction must have carried before its
	// loss is reported: below it, handshakes (counted by the sender only) and
	// the moment between the two collections are a visible share of the counters.
	deliveryMinBytes = 16 << 20
	// deliveryMinReverse is the traffic the other direction needs to be
	// compared with (about a thousand ACKs). That noise only ever makes loss
	// look larger, so a low loss on this little traffic is still a fair bound.
	deliveryMinReverse = 64 << 10
	// deliveryLoss is the share of a direction's bytes that may go missing.
	deliveryLoss = 0.02
	// deliveryMaxSkew is how far apart two snapshots may be taken and still be compared.
	deliveryMaxSkew = 5 * time.Minute
)

var crossDelivery = CrossCheck{
	Title: "One direction of a tunnel loses what the other delivers",
	Doc: `Matches both ends of each tunnel by public key and compares their WireGuard
transfer counters: what A counts as sent to B against what B counts as received
from A, and the reverse. The sender counts every datagram it handed to its
socket, the receiver only those that arrived and decrypted, so the gap is what
the path or the receiver's socket lost: one direction losing is what a PMTUD
black hole, a receiver dropping UDP or a one-sided link
problem looks like to a fleet. Warning when a direction that carried at least
16 MiB lost 2% or more while the other, carrying at least 64 KiB (its ACKs are
enough), lost under a third of that. Counters that cannot be compared are left
alone: a receiver that counts more than was sent (one end restarted since) or
snapshots taken more than 5 minutes apart.`,
	Run: runCrossDelivery,
}

// delivery is one direction of a tunnel as both ends' counters see it.
type delivery struct {
	from, to tunnelEnd
	sent     uint64 // from's tx_bytes to the peer to
	got      uint64 // to's rx_bytes from the peer from
}

func (d delivery) loss() float64 {
	if d.sent == 0 || d.got >= d.sent {
		return 0
	}
	return float64(d.sent-d.got) / float64(d.sent)
}

// comparable is false when the receiver counts clearly more than the sender
// sent: the counters started at different times.
func (d delivery) comparable() bool {
	return d.got <= d.sent+max(d.sent/100, 64<<10)
}

func runCrossDelivery(snaps []*facts.Snapshot, _ Options) []finding.Finding {
	var out []finding.Finding
	for _, p := range pairTunnels(snaps) {
		if !p.bKnowsA {
			continue
		}
		skew := p.a.snap.CollectedAt.Sub(p.b.snap.CollectedAt)
		if skew < -deliveryMaxSkew || skew > deliveryMaxSkew {
			continue
		}
		ab := delivery{from: p.a, to: p.b, sent: p.a.peer.TxBytes, got: p.b.peer.RxBytes}
		ba := delivery{from: p.b, to: p.a, sent: p.b.peer.TxBytes, got: p.a.peer.RxBytes}
		if !ab.comparable() || !ba.comparable() {
			continue
		}
		for _, d := range [][2]delivery{{ab, ba}, {ba, ab}} {
			if f, ok := deliveryFinding(d[0], d[1]); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// deliveryFinding reports d when it lost more than deliveryLoss and the
// reverse direction rev far less.
func deliveryFinding(d, rev delivery) (finding.Finding, bool) {
	if d.sent < deliveryMinBytes || d.loss() < deliveryLoss || rev.sent < deliveryMinReverse || rev.loss() >= d.loss()/3 {
		return finding.Finding{}, false
	}
	from, to := hostName(d.from.snap), hostName(d.to.snap)
	return finding.Finding{
		ID:        catalog.ThroughputAsymmetric,
		Severity:  finding.Warning,
		Host:      hostOf(d.from.snap),
		Interface: d.from.iface.Name,
		Peer:      d.to.iface.PublicKey,
		Title: fmt.Sprintf("%.1f%% of what %s sent %s through %s never arrived; the other way lost %.1f%%",
			100*d.loss(), from, to, d.from.iface.Name, 100*rev.loss()),
		Detail: "The sender's counter includes every datagram it sent, the receiver's only those that arrived. Loss in one " +
			"direction only points at that direction's path or receiver: packets too big for a hop whose ICMP is blocked, " +
			"or a receiver whose UDP socket buffer overflows. Measure that direction and diagnose the receiving end.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "wg show " + d.from.iface.Name + " dump (" + from + ")", Key: "transfer sent to " + finding.ShortKey(d.to.iface.PublicKey), Value: utoa(d.sent) + " bytes"}.Of(float64(d.sent), finding.Bytes),
			finding.Evidence{Source: "wg show " + d.to.iface.Name + " dump (" + to + ")", Key: "transfer received from " + finding.ShortKey(d.from.iface.PublicKey), Value: utoa(d.got) + " bytes"}.Of(float64(d.got), finding.Bytes),
			finding.Evidence{Source: "both ends", Key: "lost " + from + " -> " + to, Value: fmt.Sprintf("%.1f%%", 100*d.loss()), Threshold: fmt.Sprintf("< %.0f%%", 100*deliveryLoss)}.Of(100*d.loss(), finding.Percent),
			finding.Evidence{Source: "both ends", Key: "lost " + to + " -> " + from, Value: fmt.Sprintf("%.1f%% of %s", 100*rev.loss(), mib(int64(rev.sent))),
				Threshold: fmt.Sprintf("< %.1f%% (a third of the other way)", 100*d.loss()/3)}.Of(100*rev.loss(), finding.Percent),
		},
		Fixes: []finding.Fix{deliveryFix(from, to)},
	}, true
}

// deliveryFix measures the lossy direction from one end to the other and
// diagnoses the receiver.
func deliveryFix(from, to string) finding.Fix {
	return finding.Fix{
		Description: fmt.Sprintf("Measure %s -> %s, probe its path MTU and diagnose the receiver", from, to),
		Commands: []string{
			shell.Join("wgperf", "bench", "--client", from, "--server", to),
			shell.Join("wgperf", "mtu", "--client", from, "--server", to),
			shell.Join("wgperf", "diagnose", "--host", to),
		},
	}
}
