package check

import (
	"fmt"
	"math"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// A shaper on the tunnel holds it when the tunnel reached capReached of the
// cap's rate (a tbf counts inner IP packets, the bench TCP's payload) while
// the underlay carried capExceeded times the cap or more.
const (
	capReached  = 0.8
	capExceeded = 1.15
)

// ShaperCapFinding is throughput.shaper-cap for one direction of a bench:
// link is the sending end's tunnel interface, which a shaper holds to about
// the rate the tunnel carried while the underlay carried well above it.
// dir is "upload" or "download"; ok is false when the cap did not bind or
// the path was no faster. It is pure.
func ShaperCapFinding(host target.Spec, link facts.Link, dir string, tunnelMbit, underlayMbit float64) (finding.Finding, bool) {
	sh := link.Shaper
	// A shaper collect did not read this way is a snapshot edited by hand.
	if sh == nil || !sh.Valid() || tunnelMbit < capReached*sh.RateMbit || underlayMbit < capExceeded*sh.RateMbit {
		return finding.Finding{}, false
	}
	ratio := tunnelMbit / underlayMbit
	sev := finding.Warning
	if ratio < 0.5 {
		sev = finding.Critical
	}
	dev := display(link.Name)
	return finding.Finding{
		ID: catalog.ThroughputShaperCap, Severity: sev, Host: host, Interface: link.Name,
		Title: fmt.Sprintf("A %s cap on %s holds the tunnel's %s to %s Mbit/s while the path carries %.0f", sh.Qdisc, dev, dir, trimFloat(sh.RateMbit), underlayMbit),
		Detail: "The tunnel's sending interface is shaped below what the link under it carries, so the tunnel can go no faster " +
			"whatever else is fixed. A cap set against collapse cycles or drops elsewhere outlives them: once those are fixed, " +
			"raise it to the path's rate (the remote users' case raised its wg0 cap from 150 to 450 Mbit/s after its buffer fix) " +
			"or remove it.",
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "tc qdisc", Key: sh.Qdisc + " rate on " + dev, Value: trimFloat(sh.RateMbit) + " Mbit/s"}.Of(sh.RateMbit, finding.Mbits),
			finding.Evidence{Source: "bench", Key: dir + " tunnel", Value: fmt.Sprintf("%.1f Mbit/s", tunnelMbit),
				Threshold: fmt.Sprintf("< %.0f%% of the cap", capReached*100)}.Of(tunnelMbit, finding.Mbits),
			finding.Evidence{Source: "bench", Key: dir + " underlay", Value: fmt.Sprintf("%.1f Mbit/s", underlayMbit),
				Threshold: fmt.Sprintf("< %.2fx the cap", capExceeded)}.Of(underlayMbit, finding.Mbits),
		},
		Fixes: shaperCapFixes(link.Name, *sh, underlayMbit),
	}, true
}

// capAbove is a round rate at or above what the path carried: the cap it
// proposes stays out of the path's way.
func capAbove(mbit float64) int64 {
	step := 10.0
	if mbit < 100 {
		step = 1
	}
	return int64(math.Ceil(mbit/step) * step)
}

// shaperCapFixes raise the cap to the path's rate: a tbf through the tbf-cap
// remedy (it keeps the old one for its undo), cake and htb by the commands
// the user reads and runs (htb's class ids are the user's own).
func shaperCapFixes(dev string, sh facts.Shaper, underlayMbit float64) []finding.Fix {
	rate := fmt.Sprintf("%dmbit", capAbove(underlayMbit))
	desc := fmt.Sprintf("Raise %s's %s cap from %s to %s, the path's rate, or remove it", display(dev), sh.Qdisc, trimFloat(sh.RateMbit)+"mbit", rate)
	switch sh.Qdisc {
	case "tbf":
		r, err := remedy.TBF(dev, rate)
		return fixes(desc, r, err)
	case "cake":
		return []finding.Fix{{Description: desc, Commands: []string{shell.Join("tc", "qdisc", "change", "dev", dev, "root", "cake", "bandwidth", rate)}}}
	case "htb":
		parent, _, _ := strings.Cut(sh.Class, ":")
		return []finding.Fix{{
			Description: desc + " (the rate and ceil of its root class " + sh.Class + ")",
			Commands:    []string{shell.Join("tc", "class", "change", "dev", dev, "parent", parent+":", "classid", sh.Class, "htb", "rate", rate, "ceil", rate)},
		}}
	}
	return nil
}
