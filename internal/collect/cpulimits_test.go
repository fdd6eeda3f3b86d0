package collect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/testutil"
)

// cgroupFiles maps each file a case's cgroup levels need to its recording
// under testdata/collect/cgroup/NAME (by file name, for the level given);
// levels without a recording read as missing, as on a host without them.
func cgroupFiles(t *testing.T, name string, levels map[string]string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for dir, sub := range levels {
		entries, err := os.ReadDir(testutil.Testdata("collect", "cgroup", name, sub))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if b, err := os.ReadFile(testutil.Testdata("collect", "cgroup", name, sub, e.Name())); err == nil {
				out[dir+"/"+e.Name()] = b
			}
		}
	}
	return out
}

func readCgprocs(t *testing.T, name string) cgView {
	t.Helper()
	b, err := os.ReadFile(testutil.Testdata("collect", "cgroup", name, "cgprocs"))
	if err != nil {
		t.Fatal(err)
	}
	return parseCgroupProcs(string(b))
}

func TestCPULimitsFrom(t *testing.T) {
	t.Run("v1 recorded: a busy loop at 0.2 CPU, throttled in 29 of 33 periods", func(t *testing.T) {
		v := readCgprocs(t, "v1")
		files := cgroupFiles(t, "v1", map[string]string{"/sys/fs/cgroup/cpu/wgperf-h4rec": "quota", "/sys/fs/cgroup/cpu": "root"})
		got := cpuLimitsFrom(v, files)
		want := []facts.CPULimit{{Process: "iperf3", PID: 24632, Version: 1, Cgroup: "/wgperf-h4rec", Dir: "/sys/fs/cgroup/cpu/wgperf-h4rec",
			QuotaUsec: 20000, PeriodUsec: 100000, Periods: 33, Throttled: 29, ThrottledUsec: 1407930}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("lab recorded: wireguard-go at 5% of a CPU, read from inside its namespace", func(t *testing.T) {
		v := readCgprocs(t, "lab-v1")
		files := cgroupFiles(t, "lab-v1", map[string]string{"/proc/5779/root/sys/fs/cgroup/cpu/wgl-h4rec-cpu": "quota", "/proc/5779/root/sys/fs/cgroup/cpu": "root"})
		got := cpuLimitsFrom(v, files)
		want := []facts.CPULimit{{Process: "h4wgperf", PID: 5863, Interface: "wg-h4rec-a", Version: 1, Cgroup: "/wgl-h4rec-cpu", Dir: "/sys/fs/cgroup/cpu/wgl-h4rec-cpu",
			QuotaUsec: 5000, PeriodUsec: 100000, Periods: 35, Throttled: 32, ThrottledUsec: 3493489}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("v2: the tightest quota of the cgroup and its ancestors binds", func(t *testing.T) {
		v := readCgprocs(t, "v2")
		files := cgroupFiles(t, "v2", map[string]string{
			"/sys/fs/cgroup/system.slice/docker-3f2a9c81d0e4aa.scope": "container",
			"/sys/fs/cgroup/system.slice":                             "slice",
		})
		got := cpuLimitsFrom(v, files)
		want := []facts.CPULimit{{Process: "wireguard-go", PID: 2087, Interface: "wg0", Version: 2, Cgroup: "/system.slice/docker-3f2a9c81d0e4aa.scope",
			Dir: "/sys/fs/cgroup/system.slice/docker-3f2a9c81d0e4aa.scope", QuotaUsec: 50000, PeriodUsec: 100000, Periods: 900, Throttled: 812, ThrottledUsec: 40255281}}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("(-want +got)\n%s", d)
		}
	})
	t.Run("no quota anywhere: no limit", func(t *testing.T) {
		v := readCgprocs(t, "v1")
		if got := cpuLimitsFrom(v, cgroupFiles(t, "v1", map[string]string{"/sys/fs/cgroup/cpu/wgperf-h4rec": "root"})); len(got) != 0 {
			t.Errorf("got %+v", got)
		}
	})
}

// Paths and names from the host that are not what the kernel prints are
// dropped, never read.
func TestParseCgroupProcsRejectsForeignText(t *testing.T) {
	v := parseCgroupProcs("proc 7 wg0 wireguard-go\ncg 7 0::/a/../../etc\nproc 8 bad/name x\nproc 9 wg1 boringtun\ncg 9 0::/ok\n" +
		"via /proc/1/root/../x\nmount 41 31 0:38 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n")
	if len(v.procs) != 2 || v.via != "" {
		t.Fatalf("procs %+v via %q", v.procs, v.via)
	}
	if l := v.levels(v.procs[0]); len(l) != 0 {
		t.Errorf("a path with .. gave levels %+v", l)
	}
	if l := v.levels(v.procs[1]); len(l) != 2 || l[0].dir != filepath.Join("/sys/fs/cgroup", "ok") || l[1].dir != "/sys/fs/cgroup" {
		t.Errorf("levels %+v", l)
	}
}
