package check

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// Explanation is what "wgperf explain ID" prints: what a finding means, what
// raises it (each check or probe that reports it, in its own words) and so
// what to do about it.
type Explanation struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	By    []Source `json:"by"`
	// Why says what the finding costs, in a few sentences.
	Why string `json:"why"`
	// Cases are the real investigations the finding comes from (Cases), none
	// for a general health check.
	Cases []string `json:"cases"`
	// Example is its fix on an example host: "wgperf fix" computes the values
	// for the real one.
	Example Example `json:"example"`
}

// Example is a finding's fix for one described host.
type Example struct {
	Host  string        `json:"host"` // the situation the fixes are written for
	Fixes []finding.Fix `json:"fixes"`
}

// Applicable reports whether "wgperf fix" can apply some fix of the
// finding; the others are diagnostic steps to take by hand.
func (e Explanation) Applicable() bool {
	for _, f := range e.Example.Fixes {
		if f.Action != nil {
			return true
		}
	}
	return false
}

// Source is one check or probe that reports an ID.
type Source struct {
	Kind string `json:"kind"` // "check", "cross-host check" or "probe"
	Name string `json:"name"` // the probe's command; the check's title
	Doc  string `json:"doc"`
}

// probeTitles name the IDs only probes report, as a check's Title does.
var probeTitles = map[string]string{
	finding.CPUSaturated:          "A CPU is the ceiling: above 90% busy while the tunnel carries traffic",
	finding.MTUPMTUDBlackhole:     "PMTUD black hole: large packets vanish and no ICMP says why",
	finding.ThroughputOscillation: "Throughput collapses periodically on a shaped uplink",
	finding.ThroughputTunnelRatio: "The tunnel carries less than 90% of the link under it",
}

// probeDocs describe the IDs only active measurements can prove: a snapshot
// alone cannot see a black hole or a tunnel slower than its link.
var probeDocs = map[string]Source{
	finding.CPUSaturated: {Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Samples /proc/stat on both ends while the tunnel
carries a bench run. A CPU above 90% busy during a tunnel run is the ceiling:
encryption and packet processing for a userspace or single-queue tunnel pile
onto one core, so the tunnel cannot go faster however the network is tuned.
The tuning guide's first question. Fix: spread the load (RPS, IRQ affinity),
or accept the ceiling; in a lab that shares one machine, it describes the
machine rather than the tunnel.`},
	finding.MTUPMTUDBlackhole: {Kind: "probe", Name: "wgperf mtu (and doctor, lab run)", Doc: `Sends don't-fragment probes towards the peer's endpoint
(ping -M do, or BusyBox traceroute -F on a router) at likely path MTUs, then
bisects; large probes that vanish without an ICMP "fragmentation needed" mean
a PMTUD black hole. Through the tunnel, TCP MSS stepping proves the cliff:
one MSS runs, one byte more collapses. The case: between two sites with ICMP
blocked, one direction ran at full speed and the other at 30 KB/s. Fix: a
WireGuard MTU that fits the path (path MTU - 60 for IPv4, - 80 for IPv6) on
both ends, and an MSS clamp where the gateways forward LAN traffic.`},
	finding.ThroughputOscillation: {Kind: "probe", Name: "wgperf bench / shape-sweep", Doc: `Reads iperf3's per-second intervals: throughput that
collapses periodically (a sawtooth of loss and recovery) on a shaped uplink.
The case: remote users' uploads swung between full rate and a fraction every
15-20 s. Fix: a tbf cap just below the knee (wgperf shape-sweep finds it),
which trades a little peak for a steady rate.`},
	finding.ThroughputTunnelRatio: {Kind: "probe", Name: "wgperf bench (and doctor, lab run)", Doc: `Runs iperf3 through the tunnel and around it (to the
peer's endpoint address), both directions, single and parallel streams. A
healthy single-hop tunnel carries at least 90% of the link under it (the
tuning guide's rule; 50% of the worst hop over several hops). Below that it is
a symptom: wgperf doctor ranks the causes the other findings name.`},
}

// Explain returns what is known about a catalog ID.
func Explain(id string) (Explanation, bool) {
	if !InCatalog(id) {
		return Explanation{}, false
	}
	e := Explanation{ID: id}
	add := func(kind, title, doc string) {
		if e.Title == "" {
			e.Title = title
		}
		e.By = append(e.By, Source{Kind: kind, Name: title, Doc: doc})
	}
	for _, c := range Checks {
		if c.ID == id {
			add("check", c.Title, c.Doc)
		}
	}
	for _, c := range CrossChecks {
		if c.ID == id {
			add("cross-host check", c.Title, c.Doc)
		}
	}
	if p, ok := probeDocs[id]; ok {
		if e.Title == "" {
			e.Title = probeTitles[id]
		}
		e.By = append(e.By, p)
	}
	if a, ok := abouts[id]; ok {
		e.Why = oneLine(a.why)
		e.Cases = append([]string{}, a.cases...)
		e.Example = Example{Host: a.example, Fixes: a.fixes()}
	}
	return e, len(e.By) > 0
}

// oneLine joins a wrapped paragraph into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Explanations is the whole catalog, explained, sorted by ID.
func Explanations() []Explanation {
	out := make([]Explanation, 0, len(Catalog))
	for _, id := range Catalog {
		if e, ok := Explain(id); ok {
			out = append(out, e)
		}
	}
	return out
}

// Suggest lists catalog IDs that contain s, for an ID typed wrong.
func Suggest(s string) []string {
	s = strings.ToLower(s)
	var out []string
	for _, id := range Catalog {
		if strings.Contains(id, s) || strings.Contains(s, id) || strings.HasPrefix(id, strings.SplitN(s, ".", 2)[0]+".") {
			out = append(out, id)
		}
	}
	return slices.Compact(out)
}
