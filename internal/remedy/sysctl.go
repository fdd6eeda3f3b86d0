package remedy

import (
	"context"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"

	"github.com/wgperf/wgperf/internal/shell"
)

// Fix kinds of this file, with their params (all strings).
const (
	KindSysctl     = "sysctl"             // key, value
	KindCongestion = "congestion-control" // algorithm (e.g. "bbr"); adds fq as default_qdisc on kernels < 4.20
)

// SysctlConf is the file wgperf owns for persistent sysctls.
const SysctlConf = "/etc/sysctl.d/90-wgperf.conf"

// sysctl sets one kernel parameter now and in SysctlConf.
type sysctl struct{ key, value string }

// Sysctl sets key to value now and in SysctlConf. The value may hold several
// words ("4096 131072 67108864"); tabs are folded to spaces as sysctl prints them.
func Sysctl(key, value string) (Remedy, error) {
	s, err := newSysctl(key, value)
	if err != nil {
		return nil, err
	}
	return shown{s, []string{s.command()}, []finding.ConfigSnippet{{Path: SysctlConf, Lines: []string{s.confLine()}}}}, nil
}

func newSysctl(key, value string) (*sysctl, error) {
	if shell.SysctlName(key) != nil || len(key) > 128 {
		return nil, fmt.Errorf("sysctl name %q is not valid", key)
	}
	v := normSysctl(value)
	if shell.SysctlValue(v) != nil {
		return nil, fmt.Errorf("sysctl %s value %q is not valid", key, value)
	}
	return &sysctl{key: key, value: v}, nil
}

func parseSysctl(p params) (Remedy, error) {
	key, err := p.get("key")
	if err != nil {
		return nil, err
	}
	value, err := p.get("value")
	if err != nil {
		return nil, err
	}
	return Sysctl(key, value)
}

func (a *sysctl) Params() map[string]string { return map[string]string{"key": a.key, "value": a.value} }

func (a *sysctl) command() string  { return shell.Join("sysctl", "-w", a.key+"="+a.value) }
func (a *sysctl) confLine() string { return a.key + " = " + a.value }

func (a *sysctl) Kind() string { return KindSysctl }

// Describe names no file: the plan picks it on the host (SysctlConf, or
// SysctlLateConf where a file read later sets the key, or none: runtime only).
func (a *sysctl) Describe() string {
	return fmt.Sprintf("set %s = %s now and at boot (in /etc/sysctl.d: the plan names the file, or says runtime only)", a.key, a.value)
}

// normSysctl folds the tabs sysctl prints between words ("4096\t131072") to spaces.
func normSysctl(v string) string { return strings.Join(strings.Fields(v), " ") }

func (a *sysctl) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "sysctl", "-n", a.key)
	if err != nil {
		return Step{}, fmt.Errorf("read %s: %w", a.key, err)
	}
	now := normSysctl(string(out))
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("%s: %s -> %s", a.key, now, a.value)}
	if now != a.value {
		st.Commands = []string{shell.Join("sysctl", "-w", a.key+"="+a.value)}
		st.Undo = []string{shell.Join("sysctl", "-w", a.key+"="+now)}
	}
	if n, err := strconv.ParseInt(a.value, 10, 64); err == nil {
		if err := reachRunningSockets(ctx, env, a.key, n, &st); err != nil {
			return Step{}, err
		}
	}
	var boot SysctlBoot
	if l, err := readSysctlListing(ctx, env); err != nil {
		boot = SysctlBoot{File: SysctlConf, Note: fmt.Sprintf("persists unless a file read after %s sets %s: the plan could not list the host's sysctl files (%v)", SysctlConf, a.key, err)}
	} else {
		boot = ResolveSysctl(l, env.Platform, a.key, a.value)
	}
	if boot.File != "" {
		fc, err := env.change(ctx, env.Path(boot.File), func(old []byte, _ bool) ([]byte, error) {
			return setConfLine(old, a.key, a.key+" = "+a.value, sysctlHeader(boot.File)), nil
		})
		if err != nil {
			return Step{}, err
		}
		if fc != nil {
			st.Files = append(st.Files, *fc)
		}
	}
	st.Done = len(st.Commands) == 0 && len(st.Files) == 0
	if !st.Done || boot.File == "" {
		st.Notes = append(st.Notes, boot.Note)
	}
	return st, nil
}

// sysctlHeader heads a new sysctl file of wgperf's.
func sysctlHeader(file string) string {
	h := "# Written by wgperf fix; remove a line (or this file) to undo at next boot.\n"
	if file == SysctlLateConf {
		h += "# Keys a file that sorts after " + path.Base(SysctlConf) + " sets otherwise (sysctl.d(5): the last assignment wins).\n"
	}
	return h
}

// setConfLine replaces the "key = ..." line of a key=value file, or appends it
// (after header when the file is new or empty).
func setConfLine(old []byte, key, line, header string) []byte {
	lines := splitLines(string(old))
	found := false
	for i, l := range lines {
		k, _, ok := strings.Cut(l, "=")
		if ok && strings.TrimSpace(k) == key {
			lines[i] = line
			found = true
		}
	}
	if !found {
		if len(lines) == 0 && header != "" {
			lines = append(lines, strings.TrimSuffix(header, "\n"))
		}
		lines = append(lines, line)
	}
	return []byte(strings.Join(lines, "\n") + "\n")
}

// congestion switches TCP congestion control (BBR for tunnels with loss), and
// on kernels before 4.20, where BBR needs pacing from fq, also sets
// net.core.default_qdisc=fq.
type congestion struct{ algorithm string }

// ModulesConf is the file wgperf owns for modules loaded at boot.
const ModulesConf = "/etc/modules-load.d/90-wgperf.conf"

// Congestion switches TCP congestion control to alg. loadModule shows the
// modprobe (and its modules-load.d line) for a host that does not list alg
// as available, or may not. kernel is the host's release, "" when unknown: on
// kernels before 4.20 BBR needs the fq qdisc for pacing, so the display sets
// it there, and names the condition when the release is unknown. The plan
// decides both from the host itself.
func Congestion(alg string, loadModule bool, kernel string) (Remedy, error) {
	a, err := newCongestion(alg)
	if err != nil {
		return nil, err
	}
	cc := &sysctl{key: "net.ipv4.tcp_congestion_control", value: a.algorithm}
	fq := &sysctl{key: "net.core.default_qdisc", value: "fq"}
	var cmds []string
	if loadModule {
		cmds = append(cmds, shell.Join("modprobe", "tcp_"+a.algorithm))
	}
	cmds = append(cmds, cc.command())
	conf := []string{cc.confLine()}
	switch before, known := KernelBefore(kernel, 4, 20); {
	case known && before:
		cmds = append(cmds, fq.command())
		conf = append(conf, fq.confLine())
	case !known:
		cmds = append(cmds, "# on kernels before 4.20 also: "+fq.command())
		conf = append(conf, "# on kernels before 4.20 also: "+fq.confLine())
	}
	cfg := []finding.ConfigSnippet{{Path: SysctlConf, Lines: conf}}
	if loadModule {
		cfg = append(cfg, finding.ConfigSnippet{Path: ModulesConf, Lines: []string{"tcp_" + a.algorithm}})
	}
	return shown{a, cmds, cfg}, nil
}

func newCongestion(alg string) (*congestion, error) {
	if !congRE.MatchString(alg) {
		return nil, fmt.Errorf("congestion control %q is not valid", alg)
	}
	return &congestion{algorithm: alg}, nil
}

var congRE = regexp.MustCompile(`^[a-z0-9_]{1,16}$`)

func parseCongestion(p params) (Remedy, error) {
	alg, err := p.get("algorithm")
	if err != nil {
		return nil, err
	}
	return Congestion(alg, true, "")
}

func (a *congestion) Params() map[string]string { return map[string]string{"algorithm": a.algorithm} }

func (a *congestion) Kind() string { return KindCongestion }

func (a *congestion) Describe() string {
	return fmt.Sprintf("use %s congestion control (fq as default qdisc on kernels before 4.20)", a.algorithm)
}

func (a *congestion) Plan(ctx context.Context, env *Env) (Step, error) {
	st := Step{Kind: a.Kind()}
	avail, err := env.T.Run(ctx, "sysctl", "-n", "net.ipv4.tcp_available_congestion_control")
	if err != nil {
		return Step{}, err
	}
	if !contains(strings.Fields(string(avail)), a.algorithm) {
		// Loading a module is harmless to leave behind, so undo does not unload it.
		st.Commands = append(st.Commands, shell.Join("modprobe", "tcp_"+a.algorithm))
		st.Notes = append(st.Notes, fmt.Sprintf("loads module tcp_%s (left loaded on rollback)", a.algorithm))
	}
	sub, err := (&sysctl{key: "net.ipv4.tcp_congestion_control", value: a.algorithm}).Plan(ctx, env)
	if err != nil {
		return Step{}, err
	}
	st.Summary = sub.Summary
	st.merge(sub)
	if !env.KernelAtLeast(4, 20) {
		q, err := (&sysctl{key: "net.core.default_qdisc", value: "fq"}).Plan(ctx, env)
		if err != nil {
			return Step{}, err
		}
		st.Summary += "; " + q.Summary + " (kernel " + env.Kernel + " < 4.20)"
		st.merge(q)
		if len(q.Commands) > 0 {
			st.Notes = append(st.Notes, "net.core.default_qdisc reaches only qdiscs created after it: "+
				"the sending interface keeps its root qdisc until it is re-created (tc qdisc replace dev DEV root fq gives it fq now)")
		}
	}
	if len(st.Files) == 0 && len(st.Commands) == 0 {
		st.Done = true
	}
	if len(st.Commands) > 0 {
		st.Notes = append(st.Notes, "connections open now keep their congestion control until they reconnect; new ones (the verification's too) use "+a.algorithm)
	}
	return st, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// UDPBuffer is the socket buffer limit (25 MiB) wgperf suggests against UDP
// buffer drops: enough for several hundred Mbit/s of WireGuard through
// scheduling hiccups.
const UDPBuffer = 26214400
