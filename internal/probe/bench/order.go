package bench

import (
	"fmt"
)

// TCPOrder is what a host's TCP counted of segment order during a run
// (/proc/net/snmp Tcp, /proc/net/netstat TcpExt).
//
// A receiver queues every segment that arrives behind a gap (TCPOFOQueue),
// whether the gap is a lost segment or a late one: in the lab, 3% random
// loss without any reordering had the receiver queue 86,730 of 96,345
// segments (90%) out of order. The sender tells the two apart: it counts
// reordering when a segment it thought lost turns out to have arrived
// (TCPSACKReorder, TCPTSReorder, TCPRenoReorder), and there it counted 8
// against 4,064 retransmissions; with 2% of the packets 3 ms late and none
// lost, the receiver queued 67% out of order (no fewer) and the sender
// counted 2,363 against 758. So out-of-order counts alone mostly mean loss;
// reordering is the sender's detections weighed against its retransmissions
// (Reordered). Segments are counted as TCP sees them, a
// GRO-merged train as one, in InSegs and OFOQueue alike: their share
// compares like with like.
type TCPOrder struct {
	InSegs  int64 `json:"in_segs"`
	OutSegs int64 `json:"out_segs"`
	// OFOQueue are segments received behind a gap and queued; OFODrop
	// those dropped there for want of receive buffer; OFOMerge those
	// already queued (duplicates).
	OFOQueue int64 `json:"ofo_queue"`
	OFODrop  int64 `json:"ofo_drop"`
	OFOMerge int64 `json:"ofo_merge"`
	// SACKReorder, TSReorder and RenoReorder are the times the sender
	// found a segment it had counted lost delivered after all, through
	// SACK blocks, timestamps or duplicate ACKs.
	SACKReorder int64 `json:"sack_reorder"`
	TSReorder   int64 `json:"ts_reorder"`
	RenoReorder int64 `json:"reno_reorder"`
}

// Thresholds of Reordered: shares, so that a fast host and a slow one
// running the same path get the same verdict.
const (
	// ReorderOfRetransmits: the sender's reorder detections are at least
	// this share of its retransmissions. Under loss alone they are a few per
	// thousand (8 against 4,064 in the lab); reordering makes them as
	// common as the retransmissions it provokes, or more (2,363 against 758
	// in the lab: RACK waits out most late segments instead of resending).
	ReorderOfRetransmits = 0.1
	// ReorderPerSegment: and at least one per 10,000 segments sent, so a
	// long clean run's stray detection is no verdict.
	ReorderPerSegment = 1e-4
)

// Shares below which the order lines stay quiet: a busy host's few late
// segments and stray retransmissions are not worth a line in every run.
const (
	outOfOrderNote = 0.01  // of the segments received
	lossNote       = 0.001 // retransmitted, of the segments sent
)

// tcpOrder is the growth of the order counters between two samples, nil
// when either lacks /proc/net/netstat's TcpExt.
func tcpOrder(before, after map[string]map[string]int64) *TCPOrder {
	if before["TcpExt"] == nil || after["TcpExt"] == nil {
		return nil
	}
	grew := func(group, key string) int64 {
		return max(after[group][key]-before[group][key], 0) // a reset counts nothing
	}
	return &TCPOrder{
		InSegs: grew("Tcp", "InSegs"), OutSegs: grew("Tcp", "OutSegs"),
		OFOQueue: grew("TcpExt", "TCPOFOQueue"), OFODrop: grew("TcpExt", "TCPOFODrop"), OFOMerge: grew("TcpExt", "TCPOFOMerge"),
		SACKReorder: grew("TcpExt", "TCPSACKReorder"), TSReorder: grew("TcpExt", "TCPTSReorder"), RenoReorder: grew("TcpExt", "TCPRenoReorder"),
	}
}

// ReorderSeen is how many times the host, sending, found its segments reordered.
func (t TCPOrder) ReorderSeen() int64 { return t.SACKReorder + t.TSReorder + t.RenoReorder }

// OutOfOrderShare is the share of the segments received that arrived behind
// a gap (0 when none were received).
func (t TCPOrder) OutOfOrderShare() float64 {
	if t.InSegs <= 0 {
		return 0
	}
	return float64(t.OFOQueue) / float64(t.InSegs)
}

// Reordered says the host, sending, saw the path reorder its segments: its
// reorder detections are large next to its retransmissions (at least
// ReorderOfRetransmits of them) and not a stray few (ReorderPerSegment of
// the segments sent).
func (d HostDelta) Reordered() bool {
	if d.TCP == nil || d.TCP.OutSegs <= 0 {
		return false
	}
	seen := float64(d.TCP.ReorderSeen())
	return seen > 0 && seen >= ReorderOfRetransmits*float64(d.TCPRetransSegs) && seen >= ReorderPerSegment*float64(d.TCP.OutSegs)
}

// orderLines say what the host's TCP saw of segment order: out-of-order
// arrivals as a share of the segments received (from 1%), and, where the
// host sent, whether its detections make them reordering or, where it
// retransmitted 0.1% or more, loss.
func (d HostDelta) orderLines(who string) []string {
	t := d.TCP
	if t == nil {
		return nil
	}
	var out []string
	if t.OutOfOrderShare() >= outOfOrderNote {
		out = append(out, fmt.Sprintf("%s received %s of %s segments out of order (%.0f%%, TCPOFOQueue): each behind a gap, a lost segment's or a late one's",
			who, Commas(t.OFOQueue), Commas(t.InSegs), 100*t.OutOfOrderShare()))
	}
	if t.OFODrop > 0 {
		out = append(out, fmt.Sprintf("%s dropped %s out-of-order segments: no room left in its receive buffer (TCPOFODrop)", who, Commas(t.OFODrop)))
	}
	seen := t.ReorderSeen()
	switch {
	case d.Reordered():
		out = append(out, fmt.Sprintf("%s found its segments reordered %s times against %s retransmissions (TCPSACKReorder %s, TCPTSReorder %s, TCPRenoReorder %s): "+
			"the path delivers packets out of order: per-packet balancing over unequal links (a bond in balance-rr, per-packet ECMP) or a receive path that spreads one flow over CPUs",
			who, Commas(seen), Commas(d.TCPRetransSegs), Commas(t.SACKReorder), Commas(t.TSReorder), Commas(t.RenoReorder)))
	case seen > 0 && float64(d.TCPRetransSegs) >= lossNote*float64(t.OutSegs):
		out = append(out, fmt.Sprintf("%s found its segments reordered only %s times against %s retransmissions: out-of-order arrivals behind them are loss, not reordering",
			who, Commas(seen), Commas(d.TCPRetransSegs)))
	}
	return out
}
