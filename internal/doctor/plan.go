package doctor

import (
	"slices"
	"strings"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/probe/bench"
)

// ProbePlan is one targeted probe and the evidence that called for it.
type ProbePlan struct {
	Probe   catalog.Probe `json:"probe"`
	Why     string        `json:"why"`
	Targets []string      `json:"targets,omitempty"` // icmp-burst: the addresses health checks ping
	// Interface is the uplink icmp-burst pings through: the one whose ICMP
	// limit the health checks' replies meet.
	Interface string `json:"interface,omitempty"`
	// Directions are the slow directions udp-outside measures.
	Directions []string `json:"directions,omitempty"`
}

// Healthy reports whether the tunnel is healthy: every measured direction at
// or above the expected ratio, no stall, no critical finding, and no warning
// the ratio cannot show (a stale route, an ICMP limit). A warning the bench
// would have shown but did not (a CPU near its limit while the tunnel keeps
// up) is a latent risk, listed but not judged slow. It is pure.
func Healthy(fs []finding.Finding, m Measured) bool {
	if !m.Benched || m.Stalled || len(m.UnderlayFailed) > 0 {
		return false
	}
	for _, d := range []bench.DirRate{m.Up, m.Down} {
		if d.Underlay <= 0 || d.Ratio() < m.Expected {
			return false
		}
	}
	for _, f := range fs {
		if f.Severity == finding.Critical || (f.Severity == finding.Warning && hidden(f.ID)) {
			return false
		}
	}
	return true
}

// PlanProbes picks the targeted probes the evidence calls for; it is pure.
// The MTU search runs when a tunnel run stalled or collapsed or an MTU
// finding exists (without a server, whenever there is a peer endpoint: a DF
// search to it is the path check one end can make); the shaping sweep when
// throughput oscillates; neither on a healthy pair. icmp-burst runs whenever
// health checks are configured (mwan3 track_ip, banIP, an ICMP limit rule),
// healthy or not: a limiter that eats their replies costs nothing in a bench,
// only in the failovers it triggers.
//
// No probe runs while a host's connection tracking table is full: each probe
// sends new flows the kernel would drop, and their losses would prove nothing.
func PlanProbes(healthy bool, fs []finding.Finding, m Measured, rep *bench.Report, client *facts.Snapshot) []ProbePlan {
	var out []ProbePlan
	if slices.ContainsFunc(fs, refusesNewFlows) {
		return out
	}
	if why := mtuReason(fs, m, rep); !healthy && why != "" && (m.Benched || endpoint(client) != "") {
		out = append(out, ProbePlan{Probe: catalog.ProbeMTU, Why: why})
	}
	if why, targets := healthChecks(client); why != "" && len(targets) > 0 {
		out = append(out, ProbePlan{Probe: catalog.ProbeICMPBurst, Why: why, Targets: targets, Interface: limitedUplink(client)})
	}
	if dirs := udpOutsideDirections(fs, m); !healthy && len(dirs) > 0 {
		out = append(out, ProbePlan{Probe: catalog.ProbeUDPOutside, Directions: dirs,
			Why: "the tunnel falls short (" + strings.Join(dirs, ", ") + ") and nothing found explains it: a path that polices UDP is invisible to a TCP baseline"})
	}
	// A CPU quota or steal explains the collapses: no cap below them is a knee.
	if !healthy && m.Benched && !cpuLimited(fs) && slices.ContainsFunc(fs, func(f finding.Finding) bool { return doctorOf(f.ID).Calls == catalog.ProbeShaping }) {
		out = append(out, ProbePlan{Probe: catalog.ProbeShaping, Why: "throughput collapses periodically (throughput.oscillation): a tbf cap below the knee may hold steadier"})
	}
	return out
}

func mtuReason(fs []finding.Finding, m Measured, rep *bench.Report) string {
	if !m.Benched {
		return "no server to bench against: a DF search to the peer's endpoint is the path check one end can make"
	}
	if len(m.UnderlayFailed) > 0 {
		return underlayLine(m) + ": a hop that drops large packets stalls the hosts' own TCP too"
	}
	if m.Stalled {
		return "a bulk transfer through the tunnel stalled while the underlay carried traffic"
	}
	for _, f := range fs {
		if doctorOf(f.ID).Calls == catalog.ProbeMTU {
			return string(f.ID) + " reported: " + f.Title
		}
	}
	if rep != nil {
		for _, r := range rep.Runs {
			if r.Path == bench.PathTunnel && r.Stats.Collapses > 0 {
				if u := underlayOf(rep, r); u != nil && u.Stats.Collapses == 0 {
					return "large transfers collapse through the tunnel (" + r.Spec.String() + ") but not around it"
				}
			}
		}
	}
	return ""
}

func underlayOf(rep *bench.Report, t bench.Run) *bench.Run {
	return rep.UnderlayRun(t.Direction, t.Streams)
}

// maxHealthTargets bounds the icmp-burst targets: three are enough to show
// which replies a limiter eats, and each costs two rounds of pings.
const maxHealthTargets = 3

// healthChecks says whether the client runs health checks that an ICMP limit
// could sabotage, and which addresses they ping: mwan3's track_ip, or with
// banIP or an ICMP limit rule and no track_ip, the default gateways and the
// peer endpoints (what a health check would ping).
func healthChecks(s *facts.Snapshot) (string, []string) {
	if s == nil {
		return "", nil
	}
	var why string
	var targets []string
	if s.OpenWrt != nil {
		for k, v := range s.OpenWrt.Mwan3 {
			if strings.HasSuffix(k, ".track_ip") {
				targets = append(targets, strings.Fields(strings.ReplaceAll(v, "'", ""))...)
			}
		}
		slices.Sort(targets)
		if len(targets) > 0 {
			why = "mwan3 health checks ping " + strings.Join(targets, ", ")
		} else if len(s.OpenWrt.Banip) > 0 {
			why = "banIP is configured (it can rate-limit ICMP on the uplinks)"
		}
	}
	if why == "" {
		for _, r := range s.Firewall.Rules {
			if r.Limit != nil && (r.Protocol == "icmp" || r.Protocol == "icmpv6") {
				why = "an ICMP rate-limit rule is in " + r.Family + " " + r.Table + " " + r.Chain
				break
			}
		}
	}
	if why == "" {
		return "", nil
	}
	if len(targets) == 0 {
		for _, r := range s.Routes {
			if r.Dst == "default" && (r.Table == "main" || r.Table == "") && r.Gateway != "" {
				targets = append(targets, r.Gateway)
			}
		}
		for _, e := range s.Endpoints {
			if e.Endpoint != "" {
				targets = append(targets, e.Endpoint)
			}
		}
	}
	targets = unique(targets)
	if len(targets) > maxHealthTargets {
		targets = targets[:maxHealthTargets]
	}
	return why, targets
}

func unique(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// endpoint is the first peer endpoint of the snapshot's WireGuard interfaces.
func endpoint(s *facts.Snapshot) string {
	if s == nil {
		return ""
	}
	for _, e := range s.Endpoints {
		if e.Endpoint != "" {
			return e.Endpoint
		}
	}
	return ""
}

// limitedUplink is the interface an ICMP limit rule of the host matches
// arriving packets on ("" when none names one): the uplink whose health
// checks' replies it limits, which icmp-burst pings through.
func limitedUplink(s *facts.Snapshot) string {
	if s == nil {
		return ""
	}
	for _, r := range s.Firewall.Rules {
		if r.Limit != nil && (r.Protocol == "icmp" || r.Protocol == "icmpv6") && r.IIf != "" && !strings.ContainsAny(r.IIf, "*+") {
			return r.IIf
		}
	}
	return ""
}
