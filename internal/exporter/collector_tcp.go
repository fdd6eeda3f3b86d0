package exporter

// TCP's retransmits, the loss a tunnel's inner flows see.
var (
	descTCPRetrans = desc("tcp_retransmitted_segments_total", "TCP segments retransmitted (/proc/net/snmp Tcp RetransSegs).")
	descTCPOutSegs = desc("tcp_out_segments_total", "TCP segments sent (Tcp OutSegs); the denominator of the retransmit ratio.")
)

var tcpCollector = collector{
	name:  "tcp",
	doc:   "The kernel's TCP segment counters (/proc/net/snmp Tcp): retransmitted and sent, whose ratio is the loss TCP meets.",
	descs: []*Desc{descTCPRetrans, descTCPOutSegs},
	emit: func(h hostFacts, e *emitter) {
		snmpCounter(h, e, descTCPRetrans, "Tcp", "RetransSegs")
		snmpCounter(h, e, descTCPOutSegs, "Tcp", "OutSegs")
	},
}
