package exporter

import "github.com/wgperf/wgperf/internal/finding"

// The passive checks' findings, one alert each.
var (
	descFinding  = desc("finding", "A finding of wgperf's passive checks that is present now (always 1).", "id", "severity", "interface", "peer")
	descFindings = desc("findings", "How many findings of each severity are present now.", "severity")
)

var findingsCollector = collector{
	name: "findings",
	doc: "The findings the passive checks make on the collection, one series per check, severity, interface and peer, " +
		"and how many there are of each severity (0 included, so an alert can tell none from no data).",
	descs: []*Desc{descFinding, descFindings},
	emit: func(h hostFacts, e *emitter) {
		bySeverity := map[finding.Severity]int{}
		seen := map[[4]string]bool{}
		for _, f := range h.result.Findings {
			// Two findings of one check on the same interface and peer (say, one
			// per endpoint address) are one alert; a repeated series would fail the scrape.
			key := [4]string{string(f.ID), f.Severity.String(), f.Interface, f.Peer}
			if seen[key] {
				continue
			}
			seen[key] = true
			bySeverity[f.Severity]++
			e.gauge(descFinding, 1, key[:]...)
		}
		for _, sev := range []finding.Severity{finding.Info, finding.Warning, finding.Critical} {
			e.gauge(descFindings, float64(bySeverity[sev]), sev.String())
		}
	},
}
