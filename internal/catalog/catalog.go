// Package catalog names every finding wgperf reports: its stable ID, what it
// is and why it matters, the real cases it comes from, and what drives
// doctor's ranking and plan for it (Doctor), with the names of the targeted
// probes doctor may call. It is a leaf: checks, probes, doctor, the lab's
// scenarios, the exporter and the docs import it for the IDs, and nothing
// in it runs a check or a probe. What reports a finding and how it is fixed
// live with the code that reports it (the package check's Catalog adds
// them).
//
// The entries are kept one file per area (link.go, cpu.go, mtu.go...), each
// with its ID constants: a new finding is its constant and its entry there.
package catalog

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// ID is a finding's stable ID ("mtu.tunnel-too-large"): JSON consumers,
// alerts, docs and "wgperf fix --only" rely on it. Producers declare the
// IDs they raise as a []catalog.ID.
type ID = finding.ID

// Entry is what wgperf says about one finding ID, whatever reports it.
type Entry struct {
	ID    ID
	Title string // one line: "wgperf checks" lists it, and it names the per-host check
	// Severities are those its findings may carry, lowest first.
	Severities []finding.Severity
	// Why says what it costs, in a few sentences.
	Why string
	// Cases are the real investigations it comes from (Case*), none for a
	// general health check.
	Cases []string
	// Doctor is what drives doctor's ranking, verdict and probe plan.
	Doctor Doctor
}

// The real investigations the catalog comes from, named by what happened (the
// README's case list uses the same words; the lab's scenarios reproduce them).
const (
	CaseMultiWAN    = "multi-WAN router: endpoint route stuck on the backup uplink"
	CasePMTUD       = "PMTUD black hole between two sites with ICMP blocked"
	CaseTuning      = "tunnel below 90% of its link (tuning guide)"
	CaseECMP        = "more than one link's worth: ECMP over several tunnels and a bond"
	CaseRemoteUsers = "remote users at 5 Mbit/s over a 400 Mbit/s path"
)

// Cases lists the case names, in the README's order.
var Cases = []string{CaseMultiWAN, CasePMTUD, CaseTuning, CaseECMP, CaseRemoteUsers}

// costsThroughFailures is the gain of a cause no steady-rate figure shows.
const costsThroughFailures = "not visible in the bench: it costs through failovers or failed connections, not the steady rate"

// Entries is every finding ID wgperf reports, sorted by ID.
var Entries = byID(slices.Concat(linkEntries, conntrackEntries, cpuEntries, mtuEntries, pathEntries, throughputEntries, wgEntries))

// byID sorts the entries by ID, as Entries lists them.
func byID(es []Entry) []Entry {
	slices.SortFunc(es, func(a, b Entry) int { return strings.Compare(string(a.ID), string(b.ID)) })
	return es
}

// IDs lists every catalog ID, sorted.
func IDs() []ID {
	out := make([]ID, len(Entries))
	for i, e := range Entries {
		out[i] = e.ID
	}
	return out
}

// Lookup returns the entry of id.
func Lookup(id ID) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(Entries, id, func(e Entry, id ID) int { return strings.Compare(string(e.ID), string(id)) })
	if !ok {
		return Entry{}, false
	}
	return Entries[i], true
}

// Has reports whether id is a catalog ID.
func Has(id ID) bool {
	_, ok := Lookup(id)
	return ok
}
