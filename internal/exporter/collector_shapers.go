package exporter

// A rate limit on a device's egress: set on a tunnel against one problem,
// it becomes the tunnel's ceiling once the path outgrows it (the remote
// users' wg0 cap, raised from 150 to 450 Mbit/s after their buffer fix).
var descShaperRate = desc("link_shaper_rate_bits_per_second",
	"The rate a device's root qdisc holds its egress to: tbf's rate, cake's bandwidth, or the largest ceil of an htb's root classes.",
	"interface", "qdisc")

var shapersCollector = collector{
	name:  "link_shaper",
	doc:   "Each device whose root qdisc shapes its egress (tc -j qdisc show, tc class show for htb): the rate it holds it to. On a tunnel's interface, compare it with what the path carries.",
	descs: []*Desc{descShaperRate},
	emit: func(h hostFacts, e *emitter) {
		for _, l := range h.snap.Links {
			if l.Shaper != nil && l.Shaper.Valid() {
				e.gauge(descShaperRate, l.Shaper.RateMbit*1e6, l.Name, l.Shaper.Qdisc)
			}
		}
	},
}
