package parse

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CgroupMount is one cgroup hierarchy mounted on the host, as
// /proc/PID/mountinfo lists it.
type CgroupMount struct {
	Version    int      // 2 for cgroup2, 1 for cgroup
	Root       string   // the hierarchy's directory mounted there ("/" unless a subtree is)
	MountPoint string   // where it is mounted, e.g. /sys/fs/cgroup/cpu,cpuacct
	Options    []string // the super options: the v1 controllers ("cpu", "cpuacct") among them
}

// ParseCgroupMounts reads /proc/PID/mountinfo and returns its cgroup and
// cgroup2 mounts. A mountinfo line is "ID PARENT MAJ:MIN ROOT MOUNTPOINT
// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS"; paths escape spaces
// and backslashes in octal (\040).
func ParseCgroupMounts(r io.Reader) ([]CgroupMount, error) {
	var out []CgroupMount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 6 || sep < 0 || sep+3 >= len(f) {
			return nil, fmt.Errorf("mountinfo: malformed line %q", sc.Text())
		}
		m := CgroupMount{Root: unescapeMount(f[3]), MountPoint: unescapeMount(f[4]), Options: strings.Split(f[sep+3], ",")}
		switch f[sep+1] {
		case "cgroup2":
			m.Version = 2
		case "cgroup":
			m.Version = 1
		default:
			continue
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("mountinfo: %w", err)
	}
	return out, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CgroupMembership is one line of /proc/PID/cgroup: the process's cgroup in
// one hierarchy.
type CgroupMembership struct {
	Hierarchy   int      // 0 for the cgroup v2 (unified) hierarchy
	Controllers []string // v1: the hierarchy's controllers ("cpu", "cpuacct"); none for v2
	Path        string   // e.g. "/system.slice/wg-quick@wg0.service"
}

// ParseProcCgroup reads /proc/PID/cgroup: "HIERARCHY:CONTROLLERS:PATH" per
// line ("0::/path" for cgroup v2).
func ParseProcCgroup(r io.Reader) ([]CgroupMembership, error) {
	var out []CgroupMembership
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		id, rest, ok1 := strings.Cut(line, ":")
		ctl, path, ok2 := strings.Cut(rest, ":")
		n, err := strconv.Atoi(id)
		if !ok1 || !ok2 || err != nil || n < 0 || !strings.HasPrefix(path, "/") {
			return nil, fmt.Errorf("/proc/PID/cgroup: malformed line %q", line)
		}
		m := CgroupMembership{Hierarchy: n, Path: path}
		if ctl != "" {
			m.Controllers = strings.Split(ctl, ",")
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("/proc/PID/cgroup: %w", err)
	}
	return out, nil
}

// ParseCPUMax reads cgroup v2 cpu.max, "QUOTA PERIOD" in microseconds, QUOTA
// "max" for none: quota is -1 then.
func ParseCPUMax(r io.Reader) (quota, period int64, err error) {
	b, err := io.ReadAll(io.LimitReader(r, 256))
	if err != nil {
		return 0, 0, fmt.Errorf("cpu.max: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("cpu.max: want \"QUOTA PERIOD\", got %q", strings.TrimSpace(string(b)))
	}
	quota = -1
	if f[0] != "max" {
		if quota, err = strconv.ParseInt(f[0], 10, 64); err != nil || quota <= 0 {
			return 0, 0, fmt.Errorf("cpu.max: bad quota %q", f[0])
		}
	}
	if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
		return 0, 0, fmt.Errorf("cpu.max: bad period %q", f[1])
	}
	return quota, period, nil
}

// ParseCgroupInt reads a one-number cgroup v1 file (cpu.cfs_quota_us, -1 for
// none; cpu.cfs_period_us).
func ParseCgroupInt(r io.Reader) (int64, error) {
	b, err := io.ReadAll(io.LimitReader(r, 256))
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want one number, got %q", strings.TrimSpace(string(b)))
	}
	return n, nil
}

// ParseCPUStat reads a cgroup's cpu.stat, "KEY VALUE" per line (v2:
// usage_usec, nr_periods, nr_throttled, throttled_usec...; v1: nr_periods,
// nr_throttled, throttled_time in nanoseconds).
func ParseCPUStat(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("cpu.stat: malformed line %q", sc.Text())
		}
		n, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cpu.stat %s: bad number %q", f[0], f[1])
		}
		out[f[0]] = n
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("cpu.stat: %w", err)
	}
	return out, nil
}
