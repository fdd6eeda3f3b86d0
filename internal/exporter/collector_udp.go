package exporter

// UDP's buffer drops: WireGuard's outer packets lost to a socket buffer too
// small for the tunnel's rate.
var (
	descUDPRcvbuf   = desc("udp_rcvbuf_errors_total", "UDP datagrams dropped because a socket receive buffer was full (/proc/net/snmp Udp RcvbufErrors).")
	descUDPSndbuf   = desc("udp_sndbuf_errors_total", "UDP datagrams dropped because a socket send buffer was full (Udp SndbufErrors).")
	descUDPInErrors = desc("udp_in_errors_total", "UDP datagrams received with errors, buffer drops included (Udp InErrors).")
)

var udpCollector = collector{
	name:  "udp",
	doc:   "The kernel's UDP error counters (/proc/net/snmp Udp), each when the host reports it.",
	descs: []*Desc{descUDPRcvbuf, descUDPSndbuf, descUDPInErrors},
	emit: func(h hostFacts, e *emitter) {
		snmpCounter(h, e, descUDPRcvbuf, "Udp", "RcvbufErrors")
		snmpCounter(h, e, descUDPSndbuf, "Udp", "SndbufErrors")
		snmpCounter(h, e, descUDPInErrors, "Udp", "InErrors")
	},
}

// snmpCounter emits a /proc/net/snmp counter as d when the host has it.
func snmpCounter(h hostFacts, e *emitter, d *Desc, group, key string) {
	if v, ok := h.snap.Counters.SNMP[group][key]; ok {
		e.counter(d, float64(v))
	}
}
