package remedy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wgperf/wgperf/internal/finding"
)

// Fix kinds of this file, with their params (all strings).
const (
	// KindIRQAffinity moves one interrupt to other CPUs: irq (its number),
	// name (its action as /proc/interrupts names it, e.g. "eth0-rx-1", so a
	// number reused after a reboot is refused), cpus (a CPU list, "2" or "0-3").
	KindIRQAffinity = "irq-affinity"
)

var (
	irqNumberRE = regexp.MustCompile(`^[0-9]{1,6}$`)
	cpuListRE   = regexp.MustCompile(`^[0-9]{1,4}(-[0-9]{1,4})?(,[0-9]{1,4}(-[0-9]{1,4})?){0,63}$`)
	// irqNameRE is what a NIC driver calls its queues' interrupts:
	// "eth0-TxRx-3", "virtio2-input.0", "mlx5_comp3@pci:0000:3b:00.0".
	irqNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:@+-]{0,63}$`)
)

// irqAffinity pins interrupt irq (named name) to the CPUs of a list.
type irqAffinity struct{ irq, name, cpus string }

// IRQAffinity moves interrupt irq, which /proc/interrupts calls name, to the
// CPUs of cpus (a CPU list as smp_affinity_list takes it: "2", "0-3", "1,3").
func IRQAffinity(irq, name, cpus string) (Remedy, error) {
	if !irqNumberRE.MatchString(irq) {
		return nil, fmt.Errorf("interrupt %q: want its number", irq)
	}
	if !irqNameRE.MatchString(name) {
		return nil, fmt.Errorf("interrupt name %q: want a NIC queue's name as /proc/interrupts prints it", name)
	}
	if !cpuListRE.MatchString(cpus) {
		return nil, fmt.Errorf("CPU list %q: want CPU numbers and ranges, e.g. 2 or 0-3", cpus)
	}
	a := &irqAffinity{irq: irq, name: name, cpus: cpus}
	return shown{a, []string{WriteSysfs(a.path(), cpus)}, []finding.ConfigSnippet{{
		// An interrupt's number may change at the next boot; its name does not.
		Path:  "a boot script (after the NIC is up), or irqbalance's policy script; stop irqbalance from moving it back: IRQBALANCE_ARGS=--banirq=" + irq + " in /etc/default/irqbalance",
		Lines: []string{fmt.Sprintf(`for d in /proc/irq/*/%s; do echo %s > "${d%%/*}/smp_affinity_list"; done`, name, cpus)},
	}}}, nil
}

func parseIRQAffinity(p params) (Remedy, error) {
	var v [3]string
	for i, k := range []string{"irq", "name", "cpus"} {
		var err error
		if v[i], err = p.get(k); err != nil {
			return nil, err
		}
	}
	return IRQAffinity(v[0], v[1], v[2])
}

func (a *irqAffinity) path() string { return "/proc/irq/" + a.irq + "/smp_affinity_list" }

func (a *irqAffinity) Kind() string { return KindIRQAffinity }

func (a *irqAffinity) Params() map[string]string {
	return map[string]string{"irq": a.irq, "name": a.name, "cpus": a.cpus}
}

func (a *irqAffinity) Describe() string {
	return fmt.Sprintf("move interrupt %s (%s) to CPUs %s so one CPU does not take every interrupt of the NIC", a.irq, a.name, a.cpus)
}

// Plan checks that the interrupt still serves the queue it was found on
// (/proc/irq/N holds a directory of its action's name), reads its CPU list
// and writes the wanted one; the undo writes back the list it read.
func (a *irqAffinity) Plan(ctx context.Context, env *Env) (Step, error) {
	out, err := env.T.Run(ctx, "ls", "/proc/irq/"+a.irq)
	if err != nil {
		return Step{}, fmt.Errorf("%s: no interrupt %s", env.T, a.irq)
	}
	if !slices.Contains(strings.Fields(string(out)), a.name) {
		return Step{}, fmt.Errorf("%s: interrupt %s no longer serves %s (a reboot renumbers interrupts): run wgperf diagnose again", env.T, a.irq, a.name)
	}
	cur, err := env.T.ReadFile(ctx, a.path())
	if err != nil {
		return Step{}, err
	}
	now := strings.TrimSpace(string(cur))
	st := Step{Kind: a.Kind(), Summary: fmt.Sprintf("interrupt %s (%s) CPUs: %s -> %s", a.irq, a.name, now, a.cpus),
		Notes: []string{"runtime only, and irqbalance (where it runs) may move it back: ban it there (IRQBALANCE_ARGS=--banirq=" + a.irq + ")"}}
	if sameCPUList(now, a.cpus) {
		st.Done = true
		return st, nil
	}
	if !cpuListRE.MatchString(now) {
		return Step{}, fmt.Errorf("%s: %s reads %q, not a CPU list", env.T, a.path(), now)
	}
	st.Commands = []string{WriteSysfs(a.path(), a.cpus)}
	st.Undo = []string{WriteSysfs(a.path(), now)}
	return st, nil
}

// sameCPUList compares CPU lists as sets: "0-2" is "0,1,2".
func sameCPUList(a, b string) bool {
	x, ok1 := expandCPUList(a)
	y, ok2 := expandCPUList(b)
	return ok1 && ok2 && slices.Equal(x, y)
}

// expandCPUList lists the CPUs of "0-2,5" in order, without repeats.
func expandCPUList(s string) ([]int, bool) {
	if !cpuListRE.MatchString(strings.TrimSpace(s)) {
		return nil, false
	}
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		from, _ := strconv.Atoi(lo)
		to := from
		if isRange {
			to, _ = strconv.Atoi(hi)
		}
		for c := from; c <= to && c-from < 4096; c++ {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), true
}
