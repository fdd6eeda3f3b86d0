package exporter

// The checks that could not run: a finding that cannot fire is not the same
// as one that did not.
var descCheckSkipped = desc("check_skipped", "A check that could not run on the host because the facts it needs were not collected (always 1).", "check")

var skippedChecksCollector = collector{
	name:  "check_skipped",
	doc:   "Each passive check that skipped the host because the facts it needs were not collected, once however many reasons it gave.",
	descs: []*Desc{descCheckSkipped},
	emit: func(h hostFacts, e *emitter) {
		seen := map[string]bool{}
		for _, sk := range h.result.Skipped {
			if name := string(sk.Check); !seen[name] {
				seen[name] = true
				e.gauge(descCheckSkipped, 1, name)
			}
		}
	},
}
