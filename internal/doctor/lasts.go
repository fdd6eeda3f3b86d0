package doctor

import (
	"context"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/fix"
	"github.com/wgperf/wgperf/internal/target"
)

// runtimeOnly is what a plan says when its fix cannot outlast a reboot on
// its host: the first "runtime only: ..." note of a step that changes
// something, "" when every change lasts (or nothing changes). It is pure.
func runtimeOnly(p *fix.Plan) string {
	if p == nil {
		return ""
	}
	for _, it := range p.Items {
		if it.Step.Done {
			continue
		}
		for _, n := range it.Step.Notes {
			if strings.HasPrefix(n, "runtime only") {
				return n
			}
		}
	}
	return ""
}

// noteLasts plans the verdict's automatic fix on its host, as "wgperf fix"
// would before applying it (reading the host, changing nothing), and notes
// on the verdict when the plan says it cannot last a reboot there. A host
// that cannot be planned on says nothing: the fix command's own plan will.
func (r *Report) noteLasts(ctx context.Context, c *Config) {
	v := r.Verdict()
	if v == nil || v.Command == "" {
		return
	}
	host := c.targetOf(v.Finding.Host)
	if host == nil {
		return
	}
	res, err := fix.Run(ctx, fix.Request{Host: fix.Host{T: host, Root: c.FixRoot}, Findings: r.findingsOn(v.Finding.Host), Only: []finding.ID{v.Finding.ID}})
	if err != nil {
		return
	}
	v.RuntimeOnly = runtimeOnly(res.Plan)
}

// findingsOn are the findings of the host named host.
func (r *Report) findingsOn(host target.Spec) []finding.Finding {
	var mine []finding.Finding
	for _, f := range r.Findings {
		if f.Host.Same(host) {
			mine = append(mine, f)
		}
	}
	return mine
}
