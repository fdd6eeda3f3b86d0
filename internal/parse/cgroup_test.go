package parse

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCgroupFiles(t *testing.T) {
	// Recorded cgroup v1 files (testdata/collect/cgroup/v1/quota).
	q, err := ParseCgroupInt(bytes.NewReader(readTestdata(t, "cgroup/v1/quota/cpu.cfs_quota_us")))
	if err != nil || q != 20000 {
		t.Errorf("cfs_quota_us = %d, %v", q, err)
	}
	if q, err := ParseCgroupInt(bytes.NewReader(readTestdata(t, "cgroup/v1/root/cpu.cfs_quota_us"))); err != nil || q != -1 {
		t.Errorf("root cfs_quota_us = %d, %v", q, err)
	}
	stat, err := ParseCPUStat(bytes.NewReader(readTestdata(t, "cgroup/v1/quota/cpu.stat")))
	want := map[string]uint64{"nr_periods": 33, "nr_throttled": 29, "throttled_time": 1407930391, "nr_bursts": 0, "burst_time": 0}
	if d := cmp.Diff(want, stat); err != nil || d != "" {
		t.Errorf("cpu.stat: %v (-want +got)\n%s", err, d)
	}
	for in, want := range map[string][2]int64{"50000 100000\n": {50000, 100000}, "max 100000\n": {-1, 100000}} {
		q, p, err := ParseCPUMax(strings.NewReader(in))
		if err != nil || q != want[0] || p != want[1] {
			t.Errorf("cpu.max %q = %d %d, %v", in, q, p, err)
		}
	}
	for _, bad := range []string{"", "max", "0 100000", "50000 0", "-5 100000", "50000 100000 7"} {
		if _, _, err := ParseCPUMax(strings.NewReader(bad)); err == nil {
			t.Errorf("cpu.max %q: no error", bad)
		}
	}
}

func TestParseCgroupMountsAndMembership(t *testing.T) {
	mounts, err := ParseCgroupMounts(strings.NewReader("31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n" +
		"32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n" +
		"41 31 0:38 /docker/abc /sys/fs/cgroup/my\\040cg rw - cgroup2 cgroup2 rw\n"))
	want := []CgroupMount{
		{Version: 1, Root: "/", MountPoint: "/sys/fs/cgroup/cpu,cpuacct", Options: []string{"rw", "cpu", "cpuacct"}},
		{Version: 2, Root: "/docker/abc", MountPoint: "/sys/fs/cgroup/my cg", Options: []string{"rw"}},
	}
	if d := cmp.Diff(want, mounts); err != nil || d != "" {
		t.Errorf("mounts: %v (-want +got)\n%s", err, d)
	}
	ms, err := ParseProcCgroup(strings.NewReader("2:cpu,cpuacct:/docker/abc\n0::/system.slice/x.service\n"))
	wantMs := []CgroupMembership{{Hierarchy: 2, Controllers: []string{"cpu", "cpuacct"}, Path: "/docker/abc"}, {Hierarchy: 0, Path: "/system.slice/x.service"}}
	if d := cmp.Diff(wantMs, ms); err != nil || d != "" {
		t.Errorf("memberships: %v (-want +got)\n%s", err, d)
	}
	for _, bad := range []string{"x::/a", "0:/a", "0::relative"} {
		if _, err := ParseProcCgroup(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseCgroup(f *testing.F) {
	addCorpus(f, "cgroup/*/*/cpu.*", "cgroup/*/cgprocs")
	f.Fuzz(func(t *testing.T, b []byte) {
		if ms, err := ParseProcCgroup(bytes.NewReader(b)); err == nil {
			for _, m := range ms {
				if !strings.HasPrefix(m.Path, "/") {
					t.Errorf("path %q", m.Path)
				}
			}
		}
		if q, p, err := ParseCPUMax(bytes.NewReader(b)); err == nil && (p <= 0 || q == 0 || q < -1) {
			t.Errorf("cpu.max %d %d", q, p)
		}
		_, _ = ParseCgroupMounts(bytes.NewReader(b))
		_, _ = ParseCPUStat(bytes.NewReader(b))
	})
}
