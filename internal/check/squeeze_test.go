package check

import (
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/remedy"
)

// TestSoftirqBudget runs on a snapshot of a guest (Debian's 6.1 kernel,
// kernel WireGuard) collected right after a 4-stream transfer through a lab
// tunnel with net.core.netdev_budget at 16: receive processing stopped 2367
// times with packets waiting, one per 105 packets.
func TestSoftirqBudget(t *testing.T) {
	g := loadSnapshot(t, "guest-budget16-local.json")
	keys := func(fs []finding.Finding) []string {
		var out []string
		for _, x := range fs[0].Fixes {
			if x.Action != nil && x.Action.Kind == remedy.KindSysctl {
				out = append(out, x.Action.Params["key"]+"="+x.Action.Params["value"])
			}
		}
		return out
	}
	scale := func(processed uint64) func(s *facts.Snapshot) {
		return func(s *facts.Snapshot) {
			s.Softnet[0].Processed, s.Softnet[1].Processed = processed/2, processed/2
		}
	}
	runCases(t, &softirqBudget, []checkCase{
		{name: "budget 16, one squeeze per 105 packets", snap: g, want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if fs[0].Title != "Receive processing ran out of budget 2367 times (one per 105 packets)" {
				t.Errorf("title %q", fs[0].Title)
			}
			if got := strings.Join(keys(fs), " "); got != "net.core.netdev_budget=600 net.core.netdev_budget_usecs=16000" {
				t.Errorf("fixes %s", got)
			}
		}},
		{name: "one squeeze per 5,000 packets: a note", snap: with(t, g, scale(2367*5000)), want: sev(info)},
		{name: "one per 20,000", snap: with(t, g, scale(2367*20000))},
		{name: "fewer than 1000 squeezes", snap: with(t, g, func(s *facts.Snapshot) { s.Softnet[0].TimeSqueeze, s.Softnet[1].TimeSqueeze = 500, 100 })},
		{name: "in a child namespace the budget is the host's", snap: with(t, g, func(s *facts.Snapshot) {
			delete(s.Sysctls, "net.core.netdev_budget")
			delete(s.Sysctls, "net.core.netdev_budget_usecs")
		}), want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
			if len(keys(fs)) != 0 || !strings.HasPrefix(fs[0].Fixes[0].Commands[0], "sysctl net.core.netdev_budget net.core.netdev_budget_usecs") {
				t.Errorf("fixes %+v", fs[0].Fixes)
			}
		}},
		{name: "a large budget already: doubled", snap: with(t, g, func(s *facts.Snapshot) { s.Sysctls["net.core.netdev_budget"] = "1000" }),
			want: sev(warning), assert: func(t *testing.T, fs []finding.Finding) {
				if got := keys(fs)[0]; got != "net.core.netdev_budget=2000" {
					t.Errorf("fix %s", got)
				}
			}},
		{name: "softnet not collected", snap: with(t, g, func(s *facts.Snapshot) {
			s.Softnet = nil
			s.Notes = append(s.Notes, facts.Note{Source: "/proc/net/softnet_stat", Message: "permission denied"})
		}), skip: true},
	})
}
