package fleet

import (
	"strings"

	"github.com/wgperf/wgperf/internal/target"
)

// TargetGroup is one entry of Prometheus' file_sd (and http_sd) format:
// targets sharing labels.
type TargetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

// PrometheusTargets gives the hosts as Prometheus file_sd target groups of
// the exporter's /probe: one group per host, its target spec as the one
// target (what /probe?target= takes, once relabelled to __param_target), and
// plain labels: wgperf_host (the inventory's name for it), wgperf_group (the
// first group it is listed in) and wgperf_groups (all of them, between
// commas: ",berlin,routers,", Prometheus' way of listing in one label), the
// last two only for a host in a group. A host given twice is kept once.
//
// The exporter reaches a target with its own user's ssh settings: unreached
// names the hosts whose inventory variables set ssh settings of their own
// (a key, ssh arguments, become), which /probe does not get.
func PrometheusTargets(hosts []Host) (groups []TargetGroup, unreached []string) {
	groups = []TargetGroup{}
	seen := map[target.Key]bool{}
	for _, h := range hosts {
		if seen[h.Target.Key()] {
			continue
		}
		seen[h.Target.Key()] = true
		labels := map[string]string{"wgperf_host": h.Name}
		if len(h.Groups) > 0 {
			labels["wgperf_group"] = h.Groups[0]
			labels["wgperf_groups"] = "," + strings.Join(h.Groups, ",") + ","
		}
		groups = append(groups, TargetGroup{Targets: []string{h.Target.String()}, Labels: labels})
		if !h.SSH.IsZero() {
			unreached = append(unreached, h.Name)
		}
	}
	return groups, unreached
}
