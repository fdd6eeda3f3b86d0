package check

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/finding"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/target/targettest"
	"github.com/wgperf/wgperf/internal/testutil"
)

// recordedV1Limit is what testdata/collect/cgroup/v1 holds (as a tunnel's
// process, which it was not): a busy loop in a cgroup v1 with cpu.cfs_quota_us 20000 and cpu.cfs_period_us 100000 (0.2
// CPU), throttled in 29 of its 33 periods (throttled_time 1407930391 ns).
var recordedV1Limit = facts.CPULimit{Process: "wireguard-go", PID: 4242, Interface: "wg0", Version: 1, Cgroup: "/wgperf-h4rec",
	Dir: "/sys/fs/cgroup/cpu/wgperf-h4rec", QuotaUsec: 20000, PeriodUsec: 100000, Periods: 33, Throttled: 29, ThrottledUsec: 1407930}

func withLimits(ls ...facts.CPULimit) *facts.Snapshot {
	s := &facts.Snapshot{Host: targettest.Spec("ssh:vps")}
	s.CPULimits = ls
	return s
}

func TestCPUQuota(t *testing.T) {
	rarely := recordedV1Limit
	rarely.Periods, rarely.Throttled = 900, 40 // 4.4%: a quota it seldom reaches
	startup := recordedV1Limit
	startup.Periods, startup.Throttled = 12, 9 // a burst at start-up: too few to judge
	someThrottling := recordedV1Limit
	someThrottling.Periods, someThrottling.Throttled = 900, 120
	docker := facts.CPULimit{Process: "wireguard-go", Interface: "wg0", Version: 2, Cgroup: "/system.slice/docker-3f2a9c81d0e4aa.scope",
		Dir: "/sys/fs/cgroup/system.slice/docker-3f2a9c81d0e4aa.scope", QuotaUsec: 50000, PeriodUsec: 100000, Periods: 900, Throttled: 812, ThrottledUsec: 40255281}
	unit := facts.CPULimit{Process: "boringtun", Interface: "wg1", Version: 2, Cgroup: "/system.slice/wg-quick@wg1.service",
		Dir: "/sys/fs/cgroup/system.slice/wg-quick@wg1.service", QuotaUsec: 25000, PeriodUsec: 100000, Periods: 4210, Throttled: 610, ThrottledUsec: 4021180}
	iperf := facts.CPULimit{Process: "iperf3", Version: 1, Cgroup: "/bench", Dir: "/sys/fs/cgroup/cpu/bench", QuotaUsec: 10000, PeriodUsec: 100000, Periods: 60, Throttled: 58}
	runCases(t, &cpuQuota, []checkCase{
		{name: "recorded lab: wireguard-go at 5% of a CPU, throttled in 32 of 36 periods", snap: loadSnapshot(t, "lab-cpuquota-a.json"), want: []finding.Severity{finding.Critical},
			assert: func(t *testing.T, fs []finding.Finding) {
				want := "h4wgperf (serving wg-h4rec-a) is limited to 0.05 CPU by its cgroup /wgl-h4rec-cpu (cpu.cfs_quota_us 5000, cpu.cfs_period_us 100000): " +
					"it was throttled in 32 of 36 periods since the cgroup was made"
				if fs[0].Title != want || fs[0].Interface != "wg-h4rec-a" {
					t.Errorf("title %q\nwant  %q", fs[0].Title, want)
				}
			}},
		{name: "recorded cgroup v2 (Debian's 6.1 kernel in the lab's guest): wireguard-go at 5% of a CPU, throttled in 85 of 102 periods", snap: loadSnapshot(t, "guest-v2-cpuquota-a.json"), want: []finding.Severity{finding.Critical},
			assert: func(t *testing.T, fs []finding.Finding) {
				if want := "(cpu.max 5000 100000)"; !strings.Contains(fs[0].Title, want) || !strings.Contains(fs[0].Title, "85 of 102 periods") {
					t.Errorf("title %q: want the v2 file %s and 85 of 102 periods", fs[0].Title, want)
				}
			}},
		{name: "recorded lab, healthy: no quota", snap: loadSnapshot(t, "lab-healthy-a.json")},
		{name: "recorded v1 quota hit in 29 of 33 periods", snap: withLimits(recordedV1Limit), want: []finding.Severity{finding.Critical},
			assert: func(t *testing.T, fs []finding.Finding) {
				for _, want := range []string{"wireguard-go (serving wg0) is limited to 0.2 CPU", "/wgperf-h4rec", "cpu.cfs_quota_us 20000, cpu.cfs_period_us 100000", "29 of 33 periods"} {
					if !strings.Contains(fs[0].Title, want) {
						t.Errorf("title %q lacks %q", fs[0].Title, want)
					}
				}
				if got := fs[0].Fixes[0].Commands; len(got) != 1 || !strings.HasPrefix(got[0], "echo 40000 > /sys/fs/cgroup/cpu/wgperf-h4rec/cpu.cfs_quota_us") {
					t.Errorf("v1 fix = %q", got)
				}
				if len(fs[0].Fixes) != 2 || !strings.Contains(fs[0].Fixes[1].Description, "kernel's WireGuard") {
					t.Errorf("no kernel module fix: %+v", fs[0].Fixes)
				}
			}},
		{name: "docker --cpus 0.5 on cgroup v2", snap: withLimits(docker), want: []finding.Severity{finding.Critical},
			assert: func(t *testing.T, fs []finding.Finding) {
				cmds := strings.Join(fs[0].Fixes[0].Commands, "\n")
				for _, want := range []string{"docker update --cpus 1 3f2a9c81d0e4aa", `echo '100000 100000' > /sys/fs/cgroup/system.slice/docker-3f2a9c81d0e4aa.scope/cpu.max`} {
					if !strings.Contains(cmds, want) {
						t.Errorf("fix lacks %q:\n%s", want, cmds)
					}
				}
				if strings.Contains(cmds, "systemctl") {
					t.Errorf("a docker scope is no unit to set a property on:\n%s", cmds)
				}
			}},
		{name: "systemd CPUQuota=25% on a unit, warning", snap: withLimits(unit), want: []finding.Severity{finding.Warning},
			assert: func(t *testing.T, fs []finding.Finding) {
				if got := fs[0].Fixes[0].Commands[0]; got != "systemctl set-property wg-quick@wg1.service CPUQuota=50%" {
					t.Errorf("fix = %q", got)
				}
			}},
		{name: "iperf3 limited: no kernel module fix", snap: withLimits(iperf), want: []finding.Severity{finding.Critical},
			assert: func(t *testing.T, fs []finding.Finding) {
				if len(fs[0].Fixes) != 1 {
					t.Errorf("a test tool has no tunnel to move to the kernel: %+v", fs[0].Fixes)
				}
			}},
		{name: "some throttling", snap: withLimits(someThrottling), want: []finding.Severity{finding.Warning}},
		{name: "quota seldom reached", snap: withLimits(rarely)},
		{name: "throttled only at start-up", snap: withLimits(startup)},
		{name: "no quota", snap: withLimits()},
	})
}

// recordedStat is /proc/stat as recorded in the lab (steal 483 of 85,790 ticks).
func recordedStat(t *testing.T) []facts.CPUTimes {
	b, err := os.ReadFile(testutil.Testdata("collect", "proc", "stat"))
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := parse.ParseProcStat(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return cpus
}

func TestCPUSteal(t *testing.T) {
	stolen := func(user, idle, steal uint64) *facts.Snapshot {
		return &facts.Snapshot{Host: targettest.Spec("ssh:vps"), CPU: []facts.CPUTimes{{CPU: "cpu", User: user, Idle: idle, Steal: steal}}}
	}
	runCases(t, &cpuSteal, []checkCase{
		{name: "a third stolen", snap: stolen(4000, 2900, 3100), want: []finding.Severity{finding.Critical}},
		{name: "8% stolen", snap: stolen(4000, 5200, 800), want: []finding.Severity{finding.Warning}},
		{name: "recorded lab host: 0.6% stolen", snap: &facts.Snapshot{Host: targettest.Spec("netns:a"), CPU: recordedStat(t)}},
		{name: "too little time to judge", snap: stolen(100, 100, 300)},
		{name: "no /proc/stat", snap: &facts.Snapshot{Host: targettest.Spec("ssh:vps")}},
	})
}

func TestCPUStealDuringBench(t *testing.T) {
	before := []facts.CPUTimes{{CPU: "cpu", User: 90000, Idle: 900000, Steal: 100}}
	after := []facts.CPUTimes{{CPU: "cpu", User: 91000, Idle: 901000, Steal: 600}} // 500 of 2,500 ticks: 20%
	f, ok := CPUStealFinding(targettest.Spec("ssh:vps"), before, after, "during the bench")
	if !ok || f.Severity != finding.Critical || !strings.Contains(f.Title, "20% of this machine's CPU time during the bench") {
		t.Fatalf("got %v %+v", ok, f)
	}
	// The same steal since boot is diluted by a long idle uptime.
	if _, ok := CPUStealFinding(targettest.Spec("ssh:vps"), nil, after, ""); ok {
		t.Fatal("0.06% since boot fired")
	}
}
