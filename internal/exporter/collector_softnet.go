package exporter

import "strconv"

// Each CPU's packet backlog: drops when netdev_max_backlog is exhausted, and
// squeezes when one CPU carries the tunnel's packet processing alone.
var (
	descSoftnetProc = desc("softnet_processed_total", "Packets processed by the CPU's backlog (/proc/net/softnet_stat).", "cpu")
	descSoftnetDrop = desc("softnet_dropped_total", "Packets dropped because the CPU's backlog was full (netdev_max_backlog).", "cpu")
	descSoftnetSqz  = desc("softnet_time_squeeze_total", "Times the CPU's packet processing ran out of budget with work left.", "cpu")
)

var softnetCollector = collector{
	name:  "softnet",
	doc:   "Each CPU's line of /proc/net/softnet_stat: packets processed, dropped for a full backlog, and budget squeezes.",
	descs: []*Desc{descSoftnetProc, descSoftnetDrop, descSoftnetSqz},
	emit: func(h hostFacts, e *emitter) {
		for _, c := range h.snap.Softnet {
			cpu := strconv.Itoa(c.CPU)
			e.counter(descSoftnetProc, float64(c.Processed), cpu)
			e.counter(descSoftnetDrop, float64(c.Dropped), cpu)
			e.counter(descSoftnetSqz, float64(c.TimeSqueeze), cpu)
		}
	},
}
