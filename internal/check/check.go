// Package check turns facts into findings. A check is a small self-described
// value (ID, Title, Doc, Run) in the style of go/analysis: Run is pure — it reads
// a facts.Snapshot and returns findings, with no I/O, no clock and no globals —
// so every check is table-tested on recorded or hand-built snapshots.
//
// Per-host checks look at one snapshot; cross-host checks look at several and
// match the two ends of a tunnel by public key. The finding IDs and what
// they are live in internal/catalog; Catalog (catalog.go) adds, per ID, the
// check and cross-host check that report it, the probes' words, the
// remedies its findings may carry and an example of its fix (by area, in
// catalog_AREA.go). Checks and CrossChecks are derived from it.
package check

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target"
)

// Check inspects one host's snapshot. Its catalog entry gives it its ID and
// title.
type Check struct {
	ID finding.ID // its catalog entry's (set by Checks)
	// Doc says what the check looks at, the threshold it applies and why,
	// naming the real case the rule comes from.
	Doc string
	// Run returns the findings for s. It returns a *SkipError when the facts it
	// needs were not collected, and no other error.
	Run func(s *facts.Snapshot, o Options) ([]finding.Finding, error)
}

// CrossCheck inspects several hosts together, e.g. both ends of a tunnel.
type CrossCheck struct {
	ID    finding.ID // its catalog entry's (set by CrossChecks)
	Title string
	Doc   string
	Run   func(snaps []*facts.Snapshot, o Options) []finding.Finding
}

// Options are the assumptions checks cannot learn from the facts.
type Options struct {
	// Now is the moment handshake ages are measured against. Zero means each
	// snapshot's own CollectedAt, which is right for snapshots read from files.
	Now time.Time
	// PathRateMbit and PathRTT describe the path TCP should fill; their product
	// is the bandwidth-delay product tcp.buffers-small compares buffers with.
	// Zero means DefaultPathRateMbit and DefaultPathRTT.
	PathRateMbit float64
	PathRTT      time.Duration
}

// Defaults for the bandwidth-delay product: a gigabit path across a region.
const (
	DefaultPathRateMbit = 1000
	DefaultPathRTT      = 20 * time.Millisecond
)

func (o Options) now(s *facts.Snapshot) time.Time {
	if !o.Now.IsZero() {
		return o.Now
	}
	return s.CollectedAt
}

// bdpBytes is the bandwidth-delay product of the assumed path, in bytes.
func (o Options) bdpBytes() int64 {
	rate, rtt := o.PathRateMbit, o.PathRTT
	if rate <= 0 {
		rate = DefaultPathRateMbit
	}
	if rtt <= 0 {
		rtt = DefaultPathRTT
	}
	return int64(rate * 1e6 / 8 * rtt.Seconds())
}

func (o Options) pathDescription() string {
	rate, rtt := o.PathRateMbit, o.PathRTT
	if rate <= 0 {
		rate = DefaultPathRateMbit
	}
	if rtt <= 0 {
		rtt = DefaultPathRTT
	}
	return fmt.Sprintf("%g Mbit/s × %s", rate, rtt)
}

// SkipError says a check could not run on a host, and why.
type SkipError struct{ Reason string }

func (e *SkipError) Error() string { return e.Reason }

func skipf(format string, args ...any) error {
	return &SkipError{Reason: fmt.Sprintf(format, args...)}
}

// Skip records a check that did not run on a host.
type Skip struct {
	Check  finding.ID  `json:"check"`
	Host   target.Spec `json:"host"`
	Reason string      `json:"reason"`
}

// Result is what running the registry over some snapshots produced.
type Result struct {
	Findings []finding.Finding
	Skipped  []Skip
}

// Run runs every registered check over every snapshot, then every cross-host
// check over all of them, and returns the findings sorted most severe first.
func Run(snaps []*facts.Snapshot, o Options) Result {
	return run(Checks, CrossChecks, snaps, o)
}

func run(checks []Check, cross []CrossCheck, snaps []*facts.Snapshot, o Options) Result {
	var r Result
	for _, s := range snaps {
		for _, c := range checks {
			fs, err := c.Run(s, o)
			var skip *SkipError
			switch {
			case errors.As(err, &skip):
				r.Skipped = append(r.Skipped, Skip{Check: c.ID, Host: hostOf(s), Reason: skip.Reason})
				continue
			case err != nil:
				// Checks are pure and only skip; anything else is a bug worth seeing.
				r.Skipped = append(r.Skipped, Skip{Check: c.ID, Host: hostOf(s), Reason: "internal error: " + err.Error()})
				continue
			}
			r.Findings = append(r.Findings, fs...)
		}
	}
	if len(snaps) > 1 {
		for _, c := range cross {
			r.Findings = append(r.Findings, c.Run(snaps, o)...)
		}
	}
	finding.Sort(r.Findings)
	sort.SliceStable(r.Skipped, func(i, j int) bool {
		if r.Skipped[i].Check != r.Skipped[j].Check {
			return r.Skipped[i].Check < r.Skipped[j].Check
		}
		return r.Skipped[i].Host.String() < r.Skipped[j].Host.String()
	})
	return r
}

// hostOf is a snapshot's host, as its findings carry it.
func hostOf(s *facts.Snapshot) target.Spec { return s.Host }

// hostName names a snapshot's host in a finding's text: its target spec.
func hostName(s *facts.Snapshot) string { return s.Host.String() }
