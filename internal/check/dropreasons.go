package check

import (
	"slices"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
)

// DropReasonFindings names, for a kernel drop reason (enum skb_drop_reason,
// without its SKB_DROP_REASON_ prefix), the findings whose cause drops
// packets for it: the sampler's count becomes evidence on them. A reason
// no entry names, or whose findings did not fire, is a kernel.drops finding
// of its own. The names are the kernel's own and stable; their values are
// not, and are read from the running kernel (internal/probe/drops).
var DropReasonFindings = map[string][]finding.ID{
	"SOCKET_RCVBUFF":     {catalog.UDPRcvbufErrors},
	"CPU_BACKLOG":        {catalog.NetBacklogDrops, catalog.CPUSoftirqImbalance},
	"NETFILTER_DROP":     {catalog.ICMPRatelimitDrops, catalog.ConntrackTablePressure, catalog.MTUPMTUDBlackhole},
	"PKT_TOO_BIG":        {catalog.MTUTunnelTooLarge, catalog.MTUPMTUDBlackhole},
	"FRAG_REASM_TIMEOUT": {catalog.MTUTunnelTooLarge, catalog.MTUPMTUDBlackhole},
	"FRAG_TOO_FAR":       {catalog.MTUTunnelTooLarge},
	"DUP_FRAG":           {catalog.MTUTunnelTooLarge},
	"IP_OUTNOROUTES":     {catalog.RouteStaleEndpoint},
}

// dropNoise are reasons a healthy host drops for in its ordinary course,
// which cost a tunnel nothing: everywhere (no functions named) a connection
// closing, a socket torn down, a frame for another host on a shared segment;
// only where the named functions count them, NO_SOCKET in TCP's receive: a
// segment for a connection already closed, the bench's own flows' segments
// still queued when a test's socket closes (a lab shaper's 200 ms queue at
// 80 Mbit/s holds over a thousand: 1,000 and more counted in one run of the
// ICMP-limit case, a warning no case caused), where NO_SOCKET in UDP's
// receive is a datagram to a port nobody listens on: a tunnel sent to the
// wrong port.
var dropNoise = map[string][]string{
	"TCP_CLOSE":       nil,
	"SOCKET_CLOSE":    nil,
	"QUEUE_PURGE":     nil,
	"OTHERHOST":       nil,
	"UNIX_DISCONNECT": nil,
	"NO_SOCKET":       {"tcp_v4_rcv", "tcp_v6_rcv"},
}

// DropNoise reports whether drops for reason counted in function cost a
// tunnel nothing (dropNoise).
func DropNoise(reason, function string) bool {
	where, ok := dropNoise[reason]
	return ok && (where == nil || slices.Contains(where, function))
}
