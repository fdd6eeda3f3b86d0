package collect

import (
	"context"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/facts"
	"github.com/wgperf/wgperf/internal/parse"
	"github.com/wgperf/wgperf/internal/shell"
	"github.com/wgperf/wgperf/internal/target"
)

// cpuLimitSource finds the processes whose CPU quota matters to the tunnel:
// each process holding a TUN (a userspace WireGuard: wireguard-go,
// boringtun..., named by the interface in its TUN descriptor's fdinfo) and
// iperf3, with their cgroups and the host's cgroup mounts. Their quotas and
// counters are read in one more round trip (readCPULimits), once the
// cgroups' directories are known.
var cpuLimitSource = source{
	cmds:     []shellCmd{{"cgprocs", cgroupProcsScript}},
	assemble: func(*collector, map[string]*fileRead) {}, // read after the batches (cpuLimits)
}

// cgroupProcsScript prints "proc PID IFACE COMM" ("-" for no interface),
// "cg PID LINE" per line of the process's /proc/PID/cgroup, "via PREFIX" and
// "mount LINE" per cgroup line of mountinfo. Only processes in the shell's
// network namespace count: the others serve another host's tunnel (a lab's
// other node, a container's). "ip netns exec" mounts a private /sys that
// hides the cgroup mounts: the shell's parent (wgperf, an ssh session)
// still sees them, through /proc/PPID/root.
const cgroupProcsScript = `ns=$(readlink /proc/$$/ns/net)
cgp() { [ "$(readlink /proc/$1/ns/net 2>/dev/null)" = "$ns" ] || return 0; printf 'proc %s %s %s\n' "$1" "$2" "$(cat /proc/$1/comm 2>/dev/null)"; sed "s|^|cg $1 |" /proc/$1/cgroup 2>/dev/null; }
ls -l /proc/[0-9]*/fd 2>/dev/null | awk '/^\/proc\/[0-9]+\/fd:$/ { split($0, a, "/"); p = a[3] } / -> \/dev\/net\/tun$/ { print p, $(NF-2) }' |
while read -r p fd; do i=$(sed -n 's/^iff:[[:space:]]*//p' /proc/$p/fdinfo/$fd 2>/dev/null); [ -n "$i" ] && cgp "$p" "$i"; done
for f in $(grep -lx iperf3 /proc/[0-9]*/comm 2>/dev/null); do p=${f#/proc/}; cgp "${p%/comm}" -; done
m=/proc/self/mountinfo; via=
grep -qE ' - cgroup2? ' $m || { m=/proc/$PPID/mountinfo; via=/proc/$PPID/root; }
echo "via $via"; grep -E ' - cgroup2? ' $m | sed 's/^/mount /'; true`

// cgProcess is a process cgroupProcsScript found, with its cgroups.
type cgProcess struct {
	pid         int
	iface, comm string
	memberships []parse.CgroupMembership
}

// cgView is what the cgroup script saw: the processes, the cgroup mounts and
// the prefix under which their paths are read.
type cgView struct {
	procs  []cgProcess
	mounts []parse.CgroupMount
	via    string
}

// parseCgroupProcs reads cgroupProcsScript's output. Names and paths come
// from the host: an interface that is no interface name, a comm or path
// that is not one printable line is dropped.
func parseCgroupProcs(out string) cgView {
	var v cgView
	byPID := map[int]int{}
	cgLines := map[int][]string{}
	var mountLines []string
	for _, line := range strings.Split(out, "\n") {
		kind, rest, _ := strings.Cut(line, " ")
		switch kind {
		case "proc":
			f := strings.SplitN(rest, " ", 3)
			pid, err := strconv.Atoi(f[0])
			if len(f) < 3 || err != nil || pid <= 0 || shell.Line("comm", f[2]) != nil {
				continue
			}
			iface := f[1]
			if iface == "-" {
				iface = ""
			} else if shell.Iface(iface) != nil {
				continue
			}
			if _, dup := byPID[pid]; !dup {
				byPID[pid] = len(v.procs)
				v.procs = append(v.procs, cgProcess{pid: pid, iface: iface, comm: f[2]})
			}
		case "cg":
			p, l, _ := strings.Cut(rest, " ")
			if pid, err := strconv.Atoi(p); err == nil {
				cgLines[pid] = append(cgLines[pid], l)
			}
		case "via":
			v.via = rest
		case "mount":
			mountLines = append(mountLines, rest)
		}
	}
	if v.via != "" && !cleanPath(v.via) {
		v.via = ""
	}
	v.mounts, _ = parse.ParseCgroupMounts(strings.NewReader(strings.Join(mountLines, "\n")))
	for i := range v.procs {
		// A process that vanished meanwhile has no lines, hence no levels.
		v.procs[i].memberships, _ = parse.ParseProcCgroup(strings.NewReader(strings.Join(cgLines[v.procs[i].pid], "\n")))
	}
	return v
}

// cleanPath reports an absolute path as the kernel prints it: one printable
// line, no "." or ".." element, no doubled or trailing slash.
func cleanPath(p string) bool {
	return strings.HasPrefix(p, "/") && path.Clean(p) == p && shell.Line("path", p) == nil
}

// cgLevel is one cgroup directory whose quota may bind a process: its own
// or an ancestor's.
type cgLevel struct {
	version int
	cgroup  string // path in the hierarchy
	dir     string // its directory on the host
	read    string // where its files are read: dir, or dir seen through /proc/PPID/root
}

// levels are the cgroup directories of a process, its own first and then
// each ancestor's up to the mount's root, in every hierarchy that can limit
// CPU (cgroup v2, or a v1 hierarchy with the cpu controller).
func (v cgView) levels(p cgProcess) []cgLevel {
	var out []cgLevel
	for _, m := range p.memberships {
		if !cleanPath(m.Path) {
			continue
		}
		mnt, ok := v.mountFor(m)
		if !ok {
			continue
		}
		rel := m.Path
		if mnt.Root != "/" {
			if rel != mnt.Root && !strings.HasPrefix(rel, mnt.Root+"/") {
				continue // the process's cgroup is outside the mounted subtree
			}
			rel = strings.TrimPrefix(rel, mnt.Root)
		}
		for cg, r := m.Path, rel; ; {
			dir := path.Join(mnt.MountPoint, r)
			out = append(out, cgLevel{version: mnt.Version, cgroup: cg, dir: dir, read: v.via + dir})
			if r == "/" || r == "" {
				break
			}
			cg, r = path.Dir(cg), path.Dir(r)
		}
	}
	return out
}

// mountFor is where m's hierarchy is mounted: the cgroup2 mount for the
// unified hierarchy, the v1 mount carrying the cpu controller for a v1 line
// that lists it; the mount of the whole hierarchy ("/") is preferred.
func (v cgView) mountFor(m parse.CgroupMembership) (parse.CgroupMount, bool) {
	var best parse.CgroupMount
	found := false
	for _, mnt := range v.mounts {
		switch {
		case !cleanPath(mnt.MountPoint) || !cleanPath(mnt.Root):
			continue
		case m.Hierarchy == 0 && mnt.Version == 2:
		case m.Hierarchy != 0 && mnt.Version == 1 && contains(m.Controllers, "cpu") && contains(mnt.Options, "cpu"):
		default:
			continue
		}
		if !found || (mnt.Root == "/" && best.Root != "/") {
			best, found = mnt, true
		}
	}
	return best, found
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// files are the files of a level that say its quota and throttling.
func (l cgLevel) files() []string {
	if l.version == 2 {
		return []string{l.read + "/cpu.max", l.read + "/cpu.stat"}
	}
	return []string{l.read + "/cpu.cfs_quota_us", l.read + "/cpu.cfs_period_us", l.read + "/cpu.stat"}
}

// limit reads a level's quota and counters from files; ok is false when
// the level has no quota (or its files could not be read).
func (l cgLevel) limit(files map[string][]byte) (facts.CPULimit, bool) {
	lim := facts.CPULimit{Version: l.version, Cgroup: l.cgroup, Dir: l.dir}
	var err error
	if l.version == 2 {
		b, ok := files[l.read+"/cpu.max"]
		if !ok {
			return lim, false
		}
		if lim.QuotaUsec, lim.PeriodUsec, err = parse.ParseCPUMax(strings.NewReader(string(b))); err != nil {
			return lim, false
		}
	} else {
		q, ok1 := files[l.read+"/cpu.cfs_quota_us"]
		p, ok2 := files[l.read+"/cpu.cfs_period_us"]
		if !ok1 || !ok2 {
			return lim, false
		}
		if lim.QuotaUsec, err = parse.ParseCgroupInt(strings.NewReader(string(q))); err != nil {
			return lim, false
		}
		if lim.PeriodUsec, err = parse.ParseCgroupInt(strings.NewReader(string(p))); err != nil || lim.PeriodUsec <= 0 {
			return lim, false
		}
	}
	if lim.QuotaUsec <= 0 {
		return lim, false // "max" or -1: no quota here
	}
	if stat, err := parse.ParseCPUStat(strings.NewReader(string(files[l.read+"/cpu.stat"]))); err == nil {
		lim.Periods, lim.Throttled = stat["nr_periods"], stat["nr_throttled"]
		lim.ThrottledUsec = stat["throttled_usec"]
		if l.version == 1 {
			lim.ThrottledUsec = stat["throttled_time"] / 1000 // nanoseconds in v1
		}
	}
	return lim, true
}

// cpuLimitsFrom is, for each process of v with a quota, the tightest quota
// among its cgroups and their ancestors (the one that binds it), read from
// files. It is pure.
func cpuLimitsFrom(v cgView, files map[string][]byte) []facts.CPULimit {
	var out []facts.CPULimit
	for _, p := range v.procs {
		var best facts.CPULimit
		found := false
		for _, l := range v.levels(p) {
			lim, ok := l.limit(files)
			if !ok {
				continue
			}
			if !found || lim.QuotaUsec*best.PeriodUsec < best.QuotaUsec*lim.PeriodUsec {
				best, found = lim, true
			}
		}
		if found {
			best.Process, best.PID, best.Interface = p.comm, p.pid, p.iface
			out = append(out, best)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Interface > out[j].Interface }) // tunnels first
	return out
}

// readCPULimits reads the quota files of every cgroup level of v's
// processes, in one round trip.
func readCPULimits(ctx context.Context, t target.Target, v cgView) []facts.CPULimit {
	var paths []string
	for _, p := range v.procs {
		for _, l := range v.levels(p) {
			paths = append(paths, l.files()...)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	return cpuLimitsFrom(v, ReadFiles(ctx, t, paths...))
}

// cpuLimits fills the snapshot's CPU limits after the batches.
func (c *collector) cpuLimits(ctx context.Context) {
	out, ok := c.output("cgprocs", "cgroup CPU quotas")
	if !ok {
		return
	}
	c.snap.CPULimits = readCPULimits(ctx, c.t, parseCgroupProcs(out))
}

// CPULimits reads, on its own, the CPU quotas and throttling counters of
// t's userspace WireGuard processes and iperf3 (two round trips): doctor
// reads them again after its bench, to count the throttling during it.
func CPULimits(ctx context.Context, t target.Target) ([]facts.CPULimit, error) {
	res, err := runBatch(ctx, t, []shellCmd{{"cgprocs", cgroupProcsScript}})
	if err != nil {
		return nil, err
	}
	return readCPULimits(ctx, t, parseCgroupProcs(res["cgprocs"].Out)), nil
}
