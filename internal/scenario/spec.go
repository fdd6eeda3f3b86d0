package scenario

import (
	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/lab"
)

// This file holds what a scenario is: its fields, the commands it runs on
// the lab's nodes and the probes it names; catalog.go lists the scenarios.

// Command runs on one lab node.
type Command struct {
	Node string
	Argv []string
}

// on is shorthand for a Command.
func on(node string, argv ...string) Command { return Command{Node: node, Argv: argv} }

// Probe names an active measurement a scenario needs: a targeted probe doctor
// must choose from the evidence (passive facts alone cannot prove a black
// hole), or the load a case needs on the network before anyone looks (flows).
type Probe string

const (
	ProbeMTU       Probe = Probe(catalog.ProbeMTU)       // path MTU search and MSS stepping from A to B
	ProbeICMPBurst Probe = Probe(catalog.ProbeICMPBurst) // the multi-WAN router's one-shot vs persistent pings from A
	ProbeFlows     Probe = "flows"                       // many short connections from A to B
	// ProbeUDPOutside is doctor's UDP run outside the tunnel at the rate TCP
	// carried there (a path that polices UDP).
	ProbeUDPOutside Probe = Probe(catalog.ProbeUDPOutside)
	// ProbeLongRun is doctor's 30-second and parallel-stream runs, and
	// ProbeShaping the tbf sweep that follows collapse cycles.
	ProbeLongRun Probe = Probe(catalog.ProbeLongRun)
	ProbeShaping Probe = Probe(catalog.ProbeShaping)
)

// The cases the scenarios reproduce (README: Cases wgperf automates), named
// as the finding catalog names them.
const (
	caseMultiWAN    = catalog.CaseMultiWAN
	casePMTUD       = catalog.CasePMTUD
	caseTuning      = catalog.CaseTuning
	caseECMP        = catalog.CaseECMP
	caseRemoteUsers = catalog.CaseRemoteUsers
)

// Scenario is one real case in the lab.
type Scenario struct {
	Name    string
	Case    string // the real investigation it reproduces, in the words of the README's case list
	Symptom string // what a user would notice
	Lab     lab.Config
	// HostSysctls are initial-namespace values the case needs (child namespaces
	// mirror or cannot set them); Run sets them and restores the exact old values.
	HostSysctls map[string]string
	// RateScaled lists HostSysctls keys whose values are queue lengths chosen
	// for the catalog's underlay rate: at a lower sized rate Run shrinks them
	// in proportion (rounded, at least 1), so the queue overflows as often
	// on a slower machine as the case's did.
	RateScaled []string
	Break      []Command // run after the lab is up: the pathology
	// BreaksUnderlay says the breakage slows the link under the tunnel too
	// (a route onto the slow uplink, loss on every packet): the underlay is
	// measured before it, as the level the fix must bring the tunnel back
	// to. Otherwise doctor's own underlay runs serve.
	BreaksUnderlay bool
	// Probes are the targeted probes doctor must run on this case, and the
	// load (ProbeFlows) the scenario puts on the network before doctor looks.
	Probes []Probe
	// Recheck plays the probes again after the fix, as doctor's plan ran
	// them on the broken lab (doctor.Report.Replay), which must silence Expect:
	// for fixes that remove the cause the probes saw rather than work around it
	// (an ICMP limit does not cost throughput, so only its probe can prove it).
	Recheck bool
	// Expect is the finding ID that must be reported ("" for none: healthy, ecmp).
	Expect finding.ID
	// Also lists IDs the breakage legitimately causes besides Expect.
	Also []finding.ID
	// FixIDs are the findings whose fixes are applied, on every host that
	// reported them (default: Expect alone).
	FixIDs []finding.ID
	// FixOn, when set, names the nodes those findings (and so their fixes)
	// must be on, and only those: a fault of one direction is fixed by its
	// sender.
	FixOn []string
	// Client and Server are the nodes the tunnel measurement runs between
	// (default "a" to "b"; LAN hosts measure host to host across both sites).
	Client, Server string
	// PathFix, when set, is what fixes the case instead of wgperf fix: the
	// cause lies on the path, not the hosts (a carrier's UDP policer), so
	// doctor names it and proposes nothing to apply; the scenario plays the
	// path's own change (another uplink, the carrier lifting the policer)
	// and measures again.
	PathFix []Command
	// Thorough runs doctor with --thorough: the long run whatever the short
	// bench showed (a cycle as slow as a few bench runs together shows in no
	// one of them).
	Thorough bool
	// UplinkRoutes runs doctor with --uplink-routes: the tunnel measured
	// over each uplink of a multi-WAN client, which the play requires.
	UplinkRoutes bool
	// ECMP, when > 1, is the number of tunnels the fix spreads flows over (seed
	// 003); the measurement uses parallel streams to site B's network.
	ECMP int
	// MinSpread, for a fix measured by parallel flows around the tunnel
	// (catalog.Spread: a bond's hash), is the least gain they must show;
	// it judges the fix instead of the tunnel's ratio.
	MinSpread float64
	// UploadOnly judges only the upload, for breakages of A's sender alone:
	// the download is still measured and reported.
	UploadOnly bool
	// Steady also judges the after-fix upload by its steadiness: no
	// collapse, per-second rates within shaping.StableCV (a cap below a
	// knee trades peak for steadiness, so the ratio alone would not prove it).
	Steady bool
	// Unavailable is the fix's own refusal (a part of its error) where this
	// machine's kernel lacks what the fix needs: the scenario then expects
	// that honest answer in place of the fix, judges doctor's verdict alone,
	// and says so; where the kernel has it, the fix is applied as usual.
	Unavailable string
	// Latency also judges the after-fix bench's round trip under load: the
	// expected finding (a cost only the bench's pings show) must be gone.
	Latency bool
	// NotOn names the WireGuard implementations the case cannot happen on,
	// and why: lab run skips it there and says so.
	NotOn map[lab.Implementation]string
	// KernelLane says why make test plays this case on kernel WireGuard too
	// (the module's own code changes what doctor sees or fixes: DF on outer
	// packets, its endpoint route cached per peer, its stream under loss). Under
	// QEMU's emulator a case costs about a minute, so make test's kernel lane
	// plays these and make test-kernel the whole catalog.
	KernelLane string
	// KernelFix: the kernel lane plays this case's fix and its measurement
	// too, not doctor's verdict alone: make test has no other kernel that
	// can (the bonding driver is the guest's only).
	KernelFix bool
	// KernelMbit is the kernel lane's underlay rate for this case where it
	// is not the lane's own (kernelRateMbit in its test).
	KernelMbit int
	// On is what the case looks like on one implementation where that
	// differs from the fields above (the kernel module clears DF on its outer
	// packets and has no socket queue): Run plays For(implementation).
	On map[lab.Implementation]Outcome
	// Latent: see Outcome.Latent (set by For).
	Latent bool
	// Via names the lab nodes doctor is told the tunnel runs through
	// (doctor --via): a hub whose legs it measures.
	Via []string
	// IdleProof, when > 0, is how long (seconds) the tunnel idles after the
	// fix before A must still reach B through it: a fix for a NAT that
	// forgets idle mappings is proven by an idle longer than a mapping lasts.
	IdleProof int
	// MinRatio is the after-fix tunnel/underlay ratio the scenario must reach
	// (default 0.9); MinScaling applies to ECMP instead, MinSpread to a fix
	// measured by parallel flows around the tunnel.
	MinRatio   float64
	MinScaling float64
}

// Outcome is what a case looks like on one WireGuard implementation: its
// non-zero fields replace the scenario's.
type Outcome struct {
	Why     string // why it differs, for the story
	Symptom string
	Expect  finding.ID
	Also    []finding.ID
	FixIDs  []finding.ID
	Probes  []Probe
	// Latent says the expected finding costs what a short bench may not
	// show (a fragmenting tunnel keeps most of its rate): doctor may call the
	// tunnel healthy as long as it reports Expect; if it calls it slow,
	// Expect must rank first.
	Latent bool
}

// For is sc as it plays on implementation impl: On's outcome for it, if
// any, over the scenario's own.
func (sc Scenario) For(impl lab.Implementation) Scenario {
	o, ok := sc.On[impl]
	if !ok {
		return sc
	}
	if o.Symptom != "" {
		sc.Symptom = o.Symptom
	}
	if o.Expect != "" {
		sc.Expect = o.Expect
	}
	if o.Also != nil {
		sc.Also = o.Also
	}
	if o.FixIDs != nil {
		sc.FixIDs = o.FixIDs
	}
	if o.Probes != nil {
		sc.Probes = o.Probes
	}
	sc.Latent = o.Latent
	return sc
}
