package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/shell"
)

// flowHashingModes are the bonding modes that send each flow by one slave
// (the kernel's bonding.rst: 802.3ad and balance-xor by xmit_hash_policy,
// balance-tlb and balance-alb by their load balancing). balance-rr sprays
// packets over every slave and active-backup already reports one slave's
// speed, so their sysfs speed is the ceiling as it stands.
var flowHashingModes = map[string]bool{"802.3ad": true, "balance-xor": true, "balance-tlb": true, "balance-alb": true}

// hashedBond is a bond whose slaves carry one flow each, with the speed one
// flow can reach.
type hashedBond struct {
	mode      string
	slaves    []string // with the speed each reports
	speeds    []int
	slaveMbit int  // the fastest slave: one flow's ceiling
	estimated bool // no slave reported a speed: the bond's speed over its slaves
}

// hashedBondOf reads l as a flow-hashing bond, false when it is not one.
func hashedBondOf(s *facts.Snapshot, l *facts.Link) (hashedBond, bool) {
	if l.Bond == nil {
		return hashedBond{}, false
	}
	mode, _, _ := strings.Cut(l.Bond.Mode, " ")
	if !flowHashingModes[mode] || len(l.Bond.Slaves) == 0 {
		return hashedBond{}, false
	}
	b := hashedBond{mode: mode}
	for _, name := range l.Bond.Slaves {
		if sl := findLink(s, name); sl != nil && sl.SpeedMbit > 0 {
			b.slaves, b.speeds = append(b.slaves, name), append(b.speeds, sl.SpeedMbit)
			b.slaveMbit = max(b.slaveMbit, sl.SpeedMbit)
		}
	}
	if b.slaveMbit == 0 {
		// The slaves of an 802.3ad aggregator share one speed; without theirs,
		// the bond's sum shared out is the best guess.
		b.slaveMbit, b.estimated = l.SpeedMbit/len(l.Bond.Slaves), true
	}
	return b, b.slaveMbit > 0
}

// bondSpeedFinding is net.link-speed for a bond that hashes flows: one
// tunnel's ceiling is one slave's speed, the bond's sum is for several.
func bondSpeedFinding(s *facts.Snapshot, l *facts.Link, b hashedBond, tcpOver func(mbit int) float64) finding.Finding {
	one, all := tcpOver(b.slaveMbit), tcpOver(l.SpeedMbit)
	per := fmt.Sprintf("%d Mbit/s", b.slaveMbit)
	if b.estimated {
		per = fmt.Sprintf("about %d Mbit/s (the slaves report no speed: the bond's shared over %d)", b.slaveMbit, len(l.Bond.Slaves))
	}
	f := finding.Finding{
		ID:        catalog.NetLinkSpeed,
		Severity:  finding.Info,
		Host:      hostOf(s),
		Interface: l.Name,
		Title: fmt.Sprintf("%s bonds %d Mbit/s over %d slaves (%s): one tunnel carries at most about %.0f Mbit/s of TCP, several flows about %.0f",
			l.Name, l.SpeedMbit, len(l.Bond.Slaves), b.mode, one, all),
		Detail: fmt.Sprintf("The bond %s reports %d Mbit/s, the sum of its slaves, but in %s mode it sends each flow by one slave (%s), "+
			"and a WireGuard tunnel is one UDP flow: one address and port pair, whatever it carries inside. One tunnel over it reaches "+
			"about %.0f Mbit/s of TCP (the ECMP case's tunnel over a 3×1G bond carried 874-893 Mbit/s); the bond's sum, about %.0f Mbit/s, "+
			"is for several flows: tunnels on different ports with a layer3+4 hash, and ECMP over them.",
			l.Name, l.SpeedMbit, b.mode, per, one, all),
		Evidence: []finding.Evidence{
			finding.Evidence{Source: "/sys/class/net/" + l.Name + "/speed", Key: l.Name + " speed (its slaves' sum)", Value: strconv.Itoa(l.SpeedMbit) + " Mbit/s"}.Of(float64(l.SpeedMbit), finding.Mbits),
			{Source: "/sys/class/net/" + l.Name + "/bonding/mode", Key: "mode", Value: l.Bond.Mode,
				Threshold: "one flow rides one slave (balance-rr alone spreads a flow's packets)"},
		},
		Fixes: []finding.Fix{{
			Description: "See what each slave negotiated and which aggregator it is in",
			Commands:    []string{shell.Join("cat", "/proc/net/bonding/"+l.Name)},
		}},
	}
	for i, name := range b.slaves {
		f.Evidence = append(f.Evidence, finding.Evidence{Source: "/sys/class/net/" + name + "/speed", Key: name + " speed (one flow's ceiling)",
			Value: strconv.Itoa(b.speeds[i]) + " Mbit/s"}.Of(float64(b.speeds[i]), finding.Mbits))
	}
	return f
}

// BondUplink is a bond that hashes flows under a host's tunnel, with the
// TCP one tunnel over one of its slaves and several over all of them carry
// by the link speeds the slaves report.
type BondUplink struct {
	Name      string
	Mode      string
	Policy    string // xmit_hash_policy's name ("layer2", "layer3+4")
	Slaves    int
	SlaveMbit int     // one flow's ceiling (0: the slaves report no speed)
	BondMbit  int     // the bond's speed: its slaves' sum
	OneTCP    float64 // TCP through one tunnel over one slave (0 when unknown)
	AllTCP    float64 // TCP through tunnels over every slave (0 when unknown)
}

// BondUnder is the flow-hashing bond of at least two slaves the host's
// tunnel leaves by: dev when given (the interface a bench saw it take),
// else the first of its endpoint routes' and default routes' devices that
// is one. ok is false when there is none.
func BondUnder(s *facts.Snapshot, dev string) (b BondUplink, ok bool) {
	devs := sortedKeys(uplinks(s))
	if dev != "" {
		devs = []string{dev}
	}
	for _, d := range devs {
		l := findLink(s, d)
		if l == nil {
			continue
		}
		hb, ok := hashedBondOf(s, l)
		if !ok || len(l.Bond.Slaves) < 2 {
			continue
		}
		b = BondUplink{Name: l.Name, Mode: hb.mode, Slaves: len(l.Bond.Slaves), SlaveMbit: hb.slaveMbit, BondMbit: l.SpeedMbit}
		if f := strings.Fields(l.Bond.XmitHashPolicy); len(f) > 0 {
			b.Policy = f[0]
		}
		// A veth's 10000 Mbit/s is made up (a lab's slaves): no ceiling.
		if slices.ContainsFunc(l.Bond.Slaves, func(n string) bool { sl := findLink(s, n); return sl != nil && virtualKinds[sl.Kind] }) {
			b.SlaveMbit, b.BondMbit = 0, 0
		} else if !hb.estimated && l.SpeedMbit > hb.slaveMbit {
			b.OneTCP, b.AllTCP = tunnelTCP(l, hb.slaveMbit), tunnelTCP(l, l.SpeedMbit)
		}
		return b, true
	}
	return BondUplink{}, false
}
