package lab

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/wgperf/wgperf/internal/parse"
)

// cpuQuotaPeriodUsec is the period of the lab's CPU quota: the default of
// docker --cpus and systemd's CPUQuota=.
const cpuQuotaPeriodUsec = 100000

// limitCPU moves node a's WireGuard process into a cgroup of its own whose
// quota is pct percent of one CPU (Config.CPUQuotaPct), as docker --cpus or
// systemd's CPUQuota= would: cgroup v1's cpu controller where it is mounted,
// else cgroup v2 (whose root must offer the cpu controller to its children).
// A quota is a share of one CPU, so the tunnel falls as far below the
// underlay on a fast machine as on a slow one.
func (l *Lab) limitCPU(pid, pct int) error {
	if pct <= 0 || pct > 100 {
		return fmt.Errorf("CPU quota %d%%: want a percent of one CPU in 1..100", pct)
	}
	if pid <= 0 {
		return errors.New("a CPU quota needs userspace WireGuard: the kernel module has no process to limit")
	}
	root, version, err := cpuControllerRoot()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, cgroupName(l.Config.Name))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("CPU quota: %w", err)
	}
	quota := strconv.Itoa(pct * cpuQuotaPeriodUsec / 100)
	writes := [][2]string{{"cpu.cfs_period_us", strconv.Itoa(cpuQuotaPeriodUsec)}, {"cpu.cfs_quota_us", quota}}
	if version == 2 {
		writes = [][2]string{{"cpu.max", quota + " " + strconv.Itoa(cpuQuotaPeriodUsec)}}
	}
	writes = append(writes, [2]string{"cgroup.procs", strconv.Itoa(pid)})
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil {
			return fmt.Errorf("CPU quota: %w", err)
		}
	}
	return nil
}

// CPUQuotaDir is the cgroup directory of lab name's CPU quota, "" when it has
// none: the lab's scenario lifts the quota there as a user would.
func CPUQuotaDir(name string) string {
	root, _, err := cpuControllerRoot()
	if err != nil {
		return ""
	}
	dir := filepath.Join(root, cgroupName(name))
	if _, err := os.Stat(dir); err != nil {
		return ""
	}
	return dir
}

// cgroupName is the lab's cgroup, beside the host's own at the root.
func cgroupName(lab string) string { return Prefix + lab + "-cpu" }

// cpuControllerRoot is where the cpu controller's hierarchy is mounted in
// wgperf's mount namespace: a v1 mount carrying cpu, else a cgroup2 mount
// whose root offers cpu to its children.
func cpuControllerRoot() (string, int, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	mounts, err := parse.ParseCgroupMounts(f)
	if err != nil {
		return "", 0, err
	}
	for _, m := range mounts {
		if m.Version == 1 && m.Root == "/" && containsWord(m.Options, "cpu") {
			return m.MountPoint, 1, nil
		}
	}
	for _, m := range mounts {
		b, err := os.ReadFile(filepath.Join(m.MountPoint, "cgroup.subtree_control"))
		if m.Version == 2 && m.Root == "/" && err == nil && containsWord(strings.Fields(string(b)), "cpu") {
			return m.MountPoint, 2, nil
		}
	}
	return "", 0, errors.New("CPU quota: no cgroup hierarchy with the cpu controller (cgroup v1 cpu, or v2 with +cpu in the root's cgroup.subtree_control)")
}

func containsWord(list []string, w string) bool {
	for _, x := range list {
		if x == w {
			return true
		}
	}
	return false
}

// removeCPUQuota removes lab name's cgroup once its process is gone (Down
// killed it; the kernel empties the cgroup a moment later).
func removeCPUQuota(name string) error {
	dir := CPUQuotaDir(name)
	if dir == "" {
		return nil
	}
	var err error
	for range 50 {
		if err = os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CPU quota cgroup %s: %w", dir, err)
}
