package doctor

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/catalog"
	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/target/targettest"
)

// A limit whose counters are as the lab's cpu-quota scenario read them
// before and after its bench (wireguard-go in a cgroup v1 at 0.05 CPU).
var (
	quotaBefore = facts.CPULimit{Process: "wgperf", PID: 31337, Interface: "wg-cpu-a", Version: 1, Cgroup: "/wgperf-lab-cpu-a",
		Dir: "/sys/fs/cgroup/cpu/wgperf-lab-cpu-a", QuotaUsec: 5000, PeriodUsec: 100000, Periods: 40, Throttled: 2, ThrottledUsec: 9000}
	quotaAfter = func() facts.CPULimit {
		l := quotaBefore
		l.Periods, l.Throttled, l.ThrottledUsec = 240, 171, 15012000
		return l
	}()
)

func TestThrottledDuring(t *testing.T) {
	fs := throttledDuring(targettest.Spec("netns:wgl-cpu-a"), []facts.CPULimit{quotaBefore}, []facts.CPULimit{quotaAfter})
	// 171-2 of 240-40 periods.
	if len(fs) != 1 || fs[0].Severity != finding.Critical || !strings.Contains(fs[0].Title, "throttled in 169 of 200 periods during the bench") {
		t.Fatalf("findings %+v", fs)
	}
	// Throttled long ago, not during the bench: nothing to say about it here.
	idle := quotaBefore
	idle.Periods, idle.Throttled = 600, 500
	idleAfter := idle
	idleAfter.Periods = 650
	if fs := throttledDuring(targettest.Spec("netns:wgl-cpu-a"), []facts.CPULimit{idle}, []facts.CPULimit{idleAfter}); len(fs) != 0 {
		t.Errorf("a quota not reached during the bench: %+v", fs)
	}
	// A process the bench started is judged by its cgroup's counters as they are.
	if fs := throttledDuring(targettest.Spec("netns:wgl-cpu-b"), nil, []facts.CPULimit{quotaAfter}); len(fs) != 1 || !strings.Contains(fs[0].Title, "since the cgroup was made") {
		t.Errorf("new process: %+v", fs)
	}
}

// The quota is the verdict, above the knee a cap sweep would have "proven",
// and no sweep is planned while it explains the collapses.
func TestCPUQuotaOutranksKnee(t *testing.T) {
	quota := throttledDuring(targettest.Spec("netns:wgl-cpu-a"), []facts.CPULimit{quotaBefore}, []facts.CPULimit{quotaAfter})
	knee := finding.Finding{ID: catalog.ThroughputCollapseKnee, Severity: finding.Warning, Host: targettest.Spec("netns:wgl-cpu-a"), Interface: "wg-cpu-a"}
	osc := finding.Finding{ID: catalog.ThroughputOscillation, Severity: finding.Warning, Host: targettest.Spec("netns:wgl-cpu-a")}
	m := measured("netns:wgl-cpu-a", "netns:wgl-cpu-b", 20, 190, 21, 190)
	cs := Rank([]finding.Finding{knee, osc, quota[0]}, m)
	if len(cs) == 0 || cs[0].Finding.ID != catalog.CPUQuotaThrottled {
		t.Fatalf("causes %v, want cpu.quota-throttled first", ids(cs))
	}
	plans := PlanProbes(false, []finding.Finding{osc, quota[0]}, m, nil, nil)
	for _, p := range plans {
		if p.Probe == catalog.ProbeShaping {
			t.Errorf("shaping sweep planned while a CPU quota explains the collapses: %+v", plans)
		}
	}
	if !cpuLimited(quota) || cpuLimited([]finding.Finding{knee, osc}) {
		t.Error("cpuLimited")
	}
}
